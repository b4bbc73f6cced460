#include "solver/step_operator.hpp"

#include <cuda_fp16.h>

#include "solver/device_info.hpp"

namespace seisrtm {

StepOperator::StepOperator(const Problem& pb, const CudaOptions& opt, long long nxp, const DeviceModel& model,
                           bool half, int z_lo, int z_hi)
    : pb_(pb),
      opt_(opt),
      nxp_(nxp),
      model_(model),
      half_(half),
      anisotropic_(pb.anisotropic()),
      tilted_(pb.equation == Equation::tti),
      z_lo_(z_lo),
      z_hi_(z_hi) {
  tti_base_ = tti_args(pb, nxp, model.damp);
  tti_base_.z_lo = z_lo, tti_base_.z_hi = z_hi;
  if (anisotropic_) set_tti_model(tti_base_, model.m, model.tti);
}

void StepOperator::tune(bool compressible) {
  fused_shape_ = fused_shape_for(opt_.tuning, compressible, query_gpu(opt_.device).dram_bytes_per_second);
  if (opt_.variant == kernels::Variant::tma && !pb_.anisotropic()) {
    shape_ = tma_shape_for(opt_.tuning, pb_.radius, compressible, opt_.storage);
    chunk_rows_ = tma_chunk_rows(opt_.tuning);
    l2_hint_ = tma_l2_hint(opt_.tuning, pb_.radius, compressible, opt_.storage);
  }
}

void StepOperator::tune_forward(bool compressible) {
  if (opt_.variant != kernels::Variant::tma) return;
  if (!anisotropic_) shape_ = tma_shape_for(opt_.tuning, pb_.radius, compressible, opt_.storage);
  chunk_rows_ = tma_chunk_rows(opt_.tuning);
  l2_hint_ = tma_l2_hint(opt_.tuning, pb_.radius, compressible, opt_.storage);
  tti_base_.chunk_rows = chunk_rows_, tti_base_.l2_hint = l2_hint_;
}

kernels::AcousticArgs StepOperator::args(const DeviceWavefield& w, int c) const {
  kernels::AcousticArgs a =
      acoustic_args(pb_, nxp_, w.p[c].as<float>(), w.p[1 - c].as<float>(), model_.m.as<float>(), model_.damp);
  a.z_lo = z_lo_, a.z_hi = z_hi_;
  a.chunk_rows = chunk_rows_;
  a.l2_hint = l2_hint_;
  return a;
}

kernels::AcousticArgsHalf StepOperator::half_args(const DeviceWavefield& w, int c) const {
  kernels::AcousticArgsHalf a = acoustic_args(pb_, nxp_, w.p[c].as<__half>(), w.p[1 - c].as<__half>(),
                                              model_.m.as<__half>(), model_.damp, model_.model_scale);
  a.z_lo = z_lo_, a.z_hi = z_hi_;
  a.chunk_rows = chunk_rows_;
  a.l2_hint = l2_hint_;
  return a;
}

kernels::TtiArgsHalf StepOperator::half_tti_args(const DeviceWavefield& w, int c) const {
  const kernels::TtiArgs& f = tti_base_;
  const TtiVolumes& tti = model_.tti;
  kernels::TtiArgsHalf t;
  t.p = w.p[c].as<__half>();
  t.pn = w.p[1 - c].as<__half>();
  t.q = w.q[c].as<__half>();
  t.qn = w.q[1 - c].as<__half>();
  t.m = model_.m.as<__half>();
  t.a = tti.a.as<__half>();
  t.b = tti.b.as<__half>();
  t.theta = tilted_ ? tti.theta.as<__half>() : nullptr;
  t.phi = tilted_ ? tti.phi.as<__half>() : nullptr;
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
  t.m_scale = model_.model_scale;
  const float(&s)[4] = model_.tti_scales;
  t.a_scale = s[0], t.b_scale = s[1], t.theta_scale = s[2], t.phi_scale = s[3];
  return t;
}

void StepOperator::tti_step(const DeviceWavefield& w, int c, int lo, int hi, cudaStream_t on) const {
  const kernels::TtiMaps maps = tti_step_maps(w.tti_halo, w.tti_center, model_.tti_maps, c);
  if (half_) {
    kernels::TtiArgsHalf t = half_tti_args(w, c);
    t.z_lo = lo, t.z_hi = hi;
    kernels::launch_tti_step(t, tilted_, opt_.variant, pb_.radius, opt_.z_block, maps, on);
    return;
  }
  kernels::TtiArgs t = tti_base_;
  t.p = w.p[c].as<float>();
  t.pn = w.p[1 - c].as<float>();
  t.q = w.q[c].as<float>();
  t.qn = w.q[1 - c].as<float>();
  t.z_lo = lo, t.z_hi = hi;
  kernels::launch_tti_step(t, tilted_, opt_.variant, pb_.radius, opt_.z_block, maps, on);
}

void StepOperator::step(const DeviceWavefield& w, int c, int lo, int hi, cudaStream_t on) const {
  if (anisotropic_) return tti_step(w, c, lo, hi, on);
  const kernels::TmaMaps maps{&w.halo[c], &w.center[1 - c], &model_.tmap_m};
  if (half_) {
    kernels::AcousticArgsHalf a = half_args(w, c);
    a.z_lo = lo, a.z_hi = hi;
    kernels::launch_acoustic_step(a, opt_.variant, pb_.radius, opt_.z_block, maps, shape_, on);
    return;
  }
  kernels::AcousticArgs a = args(w, c);
  a.z_lo = lo, a.z_hi = hi;
  kernels::launch_acoustic_step(a, opt_.variant, pb_.radius, opt_.z_block, maps, shape_, on);
}

void StepOperator::fused(const kernels::FusedArgs& fa, const DeviceWavefield& s, const DeviceWavefield& r, int lo,
                         int hi, cudaStream_t on) const {
  const kernels::FusedMaps maps{&s.fused[s.cur], &r.fused[r.cur], &s.center[1 - s.cur], &r.center[1 - r.cur],
                                &model_.tmap_m};
  if (half_) {
    kernels::FusedArgsHalf h;
    h.s = half_args(s, s.cur);
    h.r = half_args(r, r.cur);
    h.s.z_lo = h.r.z_lo = lo, h.s.z_hi = h.r.z_hi = hi;
    h.image = fa.image, h.illumination = fa.illumination, h.image_level = fa.image_level;
    for (int a = 0; a < 3; ++a) h.box_lo[a] = fa.box_lo[a], h.box_hi[a] = fa.box_hi[a];
    h.s_scale = fa.s_scale, h.r_scale = fa.r_scale;
    kernels::launch_fused_backward(h, pb_.radius, opt_.z_block, maps, fused_shape_, on);
    return;
  }
  kernels::FusedArgs g = fa;
  g.s = args(s, s.cur);
  g.r = args(r, r.cur);
  g.s.z_lo = g.r.z_lo = lo, g.s.z_hi = g.r.z_hi = hi;
  kernels::launch_fused_backward(g, pb_.radius, opt_.z_block, maps, fused_shape_, on);
}

}  // namespace seisrtm
