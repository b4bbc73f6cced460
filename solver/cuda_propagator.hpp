#pragma once
// The CUDA backend: the physics and outputs of the CPU reference on the GPU (DESIGN.md
// section 5). Three volumes live on the device (p, p_prev, m = v^2 dt^2), plus one spare when
// snapshots are taken; the damping profiles are three 1D arrays. vti and tti keep q and its
// previous level and the model volumes of kernels/tti.hpp too (7 and 9 volumes).
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "kernels/acoustic.hpp"
#include "kernels/rtm.hpp"
#include "kernels/tti.hpp"
#include "solver/decomposition.hpp"
#include "solver/device_buffer.hpp"
#include "solver/propagator.hpp"

namespace seisrtm {

// Tuning of the tma kernels: an A/B axis of `seisrtm bench` (its flags --tma-shape,
// --fused-shape, --chunk-rows and --l2-hint, app/tuning.hpp) and of the GPU tests; run, migrate
// and validate leave it empty. Each unset choice is the policy's.
struct TmaTuning {
  std::optional<kernels::TmaShape> shape;          // the acoustic forward kernel's thread shape
  std::optional<int> chunk_rows;                   // tile rows a chunk of the launch order; 0 whole layers
  std::optional<int> l2_hint;                      // 0 none, 1 read-once loads evict-first, 2 and the halos evict-last
  std::optional<kernels::FusedShape> fused_shape;  // the fused backward step's launch shape
};

struct CudaOptions {
  kernels::Variant variant = kernels::Variant::tma;
  int z_block = 0;
  MemoryKind memory = MemoryKind::plain;
  // fp16: the fields and the model in halves (naive or tma; solver/storage.hpp for the scales).
  kernels::Storage storage = kernels::Storage::fp32;
  bool graphs = true;
  bool snapshots = false;  // reserve the spare volume for asynchronous snapshot copies
  int device = 0;          // the CUDA device this propagator runs on (made current by it)
  TmaTuning tuning;
};

// From the config: solver.kernel auto is tma where the device has it (compute capability 9.0),
// else smem (naive for fp16 storage).
CudaOptions cuda_options(const Config& c);
// The acoustic tma kernel's shape for a radius, memory kind and storage: the tuning's, else
// kernels::tma_shape_policy.
kernels::TmaShape tma_shape_for(const TmaTuning& t, int radius, bool compressible,
                                kernels::Storage storage = kernels::Storage::fp32);
// The tma kernels' launch order (kernels::AcousticArgsT::chunk_rows, TtiArgsT::chunk_rows): the
// tuning's tile rows a chunk (0 = whole layers), else -1, the policy.
int tma_chunk_rows(const TmaTuning& t);
// The tma kernels' L2 hints (kernels::AcousticArgsT::l2_hint, TtiArgsT::l2_hint): the tuning's,
// else kernels::tma_l2_hint_policy.
int tma_l2_hint(const TmaTuning& t, int radius, bool compressible, kernels::Storage storage);
// The fused backward step's launch shape: the tuning's, else the faster one of the memory kind
// and the device's peak DRAM bandwidth (GpuInfo::dram_bytes_per_second): compact in compressible
// memory, and in plain memory on a device of more than kCompactFusedBandwidth; wide otherwise.
inline constexpr double kCompactFusedBandwidth = 4e12;
kernels::FusedShape fused_shape_for(const TmaTuning& t, bool compressible, double dram_bytes_per_second);
const char* fused_shape_name(kernels::FusedShape s);
// What a kernel name adds for the tma forward kernel's loads and launch order: the L2 hints it
// takes (none with fp16 storage; anisotropic: vti/tti's loads) and a launch order forced by
// bench --chunk-rows (chunk_rows >= 0; -1, the policy, adds nothing).
std::string tma_settings_text(int l2_hint, int chunk_rows, bool half, bool anisotropic);
// Makes o.device current and refuses a variant the device cannot run (tma below 9.0).
void select_device(const CudaOptions& o);

// The step arguments of a padded volume pair (rows of nxp floats): p = level n, pn = level
// n - 1 on entry, n + 1 on exit; the problem's weights, damping (device arrays) and surface.
// T = __half (fp16 storage): model_scale, the power of two the model is stored divided by, is
// folded into the weights (exact), so the kernels multiply the stored m as they would m.
template <class T>
kernels::AcousticArgsT<T> acoustic_args(const Problem& pb, long long nxp, const T* p, T* pn, const T* m,
                                        const DeviceBuffer (&damp)[3], float model_scale = 1);
// The model m = v^2 dt^2 in fp16 storage: value(cell) rounded to float, divided by the power of
// two at or below the largest (*scale receives it) and rounded to the nearest half, as
// validation::CpuWave::store_as_half does.
DeviceBuffer half_model_volume(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning,
                               const std::function<double(long long)>& value, float* scale);

// The vti/tti step arguments of a problem (weights, first-derivative weights, damping, sizes);
// the caller sets the field and model pointers.
kernels::TtiArgs tti_args(const Problem& pb, long long nxp, const DeviceBuffer (&damp)[3]);
// A model volume on the device in the padded layout (rows of nxp floats; pad columns zero,
// never written) from value(cell), computed in double and rounded once, as the CPU reference.
DeviceBuffer model_volume(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning,
                          const std::function<double(long long)>& value);
// The vti/tti model volumes besides m: a = 1 + 2 epsilon, b = sqrt(1 + 2 delta) and, for tti,
// the angles (radians, reduced to [-pi, pi]); theta and phi stay empty for vti. Shared by the
// forward backend and the migrator, so that both step the same model bit for bit.
struct TtiVolumes {
  DeviceBuffer a, b, theta, phi;
};
TtiVolumes tti_volumes(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning);
// The same in fp16 storage: each volume over its own power-of-two scale in halves (scales: a, b,
// theta, phi).
TtiVolumes tti_volumes_half(const Problem& pb, long long nxp, MemoryKind kind, std::string* warning,
                            float (&scales)[4]);
// Points the step arguments at m and the vti/tti volumes (the angles null for vti).
void set_tti_model(kernels::TtiArgs& args, const DeviceBuffer& m, const TtiVolumes& v);
// Volumes a run keeps on the device: 3 (acoustic), 7 (vti), 9 (tti), + 1 spare for snapshots.
int device_volumes(const Problem& p, const CudaOptions& o);

// Device bytes a run needs; checked against free memory before any allocation.
struct DeviceFootprint {
  std::size_t volume = 0;  // one padded volume
  std::size_t total = 0;
};
DeviceFootprint device_footprint(const Problem& p, const CudaOptions& o);

class CudaPropagator final : public Propagator {
 public:
  CudaPropagator(const Problem& problem, const CudaOptions& options);
  // One slab of a z decomposition (solver/decomposition.hpp): `problem` is the slab's. Each step
  // computes the edge planes the neighbours need first, exchanges them (NCCL, on a stream of its
  // own) while the interior planes are computed, and records the receivers once the halos are in.
  // Graphs are off (the exchange is not captured). connect() must follow on every rank before
  // the first shot.
  CudaPropagator(const Problem& problem, const CudaOptions& options, const Slab& slab);
  // Collective: the NCCL communicator of a slab run (no-op otherwise).
  void connect();
  ~CudaPropagator() override;
  std::string name() const override;
  void begin_shot(long long shot) override;
  void advance(long long first, long long count) override;
  void wavefield(float* out) override;
  void traces(float* out) override;
  void request_wavefield(long long cells) override;
  void receive_wavefield(float* out) override;
  std::vector<std::string> notes() const override { return notes_; }
  // Measured with cudaMemGetInfo: free memory before the first allocation minus the lowest
  // free memory seen since (after set-up, graph instantiation and every advance).
  DeviceMemory device_memory() const override;
  // Seconds of time stepping since begin_shot, from CUDA events around the step launches only
  // (trace copy-out and the NaN/Inf check between trace blocks are not counted).
  double stepping_seconds() const;
  // A slab's: seconds its halo exchanges took on their stream since begin_shot (CUDA events
  // around each step's NCCL group; the interior is computed meanwhile).
  double halo_seconds() const;
  // Whether the volumes really are compressible (solver.memory compressible falls back to plain
  // where the GPU or driver does not support it).
  bool compressible() const;

  static constexpr int kTraceBlock = 256;  // steps per trace copy-out and NaN/Inf check

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> notes_;
};

}  // namespace seisrtm
