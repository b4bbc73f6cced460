// [cpu] Half-precision storage, emulated on the CPU reference (validation/half.hpp,
// CpuWave::store_as_half): its error against float storage on the analytic point-source test, on
// the quickstart's traces and on a migrated image, the figures the GPU's fp16 kernels will be
// held to.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/plot.hpp"
#include "solver/problem.hpp"
#include "tests/catch.hpp"
#include "validation/analytic.hpp"
#include "validation/cpu_migration.hpp"
#include "validation/cpu_propagator.hpp"
#include "validation/half.hpp"
#include "validation/norms.hpp"

using namespace seisrtm;
using namespace seisrtm::validation;

namespace {

// The field scale puts one step's largest injection in [2^kPeak, 2^(kPeak + 1)). In this file's
// runs (printed by them) the field's largest |value| over a run is 2^1.1 (the analytic test) to 2^4.4
// (the quickstart, its source 20 m under a free surface) times that injection. kPeak = 8 keeps
// the quickstart's largest value (sampled every 10 steps) at 2^12.4, 8 times below the largest
// half (65504, about 2^16), and a value 2^-14 / 2^8 = 2.4e-7 of the injection still stores with
// full precision (2^-24 / 2^8 at all).
constexpr int kPeak = 8;

struct Run {
  std::vector<float> traces, field;
  double largest_stored = 0;  // largest |p| / field scale over the run (half storage)
  float scale = 0;            // the field scale (half storage)
};

// half: 0 float storage, 1 model and levels in halves, 2 the model only, 3 the levels only,
// 4 model and increments in halves, 5 model and levels in bfloat16 (validation/half.hpp).
Run simulate(const Problem& p, int half, long long chunk = 20) {
  CpuPropagator prop(p);
  if (half)
    prop.store_as_half(kPeak, half != 3,
                       half == 2   ? HalfFields::none
                       : half == 4 ? HalfFields::increments
                                   : HalfFields::levels,
                       half == 5 ? HalfFormat::bfloat16 : HalfFormat::binary16);
  prop.begin_shot(0);
  Run r{std::vector<float>(p.receivers.size() * p.steps), std::vector<float>(p.grid.cells()), 0};
  for (long long n = 0; n < p.steps; n += chunk) {
    prop.advance(n, std::min(chunk, p.steps - n));
    if (half == 0 || half == 2) continue;
    prop.wavefield(r.field.data());
    r.largest_stored = std::max(r.largest_stored, max_abs(r.field.data(), r.field.size()) / prop.half_scale());
  }
  prop.traces(r.traces.data());
  prop.wavefield(r.field.data());
  r.scale = prop.half_scale();
  return r;
}

// With SEISRTM_STUDY_PICTURES set (a folder), the study's difference pictures are written there
// (docs/img has them): `picture(name, image)`.
void picture(const std::string& name, io::Image2D im) {
  const char* dir = std::getenv("SEISRTM_STUDY_PICTURES");
  if (dir == nullptr || *dir == 0) return;
  io::write_image(std::string(dir) + "/" + name + ".png", im);
}

}  // namespace

TEST_CASE("half storage: the analytic point-source traces as with float storage, within 1%", "[cpu]") {
  // The homogeneous test of test_physics (v = 2000 m/s, Ricker 12 Hz, 8th order, h = 10 m).
  const double v = 2000, f = 12, delay = 1.2 / f;
  const std::string yaml =
      "grid: {shape: [141, 141, 141], spacing: 10}\ntime: {steps: 190}\nmodel: {vp: 2000}\n"
      "sources: {wavelet: {peak_frequency: 12}, shots: [[700, 700, 700]]}\n"
      "receivers: {list: [[800, 700, 700], [700, 900, 700], [700, 700, 1000]]}\n";
  const Problem p = build_problem(parse_config(yaml));
  const Run single = simulate(p, 0), half = simulate(p, 1);
  const double dist[3] = {100, 200, 300};
  for (int r = 0; r < 3; ++r) {
    auto trace = [&](const Run& run) {
      return std::vector<double>(run.traces.begin() + r * p.steps, run.traces.begin() + (r + 1) * p.steps);
    };
    const auto ref = point_source_trace(dist[r], v, f, delay, p.dt, p.steps);
    const double e_single = relative_l2(trace(single), ref), e_half = relative_l2(trace(half), ref);
    const double e_between = relative_l2(trace(half), trace(single));
    std::printf(
        "half storage, analytic r = %.0f m: rel L2 against the analytic trace %.3e (float storage %.3e), "
        "against float storage %.3e\n",
        dist[r], e_half, e_single, e_between);
    // The accuracy goal's bound on what half storage may add; the float run's own error (the leapfrog's
    // dispersion, test_physics) is not half storage's.
    CHECK(e_between <= 1e-2);
    CHECK(e_between > 1e-5);  // the emulation is on: float storage alone would give 0
  }
  std::printf("half storage, analytic: largest stored |p| / scale %.1f (2^%.2f)\n", half.largest_stored,
              std::log2(half.largest_stored));
  CHECK(half.largest_stored < 65504.0 / 8);  // the headroom kPeak's comment states
}

TEST_CASE("half storage: the quickstart's traces as with float storage, within 1%", "[cpu]") {
  const Problem p = build_problem(load_config(SEISRTM_SOURCE_DIR "/configs/quickstart.yaml"));
  const Run single = simulate(p, 0, 10), half = simulate(p, 1, 10);
  const long long nr = p.receivers.size();
  auto report = [&](const char* what, const Run& run) {
    const double e_traces = relative_l2(run.traces.data(), single.traces.data(), single.traces.size());
    const double e_field = relative_l2(run.field.data(), single.field.data(), single.field.size());
    // The worst receiver (each trace against its own energy).
    double worst = 0;
    long long at = 0;
    for (long long r = 0; r < nr; ++r) {
      const double e = relative_l2(run.traces.data() + r * p.steps, single.traces.data() + r * p.steps,
                                   static_cast<size_t>(p.steps));
      if (e > worst) worst = e, at = r;
    }
    std::printf(
        "half storage, quickstart (%lld steps), %s: traces rel L2 %.3e (worst receiver %.3e, number %lld of "
        "%lld), final wavefield %.3e\n",
        p.steps, what, e_traces, worst, at, nr, e_field);
    return std::pair{e_traces, worst};
  };
  const double e_levels = report("model and levels in halves", half).first;
  {
    const io::Point3 src = p.shots[0].position[0];
    std::vector<float> diff(single.traces.size());
    for (size_t i = 0; i < diff.size(); ++i) diff[i] = half.traces[i] - single.traces[i];
    io::Image2D a = io::gather_picture(single.traces, nr, p.steps, p.dt, p.receivers.position, src);
    a.title = "quickstart, float storage: " + a.title;
    picture("half_storage_quickstart_gather_float", a);
    io::Image2D b = io::gather_picture(diff, nr, p.steps, p.dt, p.receivers.position, src);
    b.title = "half (levels) - float storage: " + b.title;
    picture("half_storage_quickstart_gather_difference", b);
  }
  // The error's parts (printed for docs/BENCHMARKS.md): with the study's pictures only.
  if (std::getenv("SEISRTM_STUDY_PICTURES")) {
    report("model only", simulate(p, 2, 50));
    report("levels only", simulate(p, 3, 50));
  }
  // bfloat16 instead of binary16, the other 16-bit format, for comparison: the same bytes, 8
  // significant bits instead of 11.
  const double e_bf16 = report("model and levels in bfloat16", simulate(p, 5, 50)).first;
  CHECK(e_bf16 > e_levels);
  const Run inc = simulate(p, 4, 10);
  const double e_increments = report("model and increments in halves", inc).first;
  std::printf("half storage, quickstart: largest stored |p| / scale %.1f (2^%.2f), increments %.1f\n",
              half.largest_stored, std::log2(half.largest_stored), inc.largest_stored);
  // The accuracy goal's bound, on the traces together (each trace against its own energy is printed: the
  // weakest exceed it). Above 1e-5: the emulation is on.
  CHECK(e_levels <= 1e-2);
  CHECK(e_levels > 1e-5);
  CHECK(e_increments <= 1e-2);
  CHECK(e_increments > 1e-5);
  // The headroom kPeak's comment states, the field sampled every 10 steps.
  CHECK(half.largest_stored < 65504.0 / 8);
  CHECK(inc.largest_stored < 65504.0 / 8);
}

TEST_CASE("half storage: a migrated image as with float storage, within 1%", "[cpu]") {
  // A flat reflector (2000 over 2600 m/s at 400 m) observed with float storage, migrated in the
  // upper velocity by boundary saving with float and with half storage (source field, receiver
  // field, the rebuilt source field and the model). One dt for both problems.
  const std::string common =
      "grid: {shape: [64, 34, 62], spacing: 10}\nboundary: {damping_width: 10, free_surface: true}\n"
      "time: {steps: 520, dt: 0.001}\nsources: {wavelet: {peak_frequency: 15}, shots: [[315, 165, 20]]}\n"
      "receivers: {line: {start: [110, 165, 20], end: [520, 165, 20], count: 42}}\n";
  const Problem truth = build_problem(
      parse_config(common + "model: {vp: {type: layers, layers: [{top: 0, vp: 2000}, {top: 400, vp: 2600}]}}\n"));
  const Run observed = simulate(truth, 0, truth.steps);
  Config c = parse_config(common + "model: {vp: 2000}\n");
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.mode = MigrationMode::boundary;
  mc.image_interval = 1;
  c.migration = mc;
  const Problem pb = build_problem(c);
  auto migrate = [&](bool half) {
    std::vector<float> image(static_cast<size_t>(pb.grid.cells()), 0.0f), illumination(image.size(), 0.0f);
    CpuMigrator m(pb);
    if (half) m.store_as_half(kPeak);
    m.migrate_shot(0, observed.traces.data(), image.data(), illumination.data(), [](const std::string&, long long) {});
    return std::pair{image, illumination};
  };
  const auto [image, illumination] = migrate(false);
  const auto [image_h, illumination_h] = migrate(true);
  REQUIRE(max_abs(image.data(), image.size()) > 0);
  const double e_image = relative_l2(image_h.data(), image.data(), image.size());
  const double e_illumination = relative_l2(illumination_h.data(), illumination.data(), illumination.size());
  std::printf("half storage, migrated image (flat reflector, 520 steps): image rel L2 %.3e, illumination %.3e\n",
              e_image, e_illumination);
  CHECK(e_image <= 1e-2);
  CHECK(e_illumination <= 1e-2);
  CHECK(e_image > 1e-5);  // the emulation is on
  CHECK(e_illumination > 1e-5);
  {
    const long long iy = pb.grid.n[1] / 2;
    std::vector<float> diff(image.size());
    for (size_t i = 0; i < diff.size(); ++i) diff[i] = image_h[i] - image[i];
    io::Image2D a = io::volume_slice(image.data(), pb.grid.n, pb.grid.h, {0, 0, 0}, 'y', iy);
    a.title = "flat reflector image, float storage: " + a.title;
    a.value_label = "image";
    picture("half_storage_image_float", a);
    io::Image2D b = io::volume_slice(diff.data(), pb.grid.n, pb.grid.h, {0, 0, 0}, 'y', iy);
    b.title = "half - float storage: " + b.title;
    b.value_label = "image difference";
    picture("half_storage_image_difference", b);
  }
}

TEST_CASE("half storage: tti (configs/tti.yaml on a smaller grid), the error the GPU's fp16 tti would start from",
          "[cpu]") {
  // configs/tti.yaml (three layers, epsilon up to 0.2, the axis tilted 30 degrees, a free
  // surface) on 120 x 60 x 80 cells and 500 steps, so the CPU reference runs twice in CI.
  const Problem p = build_problem(load_config(
      SEISRTM_SOURCE_DIR "/configs/tti.yaml",
      {"grid.shape=[120,60,80]", "time.steps=500", "boundary.damping_width=15", "sources.shots=[[595.0, 295.0, 20.0]]",
       "receivers.line.start=[160.0, 295.0, 20.0]", "receivers.line.end=[1030.0, 295.0, 20.0]",
       "receivers.line.count=88", "output.snapshot_interval=0"}));
  REQUIRE(p.equation == Equation::tti);
  const Run single = simulate(p, 0, 50), half = simulate(p, 1, 10);
  const long long nr = p.receivers.size();
  const double e_traces = relative_l2(half.traces.data(), single.traces.data(), single.traces.size());
  const double e_field = relative_l2(half.field.data(), single.field.data(), single.field.size());
  double worst = 0;
  for (long long r = 0; r < nr; ++r)
    worst = std::max(worst, relative_l2(half.traces.data() + r * p.steps, single.traces.data() + r * p.steps,
                                        static_cast<size_t>(p.steps)));
  std::printf(
      "half storage, tti (%lld x %lld x %lld, %lld steps), model and levels in halves: traces rel L2 %.3e (worst "
      "receiver %.3e), final wavefield %.3e; largest stored |p| / scale %.1f (2^%.2f)\n",
      p.grid.n[0], p.grid.n[1], p.grid.n[2], p.steps, e_traces, worst, e_field, half.largest_stored,
      std::log2(half.largest_stored));
  // The levels are stored: every value of the last one is the scale times a half.
  long long off = 0;
  for (float v : half.field) off += round_to_half(v / half.scale) != v / half.scale;
  CHECK(half.scale > 0);
  CHECK(off == 0);
  // The emulation is on (above 1e-5), the run stayed finite, and the scale's headroom holds.
  CHECK(e_traces > 1e-5);
  CHECK(std::isfinite(e_field));
  CHECK(half.largest_stored < 65504.0 / 8);
}
