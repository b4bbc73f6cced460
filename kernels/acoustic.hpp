#pragma once
// Launch interface of the isotropic acoustic time step (DESIGN.md sections 3 and 5). Host code
// sees only these declarations; the kernels live in acoustic_*.cu.
//
// One step: pn = [2 p - (1 - s) pn + m L p] / (1 + s), with pn holding p^{n-1} on entry.
// Memory movement: read p, pn, m; write pn: 16 bytes per cell per step in fp32, 8 in fp16.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <array>

namespace seisrtm::kernels {

inline constexpr int kMaxRadius = 8;

// How the wavefields and the model are stored (solver.storage): fp32, or fp16 (IEEE binary16)
// with the arithmetic in fp32. In fp16 the fields hold p / s and the model m / s_m, s and s_m
// powers of two (the host picks them, solver/cuda_propagator.cpp); the step is linear in p, so
// it runs on p / s unchanged, and s_m is folded into the weights cx, cy, cz (exact: a power of
// two), which leaves the products m lap bit for bit those of the unscaled values.
enum class Storage { fp32, fp16 };
inline constexpr Storage kStorages[] = {Storage::fp32, Storage::fp16};
constexpr const char* storage_name(Storage s) {
  return s == Storage::fp16 ? "fp16" : "fp32";
}
constexpr int storage_bytes(Storage s) {
  return s == Storage::fp16 ? 2 : 4;
}

template <class T>
struct AcousticArgsT {
  const T* p = nullptr;           // p^n
  T* pn = nullptr;                // p^{n-1} on entry, p^{n+1} on exit
  const T* m = nullptr;           // v^2 dt^2
  const float* damp_x = nullptr;  // sigma dt / 2 per x index (1D)
  const float* damp_y = nullptr;
  const float* damp_z = nullptr;
  int nx = 0, ny = 0, nz = 0;
  long long sy = 0, sz = 0;  // strides in elements (rows padded for alignment)
  float cx[kMaxRadius + 1] = {}, cy[kMaxRadius + 1] = {}, cz[kMaxRadius + 1] = {};  // c_k / h^2
  int free_surface = 0;                                                             // p = 0 at z = 0, odd image above
  // Planes this launch computes, [z_lo, z_end()); the boundary conditions still refer to
  // [0, nz). A slab of a z decomposition computes its edge planes and its interior apart.
  int z_lo = 0, z_hi = -1;  // z_hi < 0: up to nz
  __host__ __device__ int z_end() const { return z_hi < 0 ? nz : z_hi; }
  // The order the tma kernel's blocks start in (kernels/acoustic_tma.cu): the tiles go in chunks
  // of chunk_rows tile rows, and each chunk runs its z blocks in turn. 0 = whole layers (every
  // tile of z block 0, then of z block 1, ...); -1 = the policy: for z blocks of at most
  // TmaPolicy::kChunkMaxPlanes planes, chunks of the fewest whole rows that hold as many tiles as
  // blocks are resident on the device, else whole layers.
  int chunk_rows = -1;
  // L2 eviction priority of the tma kernel's loads (kernels/acoustic_tma.cu): 0 none; 1 p_prev
  // and m, read once a step, evict-first, so that the planes of p that the neighbouring tiles and
  // the next z block read again are the ones L2 keeps; 2 as 1, and p evict-last.
  int l2_hint = 0;
};
using AcousticArgs = AcousticArgsT<float>;

// Where block `block` of a 1D grid of tiles x z blocks works under the chunked launch order
// (AcousticArgsT::chunk_rows): the tiles [0, tiles) go in chunks of `chunk` tiles (the last one
// shorter), and the blocks of a chunk take its z blocks in turn, so block b of a chunk of n tiles
// is its tile b % n in z block b / n. chunk = tiles is the order of a 3D grid (every tile of z
// block 0, then of z block 1, ...).
struct BlockPlace {
  int tile, z_block;
};
__host__ __device__ inline BlockPlace block_place(int block, int tiles, int chunk, int z_blocks) {
  const int first = block / (chunk * z_blocks) * chunk;  // the chunks before are whole
  const int n = tiles - first < chunk ? tiles - first : chunk;
  const int r = block - first * z_blocks;
  return {first + r % n, r / n};
}
using AcousticArgsHalf = AcousticArgsT<__half>;

enum class Variant { naive, smem, tma };

// Block shape of the smem variant: BX x BY threads, one column each.
struct MarchPolicy {
  static constexpr int kBlockX = 32;
  static constexpr int kBlockY = 16;
};

// The tma tile: a block covers kBlockX x kTileY columns; `kLookahead` planes are in flight
// beyond the R the stencil needs. kBlockY x kRows is the rows2 thread shape of the forward kernel
// (TmaShape below; the fused RTM kernel uses it as well): two rows per thread halve the per-cell
// cost of the barrier, the waits and the addressing, which bound the one-row version (the SM,
// not DRAM, was the busy unit).
struct TmaPolicy {
  static constexpr int kBlockX = 32;
  static constexpr int kBlockY = 16;
  static constexpr int kRows = 2;
  static constexpr int kLookahead = 3;
  static constexpr int kTileY = kBlockY * kRows;
  // The launch order in chunks pays up to z blocks of 32 planes, the more the shorter the z
  // blocks; beyond them it gains little in fp32 and loses in compressible memory and in fp16
  // (docs/BENCHMARKS.md, "Forward acoustic").
  static constexpr int kChunkMaxPlanes = 32;
  // The order-8 fp16 quads kernel runs three blocks an SM (kernels/acoustic_tma.cu, Dense) for z
  // blocks of at most this many planes: beyond them three blocks run slower than two (longer z
  // blocks of more resident blocks thrash L2; docs/BENCHMARKS.md, "Forward acoustic").
  static constexpr int kDenseMaxPlanes = 32;
};

// The tma forward kernel's thread shapes; each covers the same kBlockX x kTileY columns, so the
// tensor maps do not depend on it:
//   rows2: 32 x 16 threads, each marching 2 columns stacked in y;
//   rows4: 32 x 8 threads, 4 columns stacked in y (the waits, the barrier and the addressing
//          shared by more cells, with half the warps);
//   pairs: 16 x 32 threads, 2 columns adjacent in x (a cell pair's x window, y column, z
//          neighbours and fields come as 8-byte loads; 4-byte loads of half pairs in fp16);
//   quads: 16 x 16 threads, 2 x 2 columns (2 adjacent in x, 2 stacked in y).
enum class TmaShape { rows2, rows4, pairs, quads };
inline constexpr TmaShape kTmaShapes[] = {TmaShape::rows2, TmaShape::rows4, TmaShape::pairs, TmaShape::quads};
constexpr const char* tma_shape_name(TmaShape s) {
  return s == TmaShape::rows2 ? "rows2" : s == TmaShape::rows4 ? "rows4" : s == TmaShape::pairs ? "pairs" : "quads";
}
// The policy: the shape for a radius, memory kind and storage, the fastest of each
// (docs/BENCHMARKS.md, "Forward acoustic"). fp32: rows2 at every order, z_block and memory kind.
// fp16 (the same shape in plain and compressible memory): order 2 rows2, order 4 rows4, order 8
// quads (just ahead of rows4), order 16 rows4 (at 122 registers and half the shared memory, two
// of its blocks fit an SM).
constexpr TmaShape tma_shape_policy(int radius, bool compressible, Storage storage = Storage::fp32) {
  (void)compressible;
  if (storage == Storage::fp32) return TmaShape::rows2;
  return radius <= 1 ? TmaShape::rows2 : radius == 4 ? TmaShape::quads : TmaShape::rows4;
}

// The loads' L2 hints (AcousticArgsT::l2_hint): hint 2 where they pay, fp32 storage in plain
// memory, at every order (hint 1 gains less); in compressible memory they change nothing beyond
// the noise, and fp16 storage runs slower with either (docs/BENCHMARKS.md, "Forward acoustic").
// The vti/tti kernel takes the same policy (TtiArgsT::l2_hint), where hint 2 is neutral to a
// little faster (docs/BENCHMARKS.md, "TTI and VTI").
constexpr int tma_l2_hint_policy(int radius, bool compressible, Storage storage) {
  (void)radius;
  return storage == Storage::fp32 && !compressible ? 2 : 0;
}

// The tensor maps the tma variant reads through: p with the halo box (tma_box), p_prev and m
// with the block's own box (tma_center_box, no halo).
struct TmaMaps {
  const void* p = nullptr;
  const void* p_prev = nullptr;
  const void* m = nullptr;
};

// The TMA box for a radius and element size (4: fp32, 2: fp16). Its x start must sit on a
// 16-byte boundary (a box starting at x0 - 1 or x0 - 2 stops the copy engine with an
// illegal-instruction error), so the left halo is widened to HX = R rounded up to 16
// bytes (4 floats, 8 halves); the width BX + HX + R is rounded up to 8 elements (a row of the
// box a multiple of 16 bytes in either size). Height: the block's rows plus 2R.
constexpr int tma_halo_x(int radius, int element_bytes = 4) {
  const int per16 = 16 / element_bytes;
  return (radius + per16 - 1) / per16 * per16;
}
constexpr int tma_tile_width(int radius, int element_bytes = 4) {
  return (TmaPolicy::kBlockX + tma_halo_x(radius, element_bytes) + radius + 7) / 8 * 8;
}
constexpr int tma_tile_height(int radius) {
  return TmaPolicy::kTileY + 2 * radius;
}
std::array<int, 3> tma_box(int radius, int element_bytes = 4);
std::array<int, 3> tma_center_box();

// Runs one step. `maps` (CUtensorMaps of p, p_prev and m) and `shape` are needed by tma.
// z_block: planes per block along z (0 = the whole column); ignored by naive.
void launch_acoustic_step(const AcousticArgs& args, Variant variant, int radius, int z_block, const TmaMaps& maps,
                          TmaShape shape, cudaStream_t stream);
// The same in fp16 storage (naive and tma; the maps encoded over halves with tma_box(radius, 2)).
void launch_acoustic_step(const AcousticArgsHalf& args, Variant variant, int radius, int z_block, const TmaMaps& maps,
                          TmaShape shape, cudaStream_t stream);

// Sources and receivers. The step index n is read from *d_step (device memory), so a captured
// graph replays correctly step after step.
struct PointArgs {
  const long long* cells = nullptr;  // linear index in the padded layout
  const float* coef = nullptr;       // injection: m w / (hx hy hz (1 + s)); recording: w
  const int* offset = nullptr;       // recording: receiver r owns [offset[r], offset[r+1])
  int entries = 0;                   // injection entries
  int receivers = 0;
};
void launch_inject(float* pn, const PointArgs& src, const float* d_wavelet, const int* d_step, cudaStream_t stream);
// fp16 storage: the sum formed in float and rounded once to half (coef already divided by s).
void launch_inject(__half* pn, const PointArgs& src, const float* d_wavelet, const int* d_step, cudaStream_t stream);
// traces[(n % block_steps) * receivers + r] = sum_e coef_e pn[cell_e]
void launch_record(const float* pn, const PointArgs& rec, float* d_traces, int block_steps, const int* d_step,
                   cudaStream_t stream);
void launch_record(const __half* pn, const PointArgs& rec, float* d_traces, int block_steps, const int* d_step,
                   cudaStream_t stream);
void launch_advance_step(int* d_step, cudaStream_t stream);
// Sets *d_flag to 1 if any of the n values is NaN or Inf.
void launch_check_finite(const float* v, long long n, int* d_flag, cudaStream_t stream);
void launch_check_finite(const __half* v, long long n, int* d_flag, cudaStream_t stream);

}  // namespace seisrtm::kernels
