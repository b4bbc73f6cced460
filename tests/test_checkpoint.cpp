// Segmented checkpointing of the source field (migration.reconstruction: checkpoint): the plan of
// segments and checkpoints ([unit]), and the CPU migrator's image, illumination and rebuilt source
// field bit for bit those of the whole boundary store ([cpu]): the same shells enter the same
// backward steps, and a replay from a checkpoint repeats the first pass's steps exactly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
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

// Runs the plan's sweeps as a migrator does, tracking which level each checkpoint slot and each
// store slot holds: every sweep must start from a slot that holds its level (slots are reused by
// the groups of two levels in turn), and every rebuilt level must find its own shell.
TEST_CASE("the checkpoint plan saves every level's shell once, each sweep from the checkpoint of its level", "[unit]") {
  const long long steps = GENERATE(1, 2, 3, 4, 5, 9, 12, 120);
  const long long interval = GENERATE(1, 2, 3, 7, 40, 118, 120, 500);
  const long long groups_of = GENERATE(0, 2, 3, 5);  // coarse interval = groups_of x interval
  CAPTURE(steps, interval, groups_of);
  const RtmSchedule sc(steps, 1);
  const CheckpointPlan plan(steps, interval, groups_of * interval);
  const long long saved = std::max(0LL, steps - 2), k = plan.interval();
  CHECK(k >= 1);
  CHECK(k <= std::max(1LL, saved));
  CHECK(plan.segments() == (saved + k - 1) / k);
  CHECK(plan.coarse_interval() % k == 0);
  CHECK(plan.two_level() == (plan.coarse_interval() > k));
  if (plan.two_level()) CHECK(plan.coarse_interval() <= groups_of * k);

  std::vector<long long> slots(static_cast<size_t>(plan.checkpoints()), -1);  // slot -> level held
  std::vector<long long> store(static_cast<size_t>(k), -1);                   // store slot -> level
  std::map<long long, int> shells;                                            // level -> times saved
  std::vector<bool> slot_used(slots.size(), false);
  auto run = [&](const CheckpointPlan::Sweep& w) {
    if (w.from > 0) {
      const long long from = plan.checkpoint_slot(w.from);
      REQUIRE(from >= 0);
      CHECK(slots[static_cast<size_t>(from)] == w.from);
    }
    if (w.shells_from == w.from) {  // a replay's first shell, from the restored state
      ++shells[w.from];
      store[static_cast<size_t>(plan.slot(w.from))] = w.from;
    }
    const RtmSchedule::Range r = w.steps();
    CHECK(r.dir == 1);
    for (long long i = 0, n = r.first; i < r.count; ++i, n += r.dir) {
      const long long level = n + 1;  // step n makes level n + 1
      const long long c = plan.checkpoint_after(w, level);
      if (c >= 0) {
        REQUIRE(c < plan.checkpoints());
        slots[static_cast<size_t>(c)] = level;
        slot_used[static_cast<size_t>(c)] = true;
      }
      if (level >= w.shells_from) {
        ++shells[level];
        store[static_cast<size_t>(plan.slot(level))] = level;
      }
    }
  };
  const CheckpointPlan::Sweep first = plan.first_pass();
  CHECK(first.from == 0);
  CHECK(first.to == saved);
  run(first);
  long long replay_steps = 0, sweeps = 0;
  for (long long n = steps; n >= 1; --n) {
    if (!sc.rebuilt(n) || !sc.saved(n)) continue;
    const CheckpointPlan::Sweep w = plan.sweep_before(n);
    if (w.to > 0) {
      ++sweeps;
      CHECK(w.to == n);
      CHECK(plan.segment(plan.segment_of(n)).hi == n);
      CHECK(w.shells_from == plan.segment(plan.segment_of(n)).lo);
      CHECK(w.from >= 1);
      CHECK(w.from <= w.shells_from);
      run(w);
      replay_steps += w.steps().count;
    }
    CHECK(plan.segment_of(n) >= 0);
    CHECK(plan.segment_of(n) < plan.segments());
    CHECK(store[static_cast<size_t>(plan.slot(n))] == n);
  }
  CHECK(sweeps == std::max(0LL, plan.segments() - 1));
  CHECK(replay_steps == plan.replay_steps());
  // Every slot is used; every saved level's shell exactly once, by the first pass or one sweep.
  for (size_t c = 0; c < slot_used.size(); ++c) CHECK(slot_used[c]);
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
  if (!plan.two_level()) {
    // One level: a checkpoint at every segment's lo but segment 0's; about one more forward pass.
    CHECK(plan.checkpoints() == std::max(0LL, plan.segments() - 1));
    // Every segment but segment 0 re-runs its levels but its first (that one is the checkpoint).
    const CheckpointPlan::Segment last = plan.segment(0);
    CHECK(plan.replay_steps() == (plan.segments() > 1 ? saved - (last.hi - last.lo + 1) - (plan.segments() - 1) : 0));
  } else {
    // Two levels: fewer states than one level's, bought with more replay steps.
    const CheckpointPlan one(steps, interval);
    CHECK(plan.checkpoints() <= one.checkpoints());
    CHECK(plan.replay_steps() > one.replay_steps());
    CHECK(plan.replay_steps() <= 2 * saved);
  }
  // K >= N - 2: the whole store of today, no checkpoint and no replay.
  if (interval >= saved) {
    CHECK(plan.segments() == (saved > 0 ? 1 : 0));
    CHECK(plan.checkpoints() == 0);
    CHECK(plan.replay_steps() == 0);
    for (long long level = 1; level <= saved; ++level) CHECK(plan.slot(level) == level - 1);
  }
}

TEST_CASE("two checkpoint levels: the coarse interval auto holds the fewest states", "[unit]") {
  // 1000^3 at K = 600 levels on the device, N = 8000: 14 segments, one level keeps 13
  // checkpoints; groups of m = 4 (about sqrt(13.3)) keep ceil(7998 / 2400) = 4 group checkpoints
  // (the last group starts at level 7201, below segment 0's 7801) + m - 2 = 2 others: 6; m = 3
  // (5 + 1) and m = 5 (3 + 3) also 6, m = 2 (7 + 0) and 7 (2 + 5) 7.
  const long long k1 = auto_coarse_interval(8000, 600);
  const CheckpointPlan one(8000, 600), two(8000, 600, k1);
  CAPTURE(k1, one.checkpoints(), two.checkpoints(), two.replay_steps());
  CHECK(one.checkpoints() == 13);
  CHECK(two.two_level());
  CHECK(two.checkpoints() == 6);
  for (long long m = 2; m <= one.segments(); ++m)
    CHECK(two.checkpoints() <= CheckpointPlan(8000, 600, m * 600).checkpoints());
  // 118 levels of K = 40: 3 segments; groups of 2 keep 1 checkpoint (levels 1 .. 80; the last
  // group is segment 0) where one level keeps 2. Two segments: nothing fewer to gain.
  CHECK(auto_coarse_interval(120, 40) == 80);
  CHECK(CheckpointPlan(120, 40, 80).checkpoints() == 1);
  CHECK(auto_coarse_interval(120, 60) == 60);
  CHECK(auto_coarse_interval(2, 1) == 1);
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

// interval 0: auto; coarse: the coarse interval of two levels (0: one level).
Problem checkpoint_problem(const std::string& yaml, Reconstruction how, long long interval, long long coarse = 0) {
  Config c = parse_config(yaml);
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 3;
  mc.reconstruction = how;
  mc.checkpoint_interval = interval;
  mc.coarse_checkpoint_interval = coarse;
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
  // One level: K = 1 (a checkpoint at every level, empty replays), 7 and 40 (the last segment
  // shorter: 118 saved levels), N (one segment: the store), 0 (auto). Two levels: groups of 2 and
  // 3 segments of 7 levels (17 segments: slots shared by the groups in turn), of 10 of 3 levels,
  // and 40 / 80 (the last group is segment 0 alone).
  const auto [interval, coarse] = GENERATE(
      table<long long, long long>({{1, 0}, {7, 0}, {40, 0}, {120, 0}, {0, 0}, {7, 14}, {7, 21}, {3, 30}, {40, 80}}));
  CAPTURE(equation, interval, coarse);
  const Problem pb =
      checkpoint_problem(equation == "tti" ? kTti : kAcoustic, Reconstruction::checkpoint, interval, coarse);
  const Migrated m = migrate(pb);
  check_same(m, reference);
  // The backward pass still counts to N, the replay steps among its reports.
  const CheckpointPlan plan(pb.steps, interval > 0 ? interval : pb.steps, coarse);
  if (coarse > 0) CHECK(plan.two_level());
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

namespace {

// The GPU plan tests' migration: 200^3 cells, 4000 steps, one shot, 10 receivers.
Problem plan_problem() {
  Config c = parse_config(
      "grid: {shape: [200, 200, 200], spacing: 10}\ntime: {steps: 4000}\nsources: {shots: [[1000, 1000, 20]]}\n"
      "receivers: {line: {start: [100, 1000, 10], end: [1900, 1000, 10], count: 10}}\n");
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 10;
  c.migration = mc;
  return build_problem(c);
}

}  // namespace

TEST_CASE("the GPU plan keeps the store where it fits and takes checkpoints where it does not", "[unit]") {
  // 200^3 cells, 4000 steps; the GPU's free bytes and the host's given (the host holds the
  // checkpoints but not the store), so the plan is a function of them (no GPU needed).
  Problem p = plan_problem();
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
  const std::size_t free_b = fp.total - fp.store / 2 + kSegmentReserve;
  const ReconstructionChoice half = choose_reconstruction(p, p, o, nullptr, fp, free_b, free_b, host);
  CHECK(half.checkpoints.checkpoints > 0);
  CHECK(half.device <= free_b);
  CHECK(half.checkpoints.interval * fp.store_per_step <= fp.store / 2);
  CHECK(half.checkpoints.host == static_cast<std::size_t>(half.checkpoints.checkpoints) * 2 * fp.volume);
  CHECK_THAT(half.describe(fp), Contains("checkpoints every") && Contains("pinned host memory"));
  // Room for half the levels of the interval that holds the fewest bytes: the interval the
  // device holds instead.
  const long long fewest = auto_checkpoint_interval(p.steps, 2.0 * fp.volume, double(fp.store_per_step));
  const std::size_t besides = fp.total - fp.store + fp.replay + kSegmentReserve;
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

TEST_CASE("the GPU plan takes two levels of checkpoints where one level's do not fit the host, files beyond that",
          "[unit]") {
  Problem p = plan_problem();
  const CudaOptions o;
  const MigrationFootprint fp = migration_footprint(p, o);
  // own: the host's own volumes beside the pinned bytes, 14 for acoustic (the exact stack's 8, a
  // shot's image and illumination, model, data, the images at the end; choose_reconstruction's count).
  const double state = 2.0 * double(fp.volume), own = 14.0 * double(fp.image_volume);
  // The device holds 100 levels of the store beside the rest: 40 segments of the 3998 saved
  // levels, 39 checkpoints in one level. The fewest-bytes interval is longer (about
  // sqrt(N state / shell)), so interval auto takes the 100 the device holds.
  const std::size_t room = fp.total - fp.store + fp.replay + kSegmentReserve + 100 * fp.store_per_step;
  REQUIRE(auto_checkpoint_interval(p.steps, state, double(fp.store_per_step)) > 100);
  auto host_for = [&](double states) { return (states * state + own) / 0.8; };
  // A host of 39 states: one level.
  const ReconstructionChoice one = choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(39.5));
  CHECK(one.checkpoints.interval == 100);
  CHECK(one.checkpoints.coarse_interval == 100);
  CHECK(one.checkpoints.checkpoints == 39);
  CHECK_THAT(one.describe(fp), Contains("39 checkpoints every 100 levels") && Contains("one more forward pass"));
  // A host of 12: two levels of the fewest checkpoints at K = 100, 11 (groups of m = 5: 8 group
  // checkpoints + 3; 6: 7 + 4; 7: 6 + 5), and about two more forward passes.
  const ReconstructionChoice two = choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(12.5));
  CHECK(two.checkpoints.interval == 100);
  CHECK(two.checkpoints.coarse_interval > 100);
  CHECK(two.checkpoints.checkpoints == 11);
  CHECK(two.checkpoints.host == static_cast<std::size_t>(11 * state));
  CHECK(two.checkpoints.replay_steps > 3998);
  CHECK(two.checkpoints.replay_steps < 2 * 3998);
  CHECK(two.device <= room);
  CHECK_THAT(two.describe(fp), Contains("11 checkpoints in two levels") && Contains("two more forward passes"));
  // A host of 5: refused, naming what it holds.
  CHECK_THROWS_WITH(choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(5.5)),
                    Contains("it holds 5 checkpoints") && Contains("two levels"));
  // Asked for (migration.coarse_checkpoint_interval): two levels though one would fit.
  p.config.migration->coarse_checkpoint_interval = 500;
  const ReconstructionChoice asked = choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(39.5));
  CHECK(asked.checkpoints.coarse_interval == 500);
  CHECK(asked.checkpoints.checkpoints == 11);
  CHECK(asked.checkpoints.disk == 0);
  p.config.migration->coarse_checkpoint_interval = 0;

  // A directory (migration.checkpoint_directory) beside a host of 5 states: one level, 4
  // checkpoints in pinned memory and the bounce state the files pass through, the other 35 in
  // files.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "seisrtm_checkpoint_plan";
  std::filesystem::create_directories(dir);
  p.config.migration->checkpoint_directory = dir.string();
  const ReconstructionChoice spilled = choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(5.5));
  CHECK(spilled.checkpoints.coarse_interval == 100);
  CHECK(spilled.checkpoints.checkpoints == 39);
  CHECK(spilled.checkpoints.host_checkpoints == 4);
  CHECK(spilled.checkpoints.host == static_cast<std::size_t>(5 * state));
  CHECK(spilled.checkpoints.disk == static_cast<std::size_t>(35 * state));
  CHECK_THAT(spilled.describe(fp), Contains("(35 checkpoints) in files under " + dir.string()));
  // A host that holds two levels keeps them there, the directory unused.
  CHECK(choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(12.5)).checkpoints.disk == 0);
  // checkpoint_location disk: every checkpoint in files, none pinned.
  p.config.migration->checkpoint_location = CheckpointLocation::disk;
  const ReconstructionChoice on_disk = choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(39.5));
  CHECK(on_disk.checkpoints.host_checkpoints == 0);
  CHECK(on_disk.checkpoints.host == static_cast<std::size_t>(state));  // the bounce state
  CHECK(on_disk.checkpoints.disk == static_cast<std::size_t>(39 * state));
  // checkpoint_location host: the directory unused, the host's refusal.
  p.config.migration->checkpoint_location = CheckpointLocation::host;
  CHECK_THROWS_WITH(choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(5.5)),
                    Contains("it holds 5 checkpoints") && Contains("migration.checkpoint_directory"));
  // A directory that is not one: refused naming the key.
  p.config.migration->checkpoint_location = CheckpointLocation::disk;
  p.config.migration->checkpoint_directory = (dir / "missing").string();
  CHECK_THROWS_WITH(choose_reconstruction(p, p, o, nullptr, fp, room, room, host_for(5.5)),
                    Contains("migration.checkpoint_directory") && Contains("is not a directory"));
  std::filesystem::remove_all(dir);
  // The key's checks: disk needs a directory.
  CHECK_THROWS_WITH(parse_config("grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5, "
                                 "checkpoint_location: disk}\n"),
                    Contains("migration.checkpoint_location") && Contains("migration.checkpoint_directory"));
  CHECK(parse_config("grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5, checkpoint_location: disk, "
                     "checkpoint_directory: /tmp}\n")
            .migration->checkpoint_location == CheckpointLocation::disk);
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

TEST_CASE("a 16-bit store is refused with fp16 storage and with snapshots, naming the key; slabs take it", "[unit]") {
  const std::string grid = "grid: {shape: [40, 30, 20], spacing: 10}\ntime: {steps: 100}\n";
  const std::string base = grid + "migration: {data: d.h5, store_precision: bf16";
  CHECK(parse_config(base + "}\n").migration->store_precision == StorePrecision::bf16);
  CHECK_THROWS_WITH(parse_config(grid + "solver: {storage: fp16}\nmigration: {data: d.h5, store_precision: bf16}\n"),
                    Contains("migration.store_precision") && Contains("fp32"));
  CHECK_THROWS_WITH(parse_config(base + ", mode: snapshots}\n"), Contains("migration.store_precision"));
  CHECK_THROWS_WITH(parse_config(grid + "migration: {data: d.h5, store_precision: fp16, mode: snapshots}\n"),
                    Contains("migration.store_precision") && Contains("fp16"));
  // fp16 scales by the shot's whole source field: slabs take it too (test_mpi images it bit for bit).
  CHECK_NOTHROW(parse_config(grid + "solver: {decomposition: z}\nmigration: {data: d.h5, store_precision: fp16}\n"));
  CHECK_NOTHROW(parse_config(grid + "solver: {decomposition: z}\nmigration: {data: d.h5, store_precision: bf16}\n"));
  CHECK_THROWS_WITH(parse_config(base + "x}\n"), Contains("migration.store_precision") && Contains("bf16"));
}
