// Segmented checkpointing of the source field (migration.reconstruction: checkpoint): the plan of
// segments and checkpoints ([unit]), and the CPU migrator's image, illumination and rebuilt source
// field bit for bit those of the whole boundary store ([cpu]): the same shells enter the same
// backward steps, and a replay from a checkpoint repeats the first pass's steps exactly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/decomposition.hpp"
#include "solver/migration.hpp"
#include "solver/rtm_schedule.hpp"
#include "tests/catch.hpp"
#include "validation/cpu_migration.hpp"
#include "validation/norms.hpp"

using namespace seisrtm;
using namespace seisrtm::validation;
using Catch::Matchers::Contains;

TEST_CASE("the checkpoint plan saves every level's shell once, each replay from a saved checkpoint", "[unit]") {
  const long long steps = GENERATE(1, 2, 3, 4, 5, 9, 12, 120);
  const long long interval = GENERATE(1, 2, 3, 7, 40, 118, 120, 500);
  CAPTURE(steps, interval);
  const RtmSchedule sc(steps, 1);
  const CheckpointPlan plan(steps, interval);
  const long long saved = std::max(0LL, steps - 2), k = plan.interval();
  CHECK(k >= 1);
  CHECK(k <= std::max(1LL, saved));
  CHECK(plan.segments() == (saved + k - 1) / k);

  // The forward pass: the first segment's shells and the checkpoints.
  std::map<long long, int> shells;  // level -> times saved
  std::vector<long long> checkpoints;
  for (long long level = 1; level <= steps; ++level) {
    if (plan.first_pass_saves(level)) {
      CHECK(sc.saved(level));
      ++shells[level];
    }
    if (plan.checkpointed(level)) {
      CHECK(plan.checkpoint_slot(level) == static_cast<long long>(checkpoints.size()));
      checkpoints.push_back(level);
    }
  }
  CHECK(static_cast<long long>(checkpoints.size()) == plan.checkpoints());

  // Backward: a store of K slots, which level each holds; every rebuilt level finds its shell.
  std::vector<long long> store(static_cast<size_t>(k), -1);
  for (long long level = 1; level <= steps; ++level)
    if (plan.first_pass_saves(level)) store[static_cast<size_t>(plan.slot(level))] = level;
  long long replay_steps = 0, replays = 0;
  for (long long n = steps; n >= 1; --n) {
    if (!sc.rebuilt(n) || !sc.saved(n)) continue;
    const long long j = plan.replayed_before(n);
    if (j > 0) {
      ++replays;
      const CheckpointPlan::Segment seg = plan.segment(j);
      CHECK(seg.hi == n);
      // The replay starts from a checkpoint the forward pass saved: levels lo and lo - 1.
      CHECK(std::count(checkpoints.begin(), checkpoints.end(), seg.lo) == 1);
      ++shells[seg.lo];
      store[static_cast<size_t>(plan.slot(seg.lo))] = seg.lo;
      const RtmSchedule::Range r = plan.replay_steps(j);
      CHECK(r.first == seg.lo);
      CHECK(r.dir == 1);
      for (long long i = 0, m = r.first; i < r.count; ++i, m += r.dir) {
        ++shells[m + 1];  // step m makes level m + 1
        store[static_cast<size_t>(plan.slot(m + 1))] = m + 1;
      }
      CHECK(r.first + r.count == seg.hi);
      replay_steps += r.count;
    }
    CHECK(plan.segment_of(n) >= 0);
    CHECK(plan.segment_of(n) < plan.segments());
    CHECK(store[static_cast<size_t>(plan.slot(n))] == n);
  }
  CHECK(replays == plan.checkpoints());
  CHECK(replay_steps == plan.replay_steps());
  // Every saved level's shell exactly once, by the first pass or by one replay.
  CHECK(static_cast<long long>(shells.size()) == saved);
  for (const auto& [level, times] : shells) {
    CAPTURE(level);
    CHECK(sc.saved(level));
    CHECK(times == 1);
  }
  // Segments in backward order tile levels N - 2 .. 1.
  long long next = saved;
  for (long long j = 0; j < plan.segments(); ++j) {
    const CheckpointPlan::Segment seg = plan.segment(j);
    CHECK(seg.hi == next);
    CHECK(seg.hi - seg.lo + 1 <= k);
    CHECK(seg.lo >= 1);
    for (long long level = seg.lo; level <= seg.hi; ++level) CHECK(plan.segment_of(level) == j);
    next = seg.lo - 1;
  }
  CHECK(next == 0);
  // K >= N - 2: the whole store of today, no checkpoint and no replay.
  if (interval >= saved) {
    CHECK(plan.segments() == (saved > 0 ? 1 : 0));
    CHECK(plan.checkpoints() == 0);
    CHECK(plan.replay_steps() == 0);
    for (long long level = 1; level <= saved; ++level) CHECK(plan.slot(level) == level - 1);
  }
}

TEST_CASE("checkpoint_interval auto holds the fewest bytes, about sqrt(N state / shell)", "[unit]") {
  // 800^3 acoustic: a state is 2 volumes of 2.048 GB; a shell (interior 760^3, R = 4) about 55 MB
  // (DESIGN.md, RTM); N = 8000 steps: the whole store 440 GB, K ~ sqrt(N state / shell) = 772
  // about 2 sqrt(N state shell) = 85 GB.
  const double state = 2.0 * 800.0 * 800 * 800 * 4, shell = 55e6;
  const long long steps = 8000;
  const long long k = auto_checkpoint_interval(steps, state, shell);
  const double least = CheckpointPlan(steps, k).bytes(state, shell);
  for (long long other = 1; other <= steps; ++other) CHECK(least <= CheckpointPlan(steps, other).bytes(state, shell));
  const double guess = std::sqrt(double(steps) * state / shell);
  CAPTURE(k, guess, least);
  CHECK(std::abs(double(k) - guess) <= 0.25 * guess);
  CHECK(least < CheckpointPlan(steps, steps).bytes(state, shell) / 4);
  // A short record: the whole store holds fewer bytes than a checkpoint and the replay wave.
  CHECK(auto_checkpoint_interval(20, state, shell) == 18);
  CHECK(auto_checkpoint_interval(2, state, shell) == 1);
  CHECK_THROWS_WITH(CheckpointPlan(10, 0), Contains(">= 1"));
}

TEST_CASE("config: migration.reconstruction and checkpoint_interval, bad values refused naming the key", "[unit]") {
  const std::string base = "grid: {shape: [40, 30, 20], spacing: 10}\ntime: {steps: 100}\nmigration: {data: d.h5";
  const Config c = parse_config(base + ", reconstruction: checkpoint, checkpoint_interval: 25}\n");
  CHECK(c.migration->reconstruction == Reconstruction::checkpoint);
  CHECK(c.migration->checkpoint_interval == 25);
  const Config a = parse_config(base + ", checkpoint_interval: auto}\n");
  CHECK(a.migration->reconstruction == Reconstruction::automatic);
  CHECK(a.migration->checkpoint_interval == 0);
  CHECK(parse_config(base + "}\n", {"migration.reconstruction=store"}).migration->reconstruction ==
        Reconstruction::store);
  CHECK_THROWS_WITH(parse_config(base + ", reconstruction: revolve}\n"), Contains("migration.reconstruction") &&
                                                                             Contains("auto") && Contains("store") &&
                                                                             Contains("checkpoint"));
  CHECK_THROWS_WITH(parse_config(base + ", checkpoint_interval: 0}\n"),
                    Contains("migration.checkpoint_interval") && Contains(">= 1 level or auto"));
  CHECK_THROWS_WITH(parse_config(base + ", checkpoint_interval: -3}\n"),
                    Contains("migration.checkpoint_interval") && Contains("got -3"));
  CHECK_THROWS_WITH(parse_config(base + ", checkpoint_interval: often}\n"), Contains("migration.checkpoint_interval"));
  // Written back as read.
  CHECK_THAT(to_yaml(c), Contains("reconstruction: checkpoint") && Contains("checkpoint_interval: 25"));
  CHECK_THAT(to_yaml(a), Contains("reconstruction: auto") && Contains("checkpoint_interval: auto"));
}

namespace {

// A damping zone, a free surface, off-grid source and receivers; 120 steps, imaged every 3.
const char* kAcoustic = R"(grid: {shape: [40, 38, 36], spacing: 10}
time: {steps: 120}
model: {vp: {type: layers, layers: [{top: 0, vp: 1800}, {top: 185, vp: 2500}]}}
boundary: {damping_width: 6, free_surface: true}
sources: {interpolation: trilinear, wavelet: {peak_frequency: 15}, shots: [[193.0, 181.0, 64.5]]}
receivers: {interpolation: hicks, list: [[120.0, 95.0, 31.0], [250.5, 260.0, 14.0], [190.0, 170.0, 300.0]]}
)";

// The same with a tilted model (p and q both in the shells and checkpoints).
const char* kTti = R"(grid: {shape: [40, 38, 36], spacing: 10}
time: {steps: 120}
physics: {equation: tti}
model:
  vp: {type: layers, layers: [{top: 0, vp: 1800}, {top: 185, vp: 2400}]}
  epsilon: {type: layers, layers: [{top: 0, epsilon: 0.15}, {top: 185, epsilon: 0.25}]}
  delta: 0.05
  theta: {type: layers, layers: [{top: 0, theta: 35}, {top: 185, theta: 20}]}
  phi: 30
boundary: {damping_width: 6, free_surface: true}
sources: {interpolation: trilinear, wavelet: {peak_frequency: 15}, shots: [[193.0, 181.0, 64.5]]}
receivers: {interpolation: hicks, list: [[120.0, 95.0, 31.0], [250.5, 260.0, 14.0], [190.0, 170.0, 300.0]]}
)";

// interval 0: auto.
Problem checkpoint_problem(const std::string& yaml, Reconstruction how, long long interval) {
  Config c = parse_config(yaml);
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 3;
  mc.reconstruction = how;
  mc.checkpoint_interval = interval;
  c.migration = mc;
  return build_problem(c);
}

template <class Real>
std::vector<Real> random_traces(const Problem& pb) {
  std::mt19937 gen(7);
  std::normal_distribution<double> d(0, 1);
  std::vector<Real> v(static_cast<size_t>(pb.receivers.size() * pb.steps));
  for (auto& x : v) x = static_cast<Real>(d(gen));
  return v;
}

template <class Real>
bool same_bits(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

// Levels in the first pass's segment, in a replayed one's middle and at level 1.
const std::vector<long long> kLevels = {110, 57, 1};

struct Migrated {
  std::vector<float> image, illumination;
  std::map<long long, std::vector<float>> source;  // kLevels of the rebuilt source field
  long long backward_done = 0, backward_reports = 0;
};

Migrated migrate(const Problem& pb, Migrator& m, CpuMigrator& cpu) {
  Migrated out;
  out.image.assign(static_cast<size_t>(pb.grid.cells()), 0.0f);
  out.illumination.assign(out.image.size(), 0.0f);
  cpu.on_source_level = [&](long long n, const float* s) {
    if (std::count(kLevels.begin(), kLevels.end(), n)) out.source[n].assign(s, s + pb.grid.cells());
  };
  const std::vector<float> data = random_traces<float>(pb);
  m.migrate_shot(0, data.data(), out.image.data(), out.illumination.data(),
                 [&](const std::string& pass, long long done) {
                   if (pass != "backward") return;
                   CHECK(done >= out.backward_done);  // counts up, to N
                   out.backward_done = done;
                   ++out.backward_reports;
                 });
  return out;
}

Migrated migrate(const Problem& pb) {
  CpuMigrator m(pb);
  return migrate(pb, m, m);
}

void check_same(const Migrated& a, const Migrated& b) {
  CHECK(same_bits(a.image, b.image));
  CHECK(same_bits(a.illumination, b.illumination));
  REQUIRE(a.source.size() == kLevels.size());
  REQUIRE(b.source.size() == kLevels.size());
  for (const long long n : kLevels) {
    CAPTURE(n);
    CHECK(same_bits(a.source.at(n), b.source.at(n)));
  }
}

}  // namespace

TEST_CASE("checkpoint: image, illumination and rebuilt source field bit for bit the store's", "[cpu]") {
  const std::string equation = GENERATE("acoustic", "tti");
  const Problem store = checkpoint_problem(equation == "tti" ? kTti : kAcoustic, Reconstruction::store, 0);
  const Migrated reference = migrate(store);
  double peak = 0;
  for (const float v : reference.image) peak = std::max(peak, double(std::abs(v)));
  CHECK(peak > 0);
  CHECK(reference.backward_done == store.steps);
  // K = 1 (a checkpoint at every level, empty replays), 7 and 40 (the last segment shorter: 118
  // saved levels), N (one segment: the store), 0 (auto).
  const long long interval = GENERATE(1LL, 7LL, 40LL, 120LL, 0LL);
  CAPTURE(equation, interval);
  const Problem pb = checkpoint_problem(equation == "tti" ? kTti : kAcoustic, Reconstruction::checkpoint, interval);
  const Migrated m = migrate(pb);
  check_same(m, reference);
  // The backward pass still counts to N, the replay steps among its reports.
  const CheckpointPlan plan(pb.steps, interval > 0 ? interval : pb.steps);
  CHECK(m.backward_done == pb.steps);
  if (interval > 0) CHECK(m.backward_reports == 1 + pb.steps + plan.replay_steps());
}

TEST_CASE("checkpoint: the double passes image bit for bit the store's", "[cpu]") {
  const std::string equation = GENERATE("acoustic", "tti");
  CAPTURE(equation);
  const std::string yaml = equation == "tti" ? kTti : kAcoustic;
  auto run = [&](Reconstruction how) {
    const Problem pb = checkpoint_problem(yaml, how, 7);
    std::vector<double> image(static_cast<size_t>(pb.grid.cells()), 0.0), illumination(image.size(), 0.0);
    CpuMigrator m(pb);
    const std::vector<double> data = random_traces<double>(pb);
    m.migrate_shot(0, data.data(), image.data(), illumination.data());
    return std::make_pair(image, illumination);
  };
  const auto [image, illumination] = run(Reconstruction::checkpoint);
  const auto [store_image, store_illumination] = run(Reconstruction::store);
  CHECK(same_bits(image, store_image));
  CHECK(same_bits(illumination, store_illumination));
}

// One z slab of one rank (no mpirun): the slab constructor's checkpoints, with the halo exchange
// a no-op. Several slabs exchange halos after every replay step as after every forward step
// (validation/cpu_migration.cpp, forward_step); that needs mpirun (tests/test_mpi.cpp).
TEST_CASE("checkpoint: a z slab migrates bit for bit what the store does", "[cpu]") {
  const std::string equation = GENERATE("acoustic", "tti");
  CAPTURE(equation);
  const std::string yaml = equation == "tti" ? kTti : kAcoustic;
  auto run = [&](const Problem& pb) {
    CpuMigrator* cpu = nullptr;
    SlabMigrator slabs(pb, 1, 0, [&](const Problem& slab_pb, const Slab& s) -> std::unique_ptr<Migrator> {
      auto m = std::make_unique<CpuMigrator>(slab_pb, s, pb);
      cpu = m.get();
      return m;
    });
    return migrate(pb, slabs, *cpu);
  };
  const Problem store = checkpoint_problem(yaml, Reconstruction::store, 0);
  const Problem pb = checkpoint_problem(yaml, Reconstruction::checkpoint, 7);
  const Migrated reference = run(store);
  check_same(run(pb), reference);
  check_same(migrate(pb), reference);
}

TEST_CASE("checkpoint with snapshots is refused naming the key", "[unit]") {
  Config c = parse_config(kAcoustic);
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 3;
  mc.mode = MigrationMode::snapshots;
  mc.reconstruction = Reconstruction::checkpoint;
  c.migration = mc;
  const Problem pb = build_problem(c);
  CHECK_THROWS_WITH(CpuMigrator(pb), Contains("migration.reconstruction") && Contains("migration.mode"));
}

TEST_CASE("the GPU plan keeps the store where it fits and takes checkpoints where it does not", "[unit]") {
  // 200^3 cells, 4000 steps; the GPU's free bytes and the host's given (the host holds the
  // checkpoints but not the store), so the plan is a function of them (no GPU needed).
  Config c = parse_config(
      "grid: {shape: [200, 200, 200], spacing: 10}\ntime: {steps: 4000}\nsources: {shots: [[1000, 1000, 20]]}\n"
      "receivers: {line: {start: [100, 1000, 10], end: [1900, 1000, 10], count: 10}}\n");
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 10;
  c.migration = mc;
  Problem p = build_problem(c);
  const CudaOptions o;
  const MigrationFootprint fp = migration_footprint(p, o);
  REQUIRE(fp.store > 4 * fp.volumes);  // the store is what does not fit below
  const double host =
      (double(fp.store) / 4 + 16.0 * fp.image_volume) / 0.8;  // a quarter of the store and the own volumes
  // Enough room: the whole store on the device, no checkpoints.
  const ReconstructionChoice all = choose_reconstruction(p, p, o, nullptr, fp, fp.total, fp.total, host);
  CHECK(all.checkpoints.checkpoints == 0);
  CHECK(!all.host_store);
  CHECK(all.device == fp.total);
  // Half the store's room: checkpoints, the segment's store within the free bytes.
  const std::size_t free_b = fp.total - fp.store / 2;
  const ReconstructionChoice half = choose_reconstruction(p, p, o, nullptr, fp, free_b, free_b, host);
  CHECK(half.checkpoints.checkpoints > 0);
  CHECK(half.device <= free_b);
  CHECK(half.checkpoints.interval * fp.store_per_step <= fp.store / 2);
  CHECK(half.checkpoints.host == static_cast<std::size_t>(half.checkpoints.checkpoints) * 2 * fp.volume);
  CHECK_THAT(half.describe(fp), Contains("checkpoints every") && Contains("pinned host memory"));
  // Room for half the levels of the interval that holds the fewest bytes: the interval the
  // device holds instead.
  const long long fewest = auto_checkpoint_interval(p.steps, 2.0 * fp.volume, double(fp.store_per_step));
  const std::size_t besides = fp.total - fp.store + fp.replay;
  const std::size_t room = besides + fp.store_per_step * static_cast<std::size_t>(fewest / 2);
  const ReconstructionChoice fitted = choose_reconstruction(p, p, o, nullptr, fp, room, room, host);
  INFO("fewest bytes at " << fewest << " levels");
  CHECK(fitted.checkpoints.interval == fewest / 2);
  CHECK(fitted.device <= room);
  // The store alone is refused there, naming checkpoints; no room for one level is refused too.
  p.config.migration->reconstruction = Reconstruction::store;
  CHECK_THROWS_WITH(choose_reconstruction(p, p, o, nullptr, fp, free_b, free_b, host),
                    Contains("GiB free") && Contains("migration.reconstruction: checkpoint"));
  p.config.migration->reconstruction = Reconstruction::checkpoint;
  const std::size_t tight = fp.total - fp.store + fp.replay;
  CHECK_THROWS_WITH(choose_reconstruction(p, p, o, nullptr, fp, tight, tight, host),
                    Contains("checkpointed migration needs") && Contains("no room for the store of one level"));
  // auto takes checkpoints only with migration.store auto and on one rank: with the store asked
  // in host memory, and on the slabs of a decomposition (each would judge its own store), the
  // store that does not fit is refused, naming checkpoints.
  p.config.migration->reconstruction = Reconstruction::automatic;
  p.config.migration->store = StoreLocation::host;
  CHECK_THROWS_WITH(choose_reconstruction(p, p, o, nullptr, fp, free_b, free_b, host),
                    Contains("migration.reconstruction: checkpoint"));
  p.config.migration->store = StoreLocation::automatic;
  const Slab slab = make_slab(p.grid.n[2], slab_halo(p.radius), 0, 2);
  const MigrationFootprint slab_fp = migration_footprint(p, o, &slab);
  CHECK_THROWS_WITH(
      choose_reconstruction(p, p, o, &slab, slab_fp, slab_fp.total - slab_fp.store / 2, slab_fp.total, host),
      Contains("migration.reconstruction: checkpoint"));
  p.config.migration->reconstruction = Reconstruction::checkpoint;
  CHECK(choose_reconstruction(p, p, o, &slab, slab_fp, slab_fp.total - slab_fp.store / 2, slab_fp.total, host)
            .checkpoints.checkpoints > 0);
  // Checkpoints keep the store on the device: a host store with them is refused.
  p.config.migration->store = StoreLocation::host;
  CHECK_THROWS_WITH(choose_reconstruction(p, p, o, nullptr, fp, free_b, free_b, host),
                    Contains("migration.store") && Contains("use migration.store: auto or device"));
}

TEST_CASE("a 16-bit boundary store images within one value's rounding of the fp32 store; checkpoints keep its bits",
          "[cpu]") {
  // The store's values rounded to 8 (bf16) or 11 (fp16, over the shot's field scale) significant
  // bits, each within 2^-9 or 2^-11 relative: the rebuilt source field inherits that rounding at
  // the boundary and the image sums it over levels, with signs that do not line up; the image's
  // relative error is held to the rounding of one value (this small grid, whose boundary is a
  // large part of it, gives 1.6e-3 acoustic in bf16); above zero shows the rounding took place.
  const std::string equation = GENERATE("acoustic", "tti");
  const StorePrecision precision = GENERATE(StorePrecision::bf16, StorePrecision::fp16);
  const double unit = std::ldexp(1.0, precision == StorePrecision::bf16 ? -9 : -11);
  CAPTURE(equation, to_text(precision));
  const std::string yaml = equation == "tti" ? kTti : kAcoustic;
  const Migrated exact = migrate(checkpoint_problem(yaml, Reconstruction::store, 0));
  Problem pb = checkpoint_problem(yaml, Reconstruction::store, 0);
  pb.config.migration->store_precision = precision;
  const Migrated rounded = migrate(pb);
  const double ei = validation::relative_l2(rounded.image.data(), exact.image.data(), exact.image.size());
  const double es =
      validation::relative_l2(rounded.source.at(57).data(), exact.source.at(57).data(), exact.source.at(57).size());
  INFO(to_text(precision) << " store: image relative L2 " << ei << ", source field at level 57 " << es);
  CHECK(ei > 0);
  CHECK(ei <= unit);
  CHECK(es > 0);
  Problem ck = checkpoint_problem(yaml, Reconstruction::checkpoint, 7);
  ck.config.migration->store_precision = precision;
  check_same(migrate(ck), rounded);
}

TEST_CASE("a 16-bit store is refused with fp16 storage and with snapshots, naming the key", "[unit]") {
  const std::string grid = "grid: {shape: [40, 30, 20], spacing: 10}\ntime: {steps: 100}\n";
  const std::string base = grid + "migration: {data: d.h5, store_precision: bf16";
  CHECK(parse_config(base + "}\n").migration->store_precision == StorePrecision::bf16);
  CHECK_THROWS_WITH(parse_config(grid + "solver: {storage: fp16}\nmigration: {data: d.h5, store_precision: bf16}\n"),
                    Contains("migration.store_precision") && Contains("fp32"));
  CHECK_THROWS_WITH(parse_config(base + ", mode: snapshots}\n"), Contains("migration.store_precision"));
  CHECK_THROWS_WITH(parse_config(grid + "migration: {data: d.h5, store_precision: fp16, mode: snapshots}\n"),
                    Contains("migration.store_precision") && Contains("fp16"));
  // fp16 scales by the shot's source field: not with slabs, which would each judge their own part.
  CHECK_THROWS_WITH(parse_config(grid + "solver: {decomposition: z}\nmigration: {data: d.h5, store_precision: fp16}\n"),
                    Contains("migration.store_precision") && Contains("solver.decomposition"));
  CHECK_NOTHROW(parse_config(grid + "solver: {decomposition: z}\nmigration: {data: d.h5, store_precision: bf16}\n"));
  CHECK_THROWS_WITH(parse_config(base + "x}\n"), Contains("migration.store_precision") && Contains("bf16"));
}
