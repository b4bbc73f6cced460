#include "solver/cuda_propagator.hpp"

#include <cuda.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

#include "kernels/cuda_check.hpp"
#include "kernels/tti.hpp"
#include "solver/capabilities.hpp"
#include "solver/device_info.hpp"
#include "solver/device_model.hpp"
#include "solver/device_points.hpp"
#include "solver/device_wavefield.hpp"
#include "solver/memory_watch.hpp"
#include "solver/numerics.hpp"
#include "solver/slab_overlap.hpp"
#include "solver/step_graph.hpp"
#include "solver/step_operator.hpp"
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

// The faster shape as measured (docs/BENCHMARKS.md, "RTM": the H100 and H200 figures):
// `compact`, two blocks an SM, in compressible memory and where DRAM is fast enough that one
// block an SM keeps too few bytes in flight; `wide`, one block an SM, in plain memory below that.
kernels::FusedShape fused_shape_for(const TmaTuning& t, bool compressible, double dram_bytes_per_second) {
  const bool compact = compressible || dram_bytes_per_second > kCompactFusedBandwidth;
  return t.fused_shape.value_or(compact ? kernels::FusedShape::compact : kernels::FusedShape::wide);
}

const char* fused_shape_name(kernels::FusedShape s) {
  switch (s) {
    case kernels::FusedShape::wide:
      return "wide";
    case kernels::FusedShape::compact:
      return "compact";
    case kernels::FusedShape::compact1:
      return "compact1";
  }
  return "?";
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
  // A spread a shot: the largest spread's arrays (one shot's are on the device at a time).
  std::size_t cells = p.receivers.cell.size();
  for (const PointSet& r : p.shot_receivers) cells = std::max(cells, r.cell.size());
  small += cells * 12 + static_cast<std::size_t>(p.max_receivers() + 1) * 4;
  small += static_cast<std::size_t>(p.max_receivers()) * CudaPropagator::kTraceBlock * sizeof(float);
  for (const auto& s : p.shots) small = std::max(small, small + s.cell.size() * 12);
  // Compressible allocations round up to the VMM granularity (2 MiB).
  const std::size_t round = o.memory == MemoryKind::compressible ? (2u << 20) : 0;
  f.total = device_volumes(p, o) * (f.volume + round) + small + (8u << 20);
  return f;
}

namespace {

// The receivers' traces: a block of kTraceBlock steps on the device (rows of every receiver),
// the whole gather on the host ([receiver][step]).
struct TraceGather {
  DeviceBuffer d_traces;
  std::vector<float> host, block_rows;
  // Copies trace rows [from, to) of the device block into host, times the field scale (fp16:
  // the receivers read p / field_scale, a power of two: exact).
  void copy(const Problem& pb, long long shot, long long from, long long to, float field_scale, cudaStream_t stream) {
    const long long nrec = pb.receivers_of(shot).size();
    if (nrec == 0 || to <= from) return;
    const long long r0 = from % CudaPropagator::kTraceBlock, rows = to - from;
    block_rows.resize(static_cast<size_t>(rows * nrec));
    SEISRTM_CUDA(cudaMemcpyAsync(block_rows.data(), d_traces.as<float>() + r0 * nrec, rows * nrec * sizeof(float),
                                 cudaMemcpyDeviceToHost, stream));
    SEISRTM_CUDA(cudaStreamSynchronize(stream));
    for (long long k = 0; k < rows; ++k)
      for (long long r = 0; r < nrec; ++r) host[r * pb.steps + from + k] = block_rows[k * nrec + r] * field_scale;
  }
};

// Asynchronous snapshots: the spare volume, pinned host memory (halves in fp16; freed by
// ~CudaPropagator), the copy stream and the event the copy waits for.
struct SnapshotCopy {
  CudaStream copy_stream;
  CudaEvent taken;
  DeviceBuffer spare;
  float* pinned = nullptr;
  bool pending = false;
  std::vector<__half> host_halves;  // a wavefield on its way out (fp16)
};

// CUDA events around the step launches of a segment, and their sum since begin_shot.
struct SteppingTimer {
  CudaEvent begin, end;
  double ms = 0;
};

}  // namespace

// The model, the field pair, the step operator and the shot's points, composed; the slab's
// overlap where the run is decomposed.
struct CudaPropagator::Impl {
  const Problem& pb;
  CudaOptions opt;
  VolumeDims dims;
  // fp16 storage: the field holds p / field_scale (chosen per shot) and the model m /
  // model_scale, each a power of two (solver/storage.hpp); 1 in fp32.
  bool half = false;
  float field_scale = 1;
  DeviceModel model;
  DeviceWavefield w;  // p^n lives in w.p[w.cur], p^{n-1} in the other (and q alike)
  std::unique_ptr<StepOperator> op;
  // The source: its injection entries and the wavelet they inject.
  struct Source {
    PointSource points;
    DeviceBuffer wavelet;
  } source;
  Recording rec;
  long long shot = 0;  // the shot begin_shot selected (a spread a shot: its receivers in rec)
  // The steps taken: the device's counter (the injections' and recordings' sample) and the
  // host's count of the shot's steps advanced.
  struct Steps {
    DeviceBuffer counter;
    long long done = 0;
  } steps;
  DeviceBuffer flag;
  TraceGather traces;
  // One slab of a z decomposition: its own planes in three parts (the edge planes sent up and
  // down, the interior) and the exchange beside the interior (connected: every step
  // exchanges). Null for a run on one device.
  std::unique_ptr<SlabOverlap> overlap;
  CudaEvent step_done;  // a slab's step complete (counter advanced)
  CudaStream stream;
  SnapshotCopy snap;
  SteppingTimer timer;
  PairGraphs graphs;
  MemoryWatch mem;

  Impl(const Problem& p, const CudaOptions& o) : pb(p), opt(o) {}

  void allocate(const DeviceFootprint& fp, std::string* warning);
  void upload_points(const DeviceFootprint& fp);

  // The stored p of a level as floats in the unpadded layout, from `rows` (ny nz rows of nxp
  // elements, halves in fp16).
  void unpack(const void* rows, float* out) {
    const long long nx = dims.nx, nxp = dims.nxp, planes = dims.ny * dims.nz;
    if (!half) {
      const float* r = static_cast<const float*>(rows);
      for (long long k = 0; k < planes; ++k) std::memcpy(out + k * nx, r + k * nxp, nx * sizeof(float));
      return;
    }
    const __half* r = static_cast<const __half*>(rows);
    const float s = field_scale;
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < planes; ++k)
      for (long long x = 0; x < nx; ++x) out[k * nx + x] = __half2float(r[k * nxp + x]) * s;
  }

  // The source entries [first, first + count) into p (and q) of the new level, in stream `on`.
  void inject(int c, int first, int count, cudaStream_t on) {
    const kernels::PointArgs a = source.points.part(first, count);
    if (pb.anisotropic())  // the source enters p and q alike (validation/cpu_tti.hpp)
      kernels::launch_inject(w.q[1 - c].as<float>(), a, source.wavelet.as<float>(), steps.counter.as<int>(), on);
    kernels::launch_inject(w.p[1 - c].as<float>(), a, source.wavelet.as<float>(), steps.counter.as<int>(), on);
  }

  // One step of a slab (SlabOverlap), once the previous step is done: the edge planes, their
  // sources and the exchange beside the interior planes (which read no halo plane) and their
  // sources; then, once the halos are in, the receivers and the step counter. The edges run
  // beside the interior, not before it: launched ahead of it on one stream, the small edge
  // kernels and their tails would be paid every step (docs/BENCHMARKS.md, "Several GPUs").
  void slab_step(int c) {
    const cudaStream_t m = stream.get();
    const SlabOverlap& o = *overlap;
    const bool aniso = pb.anisotropic();
    float* fields[2] = {w.p[1 - c].as<float>(), aniso ? w.q[1 - c].as<float>() : nullptr};
    overlap->step(
        m, step_done.get(),
        [&](cudaStream_t h) {
          op->step(w, c, o.lo(0), o.hi(0), h);
          op->step(w, c, o.lo(2), o.hi(2), h);
          inject(c, 0, source.points.edge_entries, h);
        },
        fields, aniso ? 2 : 1, dims.nxp * dims.ny,
        [&](cudaStream_t on) {
          op->step(w, c, o.lo(1), o.hi(1), on);
          inject(c, source.points.edge_entries, source.points.entries - source.points.edge_entries, on);
        });
    record_and_count<float>(c);
    SEISRTM_CUDA(cudaEventRecord(step_done.get(), m));
  }

  template <class T>
  void record_and_count(int c) {
    kernels::launch_record(w.p[1 - c].as<T>(), rec.args, traces.d_traces.as<float>(), kTraceBlock,
                           steps.counter.as<int>(), stream.get());
    kernels::launch_advance_step(steps.counter.as<int>(), stream.get());
  }

  // One time step from buffer c: stencil, source, receivers, step counter.
  void step(int c) {
    if (overlap && overlap->connected()) return slab_step(c);
    if (half) return step_with<__half>(c);
    step_with<float>(c);
  }
  // The step of the whole volume with the fields as T (float, or halves in fp16; vti/tti take
  // q beside p, and the source enters q first).
  template <class T>
  void step_with(int c) {
    const kernels::PointArgs a = source.points.all();
    op->step(w, c, stream.get());
    if (pb.anisotropic())
      kernels::launch_inject(w.q[1 - c].as<T>(), a, source.wavelet.as<float>(), steps.counter.as<int>(), stream.get());
    kernels::launch_inject(w.p[1 - c].as<T>(), a, source.wavelet.as<float>(), steps.counter.as<int>(), stream.get());
    record_and_count<T>(c);
  }

  const CudaGraphExec& pair_graph(int c) {
    return graphs.at(
        c, stream.get(),
        [&](int from) {
          step(from);
          step(1 - from);
        },
        [&] { mem.sample(); });
  }

  void encode_tensor_maps() {
    const int eb = kernels::storage_bytes(opt.storage);
    if (pb.anisotropic()) {
      encode_tti_maps(w.p, w.q, dims, pb.radius, eb, w.tti_halo, w.tti_center);
      encode_tti_model_maps(model.m, model.tti, pb.equation == Equation::tti, dims, pb.radius, eb, model.tti_maps);
      return;
    }
    encode_acoustic_maps(w.p, dims, pb.radius, eb, w.halo, w.center);
    encode_volume_map(&model.tmap_m, model.m.as<void>(), dims.nxp, dims.ny, dims.nz, kernels::tma_center_box(), eb);
  }

  void check_finite(long long n) {
    SEISRTM_CUDA(cudaMemsetAsync(flag.as<int>(), 0, sizeof(int), stream.get()));
    const long long cells = dims.nxp * dims.ny * dims.nz;
    for (const DeviceBuffer* f : {&w.p[w.cur], pb.anisotropic() ? &w.q[w.cur] : nullptr}) {
      if (f == nullptr) continue;
      if (half)
        kernels::launch_check_finite(f->as<__half>(), cells, flag.as<int>(), stream.get());
      else
        kernels::launch_check_finite(f->as<float>(), cells, flag.as<int>(), stream.get());
    }
    int h = 0;
    SEISRTM_CUDA(cudaMemcpyAsync(&h, flag.as<int>(), sizeof(int), cudaMemcpyDeviceToHost, stream.get()));
    SEISRTM_CUDA(cudaStreamSynchronize(stream.get()));
    if (overlap) h = any_rank(h != 0);  // every slab stops at the same step
    if (h && half)                      // overflow of a half: beyond 65504 field scales
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

// The fields and the model: p's two levels, m = v^2 dt^2 (vti/tti: vp, the vertical speed),
// vti/tti q's two levels and a = 1 + 2 eps, b = sqrt(1 + 2 delta) and tti the angles (radians),
// each computed in double and rounded once, as the CPU reference does; the snapshots' spare.
void CudaPropagator::Impl::allocate(const DeviceFootprint& fp, std::string* warning) {
  for (auto& b : w.p) b = DeviceBuffer(fp.volume, opt.memory, warning);
  const double dt2 = pb.dt * pb.dt;
  auto m_value = [&](long long i) { return double(pb.vp[i]) * double(pb.vp[i]) * dt2; };
  if (half) {
    model.m = half_model_volume(pb, dims.nxp, opt.memory, warning, m_value, &model.model_scale);
  } else {
    model.m = model_volume(pb, dims.nxp, opt.memory, warning, m_value);
  }
  if (pb.anisotropic()) {
    for (auto& b : w.q) b = DeviceBuffer(fp.volume, opt.memory, warning);
    model.tti = half ? tti_volumes_half(pb, dims.nxp, opt.memory, warning, model.tti_scales)
                     : tti_volumes(pb, dims.nxp, opt.memory, warning);
  }
  if (opt.snapshots) snap.spare = DeviceBuffer(fp.volume, MemoryKind::plain);
}

// The damping profiles, the wavelet, the receivers, the step counter and the trace block.
void CudaPropagator::Impl::upload_points(const DeviceFootprint& fp) {
  for (int a = 0; a < 3; ++a) model.damp[a] = upload(pb.damping[a]);
  op = std::make_unique<StepOperator>(pb, opt, dims.nxp, model, half, 0, -1);
  op->tune_forward(w.p[0].compressible());
  source.wavelet = upload(pb.wavelet);
  rec = make_recording(pb.receivers, dims);
  steps.counter = DeviceBuffer(sizeof(int), MemoryKind::plain);
  flag = DeviceBuffer(sizeof(int), MemoryKind::plain);
  // The largest spread's rows (a spread a shot: begin_shot records each shot's own).
  traces.d_traces =
      DeviceBuffer(std::max<std::size_t>(1, pb.max_receivers() * kTraceBlock) * sizeof(float), MemoryKind::plain);
  traces.host.assign(static_cast<size_t>(pb.max_receivers() * pb.steps), 0.0f);
  if (opt.snapshots) SEISRTM_CUDA(cudaMallocHost(&snap.pinned, fp.volume));  // halves in fp16
}

// The device is made current first: the streams and events of Impl belong to it.
CudaPropagator::CudaPropagator(const Problem& pb, const CudaOptions& opt)
    : impl_((select_device(opt), std::make_unique<Impl>(pb, opt))) {
  Impl& d = *impl_;
  d.dims.nx = pb.grid.n[0];
  d.dims.ny = pb.grid.n[1];
  d.dims.nz = pb.grid.n[2];
  d.dims.nxp = (d.dims.nx + kRowAlign - 1) / kRowAlign * kRowAlign;
  if (d.dims.nx > (1LL << 31) - 1 || d.dims.ny > (1LL << 31) - 1 || d.dims.nz > (1LL << 31) - 1)
    throw Error("grid.shape too large for the cuda backend");
  const DeviceFootprint fp = device_footprint(pb, opt);
  std::size_t free_b = 0, total_b = 0;
  SEISRTM_CUDA(cudaMemGetInfo(&free_b, &total_b));
  d.mem.free_at_start = d.mem.lowest_free = free_b;
  d.mem.volume_bytes = fp.volume;
  if (fp.total > free_b)
    throw Error("the problem needs " + gib(fp.total) + " of GPU memory (" + std::to_string(device_volumes(pb, opt)) +
                " volumes of " + gib(fp.volume) + " plus buffers) but the GPU has " + gib(free_b) + " free of " +
                gib(total_b) + "; shrink grid.shape" + (opt.snapshots ? " or set output.snapshot_interval: 0" : ""));

  d.half = opt.storage == kernels::Storage::fp16;
  if (const std::string why = cannot_implement({opt.variant, pb.equation, opt.storage}, nullptr); !why.empty())
    throw Error("solver.kernel " + std::string(variant_name(opt.variant)) + ": " + why);
  std::string warning;
  d.allocate(fp, &warning);
  if (!warning.empty()) notes_.push_back(warning);
  d.upload_points(fp);
  if (opt.variant == kernels::Variant::tma) d.encode_tensor_maps();
  // A first launch outside any capture sets the kernels' attributes (shared-memory limits).
  begin_shot(0);
  d.step(0);
  SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
  d.mem.sample();
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
  d.overlap = std::make_unique<SlabOverlap>(slab);  // one slab: no NCCL needed
}

double CudaPropagator::halo_seconds() const {
  return impl_->overlap ? impl_->overlap->seconds() : 0;
}

void CudaPropagator::connect() {
  if (impl_->overlap) impl_->overlap->connect();
}

Propagator::DeviceMemory CudaPropagator::device_memory() const {
  return {impl_->mem.free_at_start - impl_->mem.lowest_free, impl_->mem.volume_bytes};
}

CudaPropagator::~CudaPropagator() {
  if (impl_ && impl_->snap.pinned) cudaFreeHost(impl_->snap.pinned);
}

std::string CudaPropagator::name() const {
  const Impl& d = *impl_;
  const char* v = variant_name(d.opt.variant);
  const GpuInfo g = query_gpu(d.opt.device);
  const bool tma = d.opt.variant == kernels::Variant::tma;
  const bool aniso = d.pb.anisotropic();
  const StepOperator& op = *d.op;
  const std::string shape = !tma    ? ""
                            : aniso ? tma_settings_text(op.l2_hint(), op.chunk_rows(), d.half, true)
                                    : std::string(" (") + kernels::tma_shape_name(op.shape()) + ")" +
                                          tma_settings_text(op.l2_hint(), op.chunk_rows(), d.half, false);
  const std::string storage = d.half ? ", fp16 storage" : "";
  return std::string("cuda ") + (aniso ? to_text(d.pb.equation) + " " : "") + v + shape + storage + ", z_block " +
         std::to_string(d.opt.z_block) + ", " + (d.w.p[0].compressible() ? "compressible" : "plain") +
         " memory, graphs " + (d.opt.graphs ? "on" : "off") + " on " + g.name;
}

void CudaPropagator::begin_shot(long long shot) {
  Impl& d = *impl_;
  SEISRTM_CUDA(cudaStreamSynchronize(d.snap.copy_stream.get()));
  for (auto& b : d.w.p) SEISRTM_CUDA(cudaMemsetAsync(b.as<void>(), 0, b.bytes(), d.stream.get()));
  if (d.pb.anisotropic())
    for (auto& b : d.w.q) SEISRTM_CUDA(cudaMemsetAsync(b.as<void>(), 0, b.bytes(), d.stream.get()));
  SEISRTM_CUDA(cudaMemsetAsync(d.steps.counter.as<int>(), 0, sizeof(int), d.stream.get()));
  // A slab's edge-plane entries first: they are injected before the exchange.
  SourceEntries e = source_entries(d.pb, d.pb.shots[shot], d.dims, d.overlap.get());
  if (d.half) {  // the shot's field scale, the CPU emulation's; the source adds to p / s (a power of two: exact)
    d.field_scale = source_field_scale(d.pb, shot, kHalfPeakExponent, "the shot");
    for (float& c : e.coef) c /= d.field_scale;
  }
  SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
  upload_source(e, d.source.points);
  // A spread a shot: the shot's receivers (the previous arrays are idle: the stream synchronized).
  d.shot = shot;
  if (d.pb.varying_spread()) d.rec = make_recording(d.pb.receivers_of(shot), d.dims);
  // A slab's first edge step waits for this: the zeroed fields (halo_stream does not follow the
  // main stream otherwise).
  SEISRTM_CUDA(cudaEventRecord(d.step_done.get(), d.stream.get()));
  d.graphs.reset();  // source arrays changed: capture again
  std::fill(d.traces.host.begin(), d.traces.host.end(), 0.0f);
  d.w.cur = 0;
  d.steps.done = 0;
  d.timer.ms = 0;
  if (d.overlap) d.overlap->reset_seconds();
}

double CudaPropagator::stepping_seconds() const {
  return impl_->timer.ms * 1e-3;
}

bool CudaPropagator::compressible() const {
  return impl_->w.p[0].compressible();
}

void CudaPropagator::advance(long long first, long long count) {
  Impl& d = *impl_;
  if (first != d.steps.done) throw Error("cuda backend: steps must be advanced in order");
  long long n = first;
  const long long end = first + count;
  while (n < end) {
    // Segments end on trace-block boundaries: the block is copied out and checked there.
    const long long seg_end = std::min(end, (n / kTraceBlock + 1) * kTraceBlock);
    long long k = seg_end - n;
    const long long seg_start = n;
    if (d.opt.graphs && k >= 2) d.pair_graph(d.w.cur);  // capture outside the timed span
    SEISRTM_CUDA(cudaEventRecord(d.timer.begin.get(), d.stream.get()));
    if (d.opt.graphs) {
      for (; k >= 2; k -= 2) d.pair_graph(d.w.cur).launch(d.stream.get());  // two steps: cur unchanged
    }
    for (; k > 0; --k) {
      d.step(d.w.cur);
      d.w.flip();
    }
    SEISRTM_CUDA(cudaEventRecord(d.timer.end.get(), d.stream.get()));
    n = seg_end;
    d.traces.copy(d.pb, d.shot, seg_start, n, d.field_scale, d.stream.get());
    SEISRTM_CUDA(cudaEventSynchronize(d.timer.end.get()));
    float ms = 0;
    SEISRTM_CUDA(cudaEventElapsedTime(&ms, d.timer.begin.get(), d.timer.end.get()));
    d.timer.ms += ms;
    if (d.overlap) d.overlap->flush();
    if (n % kTraceBlock == 0 || n == d.pb.steps) d.check_finite(n);
  }
  d.steps.done = end;
  d.mem.sample();
}

void CudaPropagator::wavefield(float* out) {
  Impl& d = *impl_;
  const DeviceBuffer& p = d.w.p[d.w.cur];
  if (d.half) {
    d.snap.host_halves.resize(static_cast<size_t>(d.dims.nxp * d.dims.ny * d.dims.nz));
    SEISRTM_CUDA(
        cudaMemcpyAsync(d.snap.host_halves.data(), p.as<void>(), p.bytes(), cudaMemcpyDeviceToHost, d.stream.get()));
    SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
    d.unpack(d.snap.host_halves.data(), out);
    return;
  }
  SEISRTM_CUDA(cudaMemcpy2DAsync(out, d.dims.nx * sizeof(float), p.as<float>(), d.dims.nxp * sizeof(float),
                                 d.dims.nx * sizeof(float), d.dims.ny * d.dims.nz, cudaMemcpyDeviceToHost,
                                 d.stream.get()));
  SEISRTM_CUDA(cudaStreamSynchronize(d.stream.get()));
}

void CudaPropagator::traces(float* out) {
  Impl& d = *impl_;
  std::memcpy(out, d.traces.host.data(),
              static_cast<size_t>(d.pb.receivers_of(d.shot).size() * d.pb.steps) * sizeof(float));
}

void CudaPropagator::request_wavefield(long long cells) {
  Impl& d = *impl_;
  SnapshotCopy& s = d.snap;
  if (!s.pinned) return Propagator::request_wavefield(cells);
  // A device-to-device copy into the spare volume (in stream order, ~1 ms for 2 GB), then the
  // copy to pinned host memory on its own stream while the time loop goes on.
  SEISRTM_CUDA(cudaStreamSynchronize(s.copy_stream.get()));  // the previous copy is delivered
  SEISRTM_CUDA(cudaMemcpyAsync(s.spare.as<void>(), d.w.p[d.w.cur].as<void>(), s.spare.bytes(), cudaMemcpyDeviceToDevice,
                               d.stream.get()));
  SEISRTM_CUDA(cudaEventRecord(s.taken.get(), d.stream.get()));
  SEISRTM_CUDA(cudaStreamWaitEvent(s.copy_stream.get(), s.taken.get()));
  SEISRTM_CUDA(
      cudaMemcpyAsync(s.pinned, s.spare.as<void>(), s.spare.bytes(), cudaMemcpyDeviceToHost, s.copy_stream.get()));
  s.pending = true;
}

void CudaPropagator::receive_wavefield(float* out) {
  Impl& d = *impl_;
  if (!d.snap.pinned) return Propagator::receive_wavefield(out);
  SEISRTM_CUDA(cudaStreamSynchronize(d.snap.copy_stream.get()));
  d.unpack(d.snap.pinned, out);
  d.snap.pending = false;
}

}  // namespace seisrtm
