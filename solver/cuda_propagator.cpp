#include "solver/cuda_propagator.hpp"

#include <cuda.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <type_traits>

#include "kernels/cuda_check.hpp"
#include "kernels/tti.hpp"
#include "solver/capabilities.hpp"
#include "solver/device_info.hpp"
#include "solver/device_wavefield.hpp"
#include "solver/numerics.hpp"
#include "solver/slab_overlap.hpp"
#include "solver/storage.hpp"
#include "solver/tensor_map.hpp"

namespace seisrtm {

namespace {

constexpr long long kRowAlign = 32;  // floats: rows start on 128-byte boundaries

std::string gib(std::size_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f GiB", b / 1073741824.0);
  return s;
}

}  // namespace

CudaOptions cuda_options(const Config& c) {
  CudaOptions o;
  o.device = c.solver.device;
  const SolverKernel k = c.solver.kernel;
  o.variant = k == SolverKernel::automatic ? kernels::Variant::tma : variant_of(k);
  o.storage = c.solver.storage == SolverStorage::fp16 ? kernels::Storage::fp16 : kernels::Storage::fp32;
  // auto without TMA: smem for acoustic in fp32, naive for fp16 and vti/tti (no smem variant).
  if (k == SolverKernel::automatic && !query_gpu(o.device).tma)
    o.variant = c.physics.equation == Equation::acoustic && o.storage == kernels::Storage::fp32
                    ? kernels::Variant::smem
                    : kernels::Variant::naive;
  o.z_block = c.solver.z_block;
  o.memory = c.solver.memory == SolverMemory::compressible ? MemoryKind::compressible : MemoryKind::plain;
  o.graphs = c.solver.graphs;
  o.snapshots = c.output.snapshot_interval > 0 && c.output.snapshot_interval <= c.time.steps;
  return o;
}

kernels::TmaShape tma_shape_for(const TmaTuning& t, int radius, bool compressible, kernels::Storage storage) {
  return t.shape.value_or(kernels::tma_shape_policy(radius, compressible, storage));
}

int tma_chunk_rows(const TmaTuning& t) {
  return t.chunk_rows.value_or(-1);
}

int tma_l2_hint(const TmaTuning& t, int radius, bool compressible, kernels::Storage storage) {
  return t.l2_hint.value_or(kernels::tma_l2_hint_policy(radius, compressible, storage));
}

// The measured choice (H100, 800^3, docs/BENCHMARKS.md: with plain memory `wide` took 6.40 s
// for the backward pass against 6.56 for `compact`; with compressible memory `compact` 5.00 s
// against 5.75).
kernels::FusedShape fused_shape_for(const TmaTuning& t, bool compressible) {
  return t.fused_shape.value_or(compressible ? kernels::FusedShape::compact : kernels::FusedShape::wide);
}

const char* fused_shape_name(kernels::FusedShape s) {
  return s == kernels::FusedShape::wide ? "wide" : s == kernels::FusedShape::compact ? "compact" : "compact1";
}

std::string tma_settings_text(int l2_hint, int chunk_rows, bool half, bool anisotropic) {
  std::string t;
  const char* once = anisotropic ? "the per-cell volumes" : "p_prev and m";
  if (!half && l2_hint >= 1) t += std::string(", L2 hints: ") + once + " evict-first";
  if (!half && l2_hint == 2) t += anisotropic ? ", p and q evict-last" : ", p evict-last";
  if (chunk_rows == 0) t += ", launch order: whole layers";
  if (chunk_rows > 0) t += ", launch order: chunks of " + std::to_string(chunk_rows) + " tile rows";
  return t;
}

void select_device(const CudaOptions& o) {
  const GpuInfo g = query_gpu(o.device);
  if (!g.present) throw Error("CUDA device " + std::to_string(o.device) + " is not usable: " + g.reason);
  if (o.variant == kernels::Variant::tma && !g.tma)
    throw Error("solver.kernel: " + cannot_implement({o.variant, Equation::acoustic, o.storage}, &g));
  SEISRTM_CUDA(cudaSetDevice(o.device));
}

template <class T>
kernels::AcousticArgsT<T> acoustic_args(const Problem& pb, long long nxp, const T* p, T* pn, const T* m,
                                        const DeviceBuffer (&damp)[3], float model_scale) {
  kernels::AcousticArgsT<T> a;
  a.p = p;
  a.pn = pn;
  a.m = m;
  a.damp_x = damp[0].as<float>();
  a.damp_y = damp[1].as<float>();
  a.damp_z = damp[2].as<float>();
  a.nx = static_cast<int>(pb.grid.n[0]);
  a.ny = static_cast<int>(pb.grid.n[1]);
  a.nz = static_cast<int>(pb.grid.n[2]);
  a.sy = nxp;
  a.sz = nxp * pb.grid.n[1];
  for (int k = 0; k <= pb.radius; ++k) {
    a.cx[k] = static_cast<float>(pb.d2[0][k]) * model_scale;
    a.cy[k] = static_cast<float>(pb.d2[1][k]) * model_scale;
    a.cz[k] = static_cast<float>(pb.d2[2][k]) * model_scale;
  }
  a.free_surface = pb.free_surface;
  return a;
}
template kernels::AcousticArgs acoustic_args(const Problem&, long long, const float*, float*, const float*,
                                             const DeviceBuffer (&)[3], float);
template kernels::AcousticArgsHalf acoustic_args(const Problem&, long long, const __half*, __half*, const __half*,
                                                 const DeviceBuffer (&)[3], float);

kernels::TtiArgs tti_args(const Problem& pb, long long nxp, const DeviceBuffer (&damp)[3]) {
  kernels::TtiArgs a;
  a.damp_x = damp[0].as<float>();
  a.damp_y = damp[1].as<float>();
  a.damp_z = damp[2].as<float>();
  a.nx = static_cast<int>(pb.grid.n[0]);
  a.ny = static_cast<int>(pb.grid.n[1]);
  a.nz = static_cast<int>(pb.grid.n[2]);
  a.sy = nxp;
  a.sz = nxp * pb.grid.n[1];
  // First-derivative weights a_k / h (k = 1..R) from Fornberg's weights on -R..R, as the CPU
  // reference (validation/cpu_tti.cpp) computes them.
  std::vector<double> pts;
  for (int k = -pb.radius; k <= pb.radius; ++k) pts.push_back(k);
  const auto w1 = fornberg_weights(1, pts, 0.0);
  float* d1[3] = {a.dx, a.dy, a.dz};
  float* d2[3] = {a.cx, a.cy, a.cz};
  for (int ax = 0; ax < 3; ++ax) {
    for (int k = 0; k <= pb.radius; ++k) d2[ax][k] = static_cast<float>(pb.d2[ax][k]);
    for (int k = 1; k <= pb.radius; ++k) d1[ax][k] = static_cast<float>(w1[pb.radius + k] / pb.grid.h[ax]);
  }
  a.free_surface = pb.free_surface;
  return a;
}

namespace {

// value(cell) of every grid cell, computed in double and rounded to float, in the padded layout
// (rows of nxp floats, pad columns zero).
std::vector<float> padded_values(const Problem& pb, long long nxp, const std::function<double(long long)>& value) {
  const long long nx = pb.grid.n[0], ny = pb.grid.n[1], nz = pb.grid.n[2];
  std::vector<float> h(static_cast<size_t>(nxp * ny * nz), 0.0f);
#pragma omp parallel for collapse(2) schedule(static)
  for (long long z = 0; z < nz; ++z)
    for (long long y = 0; y < ny; ++y)
      for (long long x = 0; x < nx; ++x) {
        const long long cell = (z * ny + y) * nx + x;
        h[(z * ny + y) * nxp + x] = static_cast<float>(value(cell));
      }
  return h;
}

}  // namespace

DeviceBuffer model_volume(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning,
                          const std::function<double(long long)>& value) {
  const std::vector<float> h = padded_values(pb, nxp, value);
  DeviceBuffer b(h.size() * sizeof(float), kind, warning);
  SEISRTM_CUDA(cudaMemcpy(b.as<float>(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return b;
}

DeviceBuffer half_model_volume(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning,
                               const std::function<double(long long)>& value, float* scale) {
  const std::vector<float> v = padded_values(pb, nxp, value);  // pad columns 0: no effect on the largest
  float largest = 0;
#pragma omp parallel for reduction(max : largest) schedule(static)
  for (size_t i = 0; i < v.size(); ++i) largest = std::max(largest, std::abs(v[i]));
  *scale = power_of_two_below(largest > 0 ? largest : 1.0f);
  const float s = *scale;
  std::vector<__half> h(v.size());
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < v.size(); ++i) h[i] = __float2half_rn(v[i] / s);
  DeviceBuffer b(h.size() * sizeof(__half), kind, warning);
  SEISRTM_CUDA(cudaMemcpy(b.as<void>(), h.data(), h.size() * sizeof(__half), cudaMemcpyHostToDevice));
  return b;
}

TtiVolumes tti_volumes(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning) {
  TtiVolumes v;
  v.a = model_volume(pb, nxp, kind, warning, [&](long long i) { return 1 + 2 * double(pb.epsilon[i]); });
  v.b = model_volume(pb, nxp, kind, warning, [&](long long i) { return std::sqrt(1 + 2 * double(pb.delta[i])); });
  if (pb.equation == Equation::tti) {
    // Reduced to [-pi, pi], where the kernel's __sincosf is accurate (kernels/tti_common.cuh).
    const double two_pi = 2 * std::acos(-1.0);
    v.theta =
        model_volume(pb, nxp, kind, warning, [&](long long i) { return std::remainder(double(pb.theta[i]), two_pi); });
    v.phi =
        model_volume(pb, nxp, kind, warning, [&](long long i) { return std::remainder(double(pb.phi[i]), two_pi); });
  }
  return v;
}

TtiVolumes tti_volumes_half(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning,
                            float (&scales)[4]) {
  TtiVolumes v;
  v.a = half_model_volume(
      pb, nxp, kind, warning, [&](long long i) { return 1 + 2 * double(pb.epsilon[i]); }, &scales[0]);
  v.b = half_model_volume(
      pb, nxp, kind, warning, [&](long long i) { return std::sqrt(1 + 2 * double(pb.delta[i])); }, &scales[1]);
  if (pb.equation == Equation::tti) {
    const double two_pi = 2 * std::acos(-1.0);
    v.theta = half_model_volume(
        pb, nxp, kind, warning, [&](long long i) { return std::remainder(double(pb.theta[i]), two_pi); }, &scales[2]);
    v.phi = half_model_volume(
        pb, nxp, kind, warning, [&](long long i) { return std::remainder(double(pb.phi[i]), two_pi); }, &scales[3]);
  }
  return v;
}

void set_tti_model(kernels::TtiArgs& args, const DeviceBuffer& m, const TtiVolumes& v) {
  args.m = m.as<float>();
  args.a = v.a.as<float>();
  args.b = v.b.as<float>();
  const bool tilted = v.theta.bytes() > 0;
  args.theta = tilted ? v.theta.as<float>() : nullptr;
  args.phi = tilted ? v.phi.as<float>() : nullptr;
}

int device_volumes(const Problem& p, const CudaOptions& o) {
  // acoustic: p, p_prev, m; vti: p, p_prev, q, q_prev, m, a, b; tti: + theta, phi.
  const int base = p.equation == Equation::tti ? 9 : p.equation == Equation::vti ? 7 : 3;
  return base + (o.snapshots ? 1 : 0);
}

DeviceFootprint device_footprint(const Problem& p, const CudaOptions& o) {
  DeviceFootprint f;
  const long long nxp = (p.grid.n[0] + kRowAlign - 1) / kRowAlign * kRowAlign;
  f.volume = static_cast<std::size_t>(nxp * p.grid.n[1] * p.grid.n[2]) * kernels::storage_bytes(o.storage);
  std::size_t small = (p.grid.n[0] + p.grid.n[1] + p.grid.n[2] + p.steps) * sizeof(float);
  small += p.receivers.cell.size() * 12 + p.receivers.offset.size() * 4;
  small += static_cast<std::size_t>(p.receivers.size()) * CudaPropagator::kTraceBlock * sizeof(float);
  for (const auto& s : p.shots) small = std::max(small, small + s.cell.size() * 12);
  // Compressible allocations round up to the VMM granularity (2 MiB).
  const std::size_t round = o.memory == MemoryKind::compressible ? (2u << 20) : 0;
  f.total = device_volumes(p, o) * (f.volume + round) + small + (8u << 20);
  return f;
}

struct CudaPropagator::Impl {
  const Problem& pb;
  CudaOptions opt;
  long long nx, ny, nz, nxp;
  bool anisotropic = false, tilted = false;  // vti or tti; tti
  DeviceBuffer qbuf[2];                      // vti/tti: q levels
  TtiVolumes tti;                            // vti/tti: 1 + 2 eps, sqrt(1 + 2 delta), angles
  CUtensorMap tti_halo[2][2]{};              // vti/tti tma: [p, q][buffer], the halo box
  CUtensorMap tti_center[2][2]{};            // [p, q][buffer], the centre box
  CUtensorMap tti_model[5]{};                // m, a, b, theta, phi
  DeviceBuffer buf[2], m, spare, damp[3], wavelet, rec_cells, rec_coef, rec_offset, src_cells, src_coef, step_counter,
      d_traces, flag;
  CUtensorMap tmap[2]{};         // p in buf[c], the halo box
  CUtensorMap tmap_center[3]{};  // buf[0], buf[1] and m, the block's own box
  int cur = 0;                   // p^n lives in buf[cur], p^{n-1} in buf[1 - cur]
  // fp16 storage: buf holds p / field_scale (chosen per shot) and m holds m / model_scale, each
  // a power of two (solver/storage.hpp); 1 in fp32.
  bool half = false;
  float field_scale = 1, model_scale = 1;
  float tti_scales[4] = {1, 1, 1, 1};  // fp16 vti/tti: a, b, theta, phi
  std::vector<__half> host_halves;     // a wavefield on its way out
  long long n_done = 0;
  int src_entries = 0;
  int src_edge_entries = 0;  // a slab's: the first entries lie on its edge planes
  std::optional<Slab> slab;  // one slab of a z decomposition
  // Its own planes in three parts (the edge planes sent up and down, the interior) and the
  // exchange beside the interior (connected: every step exchanges).
  std::unique_ptr<SlabOverlap> overlap;
  CudaEvent step_done;  // a slab's step complete (counter advanced)
  CudaStream stream, copy_stream;
  CudaEvent snapshot_taken, seg_begin, seg_end;
  double stepping_ms = 0;
  CudaGraphExec graph[2];  // two steps starting from buf[0] and from buf[1]
  std::vector<float> host_traces, block_rows;
  float* pinned = nullptr;
  bool snapshot_pending = false;
  std::size_t free_at_start = 0, lowest_free = 0, volume_bytes = 0;

  void sample_memory() {
    std::size_t free_b = 0, total_b = 0;
    SEISRTM_CUDA(cudaMemGetInfo(&free_b, &total_b));
    lowest_free = std::min(lowest_free, free_b);
  }

  Impl(const Problem& p, const CudaOptions& o) : pb(p), opt(o) {}
  kernels::TtiArgs tti_base;                           // weights, damping and sizes of the vti/tti step
  kernels::TmaShape shape = kernels::TmaShape::rows2;  // the acoustic tma kernel's (tma_shape_for)
  int chunk_rows = -1;                                 // and its launch order (tma_chunk_rows)
  int l2_hint = 0;                                     // and its loads' L2 hints (tma_l2_hint)

  kernels::AcousticArgs args(int c) const {
    kernels::AcousticArgs a = acoustic_args(pb, nxp, buf[c].as<float>(), buf[1 - c].as<float>(), m.as<float>(), damp);
    a.chunk_rows = chunk_rows;
    a.l2_hint = l2_hint;
    return a;
  }
  // fp16: the same step on halves, the model's scale folded into the weights (kernels/acoustic.hpp).
  kernels::AcousticArgsHalf half_args(int c) const {
    kernels::AcousticArgsHalf a =
        acoustic_args(pb, nxp, buf[c].as<__half>(), buf[1 - c].as<__half>(), m.as<__half>(), damp, model_scale);
    a.chunk_rows = chunk_rows;
    a.l2_hint = l2_hint;
    return a;
  }
  // The stored p of a level as floats in the unpadded layout, from `rows` (ny nz rows of nxp
  // elements, halves in fp16).
  void unpack(const void* rows, float* out) {
    if (!half) {
      const float* r = static_cast<const float*>(rows);
      for (long long k = 0; k < ny * nz; ++k) std::memcpy(out + k * nx, r + k * nxp, nx * sizeof(float));
      return;
    }
    const __half* r = static_cast<const __half*>(rows);
    const float s = field_scale;
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < ny * nz; ++k)
      for (long long x = 0; x < nx; ++x) out[k * nx + x] = __half2float(r[k * nxp + x]) * s;
  }

  long long padded(long long cell) const {
    const long long ix = cell % nx, iy = (cell / nx) % ny, iz = cell / (nx * ny);
    return (iz * ny + iy) * nxp + ix;
  }

  // The stencil of planes [lo, hi) from buf[c] (and qbuf[c]), in stream `on`.
  void stencil(int c, int lo, int hi, cudaStream_t on) {
    if (anisotropic) {
      kernels::TtiArgs t = tti_base;
      t.p = buf[c].as<float>();
      t.pn = buf[1 - c].as<float>();
      t.q = qbuf[c].as<float>();
      t.qn = qbuf[1 - c].as<float>();
      t.z_lo = lo, t.z_hi = hi;
      kernels::launch_tti_step(t, tilted, opt.variant, pb.radius, opt.z_block,
                               tti_step_maps(tti_halo, tti_center, tti_model, c), on);
    } else {
      kernels::AcousticArgs a = args(c);
      a.z_lo = lo, a.z_hi = hi;
      const kernels::TmaMaps maps{&tmap[c], &tmap_center[1 - c], &tmap_center[2]};
      kernels::launch_acoustic_step(a, opt.variant, pb.radius, opt.z_block, maps, shape, on);
    }
  }

  // The source entries [first, first + count) into p (and q) of the new level, in stream `on`.
  void inject(int c, int first, int count, cudaStream_t on) {
    kernels::PointArgs src{src_cells.as<long long>() + first, src_coef.as<float>() + first, nullptr, count, 0};
    if (anisotropic)  // the source enters p and q alike (validation/cpu_tti.hpp)
      kernels::launch_inject(qbuf[1 - c].as<float>(), src, wavelet.as<float>(), step_counter.as<int>(), on);
    kernels::launch_inject(buf[1 - c].as<float>(), src, wavelet.as<float>(), step_counter.as<int>(), on);
  }

  // One step of a slab (SlabOverlap), once the previous step is done: the edge planes, their
  // sources and the exchange beside the interior planes (which read no halo plane) and their
  // sources; then, once the halos are in, the receivers and the step counter. The edges run
  // beside the interior, not before it: launched ahead of it on one stream, the small edge
  // kernels and their tails cost 270 us a step on 2 H200s at 800^3 a GPU.
  void slab_step(int c) {
    const cudaStream_t m = stream.get();
    const SlabOverlap& o = *overlap;
    float* fields[2] = {buf[1 - c].as<float>(), anisotropic ? qbuf[1 - c].as<float>() : nullptr};
    overlap->step(
        m, step_done.get(),
        [&](cudaStream_t h) {
          stencil(c, o.lo(0), o.hi(0), h);
          stencil(c, o.lo(2), o.hi(2), h);
          inject(c, 0, src_edge_entries, h);
        },
        fields, anisotropic ? 2 : 1, nxp * ny,
        [&](cudaStream_t on) {
          stencil(c, o.lo(1), o.hi(1), on);
          inject(c, src_edge_entries, src_entries - src_edge_entries, on);
        });
    record_and_count(c);
    SEISRTM_CUDA(cudaEventRecord(step_done.get(), m));
  }

  void record_and_count(int c) {
    kernels::PointArgs rec{rec_cells.as<long long>(), rec_coef.as<float>(), rec_offset.as<int>(), 0,
                           static_cast<int>(pb.receivers.size())};
    kernels::launch_record(buf[1 - c].as<float>(), rec, d_traces.as<float>(), kTraceBlock, step_counter.as<int>(),
                           stream.get());
    kernels::launch_advance_step(step_counter.as<int>(), stream.get());
  }

  // One time step from buf[c]: stencil, source, receivers, step counter.
  void step(int c) {
    if (overlap && overlap->connected()) return slab_step(c);
    if (half) return step_with(half_args(c), c);
    step_with(args(c), c);
  }
  // The step with a's fields (float, or halves in fp16; vti/tti take q beside p).
  template <class T>
  void step_with(const kernels::AcousticArgsT<T>& a, int c) {
    kernels::PointArgs src{src_cells.as<long long>(), src_coef.as<float>(), nullptr, src_entries, 0};
    if (anisotropic) {
      tti_step<T>(c, src);
    } else {
      const kernels::TmaMaps maps{&tmap[c], &tmap_center[1 - c], &tmap_center[2]};
      kernels::launch_acoustic_step(a, opt.variant, pb.radius, opt.z_block, maps, shape, stream.get());
    }
    kernels::launch_inject(a.pn, src, wavelet.as<float>(), step_counter.as<int>(), stream.get());
    kernels::PointArgs rec{rec_cells.as<long long>(), rec_coef.as<float>(), rec_offset.as<int>(), 0,
                           static_cast<int>(pb.receivers.size())};
    kernels::launch_record(a.pn, rec, d_traces.as<float>(), kTraceBlock, step_counter.as<int>(), stream.get());
    kernels::launch_advance_step(step_counter.as<int>(), stream.get());
  }
  // vti/tti in fp16: tti_base's weights and sizes with the halves and the model's scales.
  kernels::TtiArgsHalf half_tti_args(int c) const {
    const kernels::TtiArgs& f = tti_base;
    kernels::TtiArgsHalf t;
    t.p = buf[c].as<__half>();
    t.pn = buf[1 - c].as<__half>();
    t.q = qbuf[c].as<__half>();
    t.qn = qbuf[1 - c].as<__half>();
    t.m = m.as<__half>();
    t.a = tti.a.as<__half>();
    t.b = tti.b.as<__half>();
    t.theta = tilted ? tti.theta.as<__half>() : nullptr;
    t.phi = tilted ? tti.phi.as<__half>() : nullptr;
    t.damp_x = f.damp_x, t.damp_y = f.damp_y, t.damp_z = f.damp_z;
    t.nx = f.nx, t.ny = f.ny, t.nz = f.nz;
    t.sy = f.sy, t.sz = f.sz;
    for (int k = 0; k <= kernels::kMaxRadius; ++k) {
      t.cx[k] = f.cx[k], t.cy[k] = f.cy[k], t.cz[k] = f.cz[k];
      t.dx[k] = f.dx[k], t.dy[k] = f.dy[k], t.dz[k] = f.dz[k];
    }
    t.free_surface = f.free_surface;
    t.z_lo = f.z_lo, t.z_hi = f.z_hi;
    t.chunk_rows = f.chunk_rows, t.l2_hint = f.l2_hint;
    t.m_scale = model_scale;
    t.a_scale = tti_scales[0], t.b_scale = tti_scales[1], t.theta_scale = tti_scales[2], t.phi_scale = tti_scales[3];
    return t;
  }

  // The vti/tti stencil of p and q from buffer c and the source into q (into p: step_with);
  // T = __half in fp16 storage.
  template <class T>
  void tti_step(int c, const kernels::PointArgs& src) {
    kernels::TtiArgsT<T> t;
    if constexpr (std::is_same_v<T, float>) {
      t = tti_base;
      t.p = buf[c].as<float>();
      t.pn = buf[1 - c].as<float>();
      t.q = qbuf[c].as<float>();
      t.qn = qbuf[1 - c].as<float>();
    } else {
      t = half_tti_args(c);
    }
    kernels::launch_tti_step(t, tilted, opt.variant, pb.radius, opt.z_block,
                             tti_step_maps(tti_halo, tti_center, tti_model, c), stream.get());
    // The source enters p and q alike (validation/cpu_tti.hpp).
    kernels::launch_inject(t.qn, src, wavelet.as<float>(), step_counter.as<int>(), stream.get());
  }

  // The buffers have period 2, so two steps (A->B, B->A) form one graph; a graph per starting
  // buffer covers an odd step count in between. Time-dependent inputs come from the device
  // step counter, so the same graph replays for every pair of steps.
  const CudaGraphExec& pair_graph(int c) {
    if (!graph[c].valid()) {
      cudaGraph_t g = nullptr;
      SEISRTM_CUDA(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
      step(c);
      step(1 - c);
      SEISRTM_CUDA(cudaStreamEndCapture(stream.get(), &g));
      graph[c] = CudaGraphExec(g);
      sample_memory();
    }
    return graph[c];
  }

  void encode_tensor_maps() {
    const VolumeDims dims{nx, ny, nz, nxp};
    const int eb = kernels::storage_bytes(opt.storage);
    if (anisotropic) {
      encode_tti_maps(buf, qbuf, dims, pb.radius, eb, tti_halo, tti_center);
      encode_tti_model_maps(m, tti, tilted, dims, pb.radius, eb, tti_model);
      return;
    }
    encode_acoustic_maps(buf, dims, pb.radius, eb, tmap, tmap_center);
    encode_volume_map(&tmap_center[2], m.as<void>(), nxp, ny, nz, kernels::tma_center_box(), eb);
  }

  // Copies trace rows [from, to) of the device block into host_traces ([receiver][step]).
  void copy_traces(long long from, long long to) {
    const long long nrec = pb.receivers.size();
    if (nrec == 0 || to <= from) return;
    const long long r0 = from % kTraceBlock, rows = to - from;
    block_rows.resize(static_cast<size_t>(rows * nrec));
    SEISRTM_CUDA(cudaMemcpyAsync(block_rows.data(), d_traces.as<float>() + r0 * nrec, rows * nrec * sizeof(float),
                                 cudaMemcpyDeviceToHost, stream.get()));
    SEISRTM_CUDA(cudaStreamSynchronize(stream.get()));
    // fp16: the receivers read p / field_scale; times the scale (a power of two: exact).
    for (long long k = 0; k < rows; ++k)
      for (long long r = 0; r < nrec; ++r)
        host_traces[r * pb.steps + from + k] = block_rows[k * nrec + r] * field_scale;
  }

  void check_finite(long long n) {
    SEISRTM_CUDA(cudaMemsetAsync(flag.as<int>(), 0, sizeof(int), stream.get()));
    for (const DeviceBuffer* f : {&buf[cur], anisotropic ? &qbuf[cur] : nullptr}) {
      if (f == nullptr) continue;
      if (half)
        kernels::launch_check_finite(f->as<__half>(), nxp * ny * nz, flag.as<int>(), stream.get());
      else
        kernels::launch_check_finite(f->as<float>(), nxp * ny * nz, flag.as<int>(), stream.get());
    }
    int h = 0;
    SEISRTM_CUDA(cudaMemcpyAsync(&h, flag.as<int>(), sizeof(int), cudaMemcpyDeviceToHost, stream.get()));
    SEISRTM_CUDA(cudaStreamSynchronize(stream.get()));
    if (slab) h = any_rank(h != 0);  // every slab stops at the same step
    if (h && half)                   // overflow of a half: beyond 65504 field scales
      throw SharedFailure("the wavefield became NaN or Inf by step " + std::to_string(n) +
                          " with solver.storage fp16: a value beyond the half's range (65504 x the field scale " +
                          std::to_string(field_scale) + ", set for the source's largest injection at 2^" +
                          std::to_string(kHalfPeakExponent) +
                          "), or an unstable run; rerun with solver.storage: fp32 (and check time.dt, largest "
                          "stable: " +
                          std::to_string(pb.dt_max) + " s)");
    if (h)
      throw SharedFailure("the wavefield became NaN or Inf by step " + std::to_string(n) +
                          ": the run is unstable; check time.dt (largest stable: " + std::to_string(pb.dt_max) +
                          " s) and the model's velocities");
  }
};

// The device is made current first: the streams and events of Impl belong to it.
CudaPropagator::CudaPropagator(const Problem& pb, const CudaOptions& opt)
    : impl_((select_device(opt), std::make_unique<Impl>(pb, opt))) {
  Impl& d = *impl_;
  d.nx = pb.grid.n[0];
  d.ny = pb.grid.n[1];
  d.nz = pb.grid.n[2];
  d.nxp = (d.nx + kRowAlign - 1) / kRowAlign * kRowAlign;
  if (d.nx > (1LL << 31) - 1 || d.ny > (1LL << 31) - 1 || d.nz > (1LL << 31) - 1)
    throw Error("grid.shape too large for the cuda backend");
  const DeviceFootprint fp = device_footprint(pb, opt);
  std::size_t free_b = 0, total_b = 0;
  SEISRTM_CUDA(cudaMemGetInfo(&free_b, &total_b));
  d.free_at_start = d.lowest_free = free_b;
  d.volume_bytes = fp.volume;
  if (fp.total > free_b)
    throw Error("the problem needs " + gib(fp.total) + " of GPU memory (" + std::to_string(device_volumes(pb, opt)) +
                " volumes of " + gib(fp.volume) + " plus buffers) but the GPU has " + gib(free_b) + " free of " +
                gib(total_b) + "; shrink grid.shape" + (opt.snapshots ? " or set output.snapshot_interval: 0" : ""));

  d.half = opt.storage == kernels::Storage::fp16;
  if (const std::string why = cannot_implement({opt.variant, pb.equation, opt.storage}, nullptr); !why.empty())
    throw Error("solver.kernel " + std::string(variant_name(opt.variant)) + ": " + why);
  std::string warning;
  for (auto& b : d.buf) b = DeviceBuffer(fp.volume, opt.memory, &warning);
  if (opt.variant == kernels::Variant::tma) {
    if (!pb.anisotropic()) d.shape = tma_shape_for(opt.tuning, pb.radius, d.buf[0].compressible(), opt.storage);
    d.chunk_rows = tma_chunk_rows(opt.tuning);
    d.l2_hint = tma_l2_hint(opt.tuning, pb.radius, d.buf[0].compressible(), opt.storage);
  }
  // m = v^2 dt^2 (vti/tti: vp, the vertical speed); vti/tti also a = 1 + 2 eps, b = sqrt(1 + 2
  // delta) and tti the angles (radians), each computed in double and rounded once, as the CPU
  // reference does.
  const double dt2 = pb.dt * pb.dt;
  auto m_value = [&](long long i) { return double(pb.vp[i]) * double(pb.vp[i]) * dt2; };
  if (d.half) {
    d.m = half_model_volume(pb, d.nxp, opt.memory, &warning, m_value, &d.model_scale);
  } else {
    d.m = model_volume(pb, d.nxp, opt.memory, &warning, m_value);
  }
  d.anisotropic = pb.anisotropic();
  d.tilted = pb.equation == Equation::tti;
  if (d.anisotropic) {
    for (auto& b : d.qbuf) b = DeviceBuffer(fp.volume, opt.memory, &warning);
    d.tti = d.half ? tti_volumes_half(pb, d.nxp, opt.memory, &warning, d.tti_scales)
                   : tti_volumes(pb, d.nxp, opt.memory, &warning);
  }
  if (opt.snapshots) d.spare = DeviceBuffer(fp.volume, MemoryKind::plain);
  if (!warning.empty()) notes_.push_back(warning);

  for (int a = 0; a < 3; ++a) d.damp[a] = upload(pb.damping[a]);
  d.tti_base = tti_args(pb, d.nxp, d.damp);
  d.tti_base.chunk_rows = d.chunk_rows, d.tti_base.l2_hint = d.l2_hint;
  if (d.anisotropic && !d.half) set_tti_model(d.tti_base, d.m, d.tti);  // fp16: half_tti_args
  d.wavelet = upload(pb.wavelet);

  std::vector<long long> cells;
  std::vector<int> offsets(pb.receivers.offset.begin(), pb.receivers.offset.end());
  for (long long c : pb.receivers.cell) cells.push_back(d.padded(c));
  d.rec_cells = upload(cells);
  d.rec_coef = upload(pb.receivers.weight);
  d.rec_offset = upload(offsets);
  d.step_counter = DeviceBuffer(sizeof(int), MemoryKind::plain);
  d.flag = DeviceBuffer(sizeof(int), MemoryKind::plain);
  d.d_traces =
      DeviceBuffer(std::max<std::size_t>(1, pb.receivers.size() * kTraceBlock) * sizeof(float), MemoryKind::plain);
  d.host_traces.assign(static_cast<size_t>(pb.receivers.size() * pb.steps), 0.0f);
  if (opt.snapshots) SEISRTM_CUDA(cudaMallocHost(&d.pinned, fp.volume));  // halves in fp16
  if (opt.variant == kernels::Variant::tma) d.encode_tensor_maps();
  // A first launch outside any capture sets the kernels' attributes (shared-memory limits).
  begin_shot(0);
  d.step(0);
  SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
  d.sample_memory();
}

CudaPropagator::CudaPropagator(const Problem& pb, const CudaOptions& opt, const Slab& slab)
    : CudaPropagator(pb, [&] {
        CudaOptions o = opt;
        o.graphs = opt.graphs && slab.ranks == 1;  // the NCCL exchange is not captured
        return o;
      }()) {
  Impl& d = *impl_;
  if (d.half)  // the slabs exchange fp32 halos (the config refuses it first)
    throw Error("solver.storage fp16 is not available with solver.decomposition z; set solver.storage: fp32");
  d.slab = slab;
  d.overlap = std::make_unique<SlabOverlap>(slab);  // one slab: no NCCL needed
}

double CudaPropagator::halo_seconds() const {
  return impl_->overlap ? impl_->overlap->seconds() : 0;
}

void CudaPropagator::connect() {
  if (impl_->overlap) impl_->overlap->connect();
}

Propagator::DeviceMemory CudaPropagator::device_memory() const {
  return {impl_->free_at_start - impl_->lowest_free, impl_->volume_bytes};
}

CudaPropagator::~CudaPropagator() {
  if (impl_ && impl_->pinned) cudaFreeHost(impl_->pinned);
}

std::string CudaPropagator::name() const {
  const Impl& d = *impl_;
  const char* v = variant_name(d.opt.variant);
  const GpuInfo g = query_gpu(d.opt.device);
  const bool tma = d.opt.variant == kernels::Variant::tma;
  const std::string shape = !tma            ? ""
                            : d.anisotropic ? tma_settings_text(d.l2_hint, d.chunk_rows, d.half, true)
                                            : std::string(" (") + kernels::tma_shape_name(d.shape) + ")" +
                                                  tma_settings_text(d.l2_hint, d.chunk_rows, d.half, false);
  const std::string storage = d.half ? ", fp16 storage" : "";
  return std::string("cuda ") + (d.anisotropic ? to_text(d.pb.equation) + " " : "") + v + shape + storage +
         ", z_block " + std::to_string(d.opt.z_block) + ", " + (d.buf[0].compressible() ? "compressible" : "plain") +
         " memory, graphs " + (d.opt.graphs ? "on" : "off") + " on " + g.name;
}

void CudaPropagator::begin_shot(long long shot) {
  Impl& d = *impl_;
  SEISRTM_CUDA(cudaStreamSynchronize(d.copy_stream.get()));
  for (auto& b : d.buf) SEISRTM_CUDA(cudaMemsetAsync(b.as<void>(), 0, b.bytes(), d.stream.get()));
  if (d.anisotropic)
    for (auto& b : d.qbuf) SEISRTM_CUDA(cudaMemsetAsync(b.as<void>(), 0, b.bytes(), d.stream.get()));
  SEISRTM_CUDA(cudaMemsetAsync(d.step_counter.as<int>(), 0, sizeof(int), d.stream.get()));
  // Source: m w / (hx hy hz (1 + s)), the factor the CPU reference applies; a free surface
  // erases whatever lands on z = 0, so those entries are dropped.
  const PointSet& src = d.pb.shots[shot];
  std::vector<long long> cells;
  std::vector<float> coef;
  const double dt2 = d.pb.dt * d.pb.dt;
  for (long long e = src.offset[0]; e < src.offset[1]; ++e) {
    const long long c = src.cell[e];
    const long long ix = c % d.nx, iy = (c / d.nx) % d.ny, iz = c / (d.nx * d.ny);
    if (d.pb.free_surface && iz == 0) continue;
    const double s = double(d.pb.damping[0][ix]) + d.pb.damping[1][iy] + d.pb.damping[2][iz];
    const double v = d.pb.vp[c];
    cells.push_back(d.padded(c));
    coef.push_back(static_cast<float>(v * v * dt2 * src.weight[e] / d.pb.cell_volume() / (1 + s)));
  }
  if (d.slab) {  // a slab's edge-plane entries first: they are injected before the exchange
    std::vector<long long> order(cells.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<long long>(i);
    const SlabOverlap& o = *d.overlap;
    auto edge = [&](long long i) {
      const long long iz = cells[static_cast<size_t>(i)] / (d.nxp * d.ny);
      return (iz >= o.lo(0) && iz < o.hi(0)) || (iz >= o.lo(2) && iz < o.hi(2));
    };
    std::stable_partition(order.begin(), order.end(), edge);
    std::vector<long long> c2;
    std::vector<float> w2;
    for (long long i : order) {
      c2.push_back(cells[static_cast<size_t>(i)]);
      w2.push_back(coef[static_cast<size_t>(i)]);
    }
    d.src_edge_entries = static_cast<int>(std::count_if(order.begin(), order.end(), edge));
    cells.swap(c2);
    coef.swap(w2);
  }
  if (d.half) {  // the shot's field scale, the CPU emulation's; the source adds to p / s (a power of two: exact)
    d.field_scale = source_field_scale(d.pb, shot, kHalfPeakExponent, "the shot");
    for (float& w : coef) w /= d.field_scale;
  }
  SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
  d.src_cells = upload(cells);
  d.src_coef = upload(coef);
  d.src_entries = static_cast<int>(cells.size());
  // A slab's first edge step waits for this: the zeroed fields (halo_stream does not follow the
  // main stream otherwise).
  SEISRTM_CUDA(cudaEventRecord(d.step_done.get(), d.stream.get()));
  d.graph[0] = CudaGraphExec();  // source arrays changed: capture again
  d.graph[1] = CudaGraphExec();
  std::fill(d.host_traces.begin(), d.host_traces.end(), 0.0f);
  d.cur = 0;
  d.n_done = 0;
  d.stepping_ms = 0;
  if (d.overlap) d.overlap->reset_seconds();
}

double CudaPropagator::stepping_seconds() const {
  return impl_->stepping_ms * 1e-3;
}

bool CudaPropagator::compressible() const {
  return impl_->buf[0].compressible();
}

void CudaPropagator::advance(long long first, long long count) {
  Impl& d = *impl_;
  if (first != d.n_done) throw Error("cuda backend: steps must be advanced in order");
  long long n = first;
  const long long end = first + count;
  while (n < end) {
    // Segments end on trace-block boundaries: the block is copied out and checked there.
    const long long seg_end = std::min(end, (n / kTraceBlock + 1) * kTraceBlock);
    long long k = seg_end - n;
    const long long seg_start = n;
    if (d.opt.graphs && k >= 2) d.pair_graph(d.cur);  // capture outside the timed span
    SEISRTM_CUDA(cudaEventRecord(d.seg_begin.get(), d.stream.get()));
    if (d.opt.graphs) {
      for (; k >= 2; k -= 2) d.pair_graph(d.cur).launch(d.stream.get());  // two steps: cur unchanged
    }
    for (; k > 0; --k) {
      d.step(d.cur);
      d.cur = 1 - d.cur;
    }
    SEISRTM_CUDA(cudaEventRecord(d.seg_end.get(), d.stream.get()));
    n = seg_end;
    d.copy_traces(seg_start, n);
    SEISRTM_CUDA(cudaEventSynchronize(d.seg_end.get()));
    float ms = 0;
    SEISRTM_CUDA(cudaEventElapsedTime(&ms, d.seg_begin.get(), d.seg_end.get()));
    d.stepping_ms += ms;
    if (d.overlap) d.overlap->flush();
    if (n % kTraceBlock == 0 || n == d.pb.steps) d.check_finite(n);
  }
  d.n_done = end;
  d.sample_memory();
}

void CudaPropagator::wavefield(float* out) {
  Impl& d = *impl_;
  if (d.half) {
    d.host_halves.resize(static_cast<size_t>(d.nxp * d.ny * d.nz));
    SEISRTM_CUDA(cudaMemcpyAsync(d.host_halves.data(), d.buf[d.cur].as<void>(), d.buf[d.cur].bytes(),
                                 cudaMemcpyDeviceToHost, d.stream.get()));
    SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
    d.unpack(d.host_halves.data(), out);
    return;
  }
  SEISRTM_CUDA(cudaMemcpy2DAsync(out, d.nx * sizeof(float), d.buf[d.cur].as<float>(), d.nxp * sizeof(float),
                                 d.nx * sizeof(float), d.ny * d.nz, cudaMemcpyDeviceToHost, d.stream.get()));
  SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
}

void CudaPropagator::traces(float* out) {
  Impl& d = *impl_;
  std::memcpy(out, d.host_traces.data(), d.host_traces.size() * sizeof(float));
}

void CudaPropagator::request_wavefield(long long cells) {
  Impl& d = *impl_;
  if (!d.pinned) return Propagator::request_wavefield(cells);
  // A device-to-device copy into the spare volume (in stream order, ~1 ms for 2 GB), then the
  // copy to pinned host memory on its own stream while the time loop goes on.
  SEISRTM_CUDA(cudaStreamSynchronize(d.copy_stream.get()));  // the previous copy is delivered
  SEISRTM_CUDA(cudaMemcpyAsync(d.spare.as<void>(), d.buf[d.cur].as<void>(), d.spare.bytes(), cudaMemcpyDeviceToDevice,
                               d.stream.get()));
  SEISRTM_CUDA(cudaEventRecord(d.snapshot_taken.get(), d.stream.get()));
  SEISRTM_CUDA(cudaStreamWaitEvent(d.copy_stream.get(), d.snapshot_taken.get()));
  SEISRTM_CUDA(
      cudaMemcpyAsync(d.pinned, d.spare.as<void>(), d.spare.bytes(), cudaMemcpyDeviceToHost, d.copy_stream.get()));
  d.snapshot_pending = true;
}

void CudaPropagator::receive_wavefield(float* out) {
  Impl& d = *impl_;
  if (!d.pinned) return Propagator::receive_wavefield(out);
  SEISRTM_CUDA(cudaStreamSynchronize(d.copy_stream.get()));
  d.unpack(d.pinned, out);
  d.snapshot_pending = false;
}

}  // namespace seisrtm
