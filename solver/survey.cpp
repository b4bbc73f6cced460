#include "solver/survey.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numbers>
#include <optional>

#include "io/output_file.hpp"
#include "io/plot.hpp"
#include "io/segy.hpp"
#include "io/survey_file.hpp"
#include "solver/cluster.hpp"
#include "solver/identity.hpp"
#include "solver/run_journal.hpp"
#include "solver/shot_loop.hpp"

namespace seisrtm {

namespace {

io::RunAttributes run_attributes(const Problem& pb, const std::string& producer, const std::string& backend) {
  return {producer, backend, to_yaml(pb.config), pb.grid.n, pb.grid.h, pb.dt, pb.steps, pb.grid.origin};
}

// What every rank does with a shot of a run: the time steps, the snapshots (each one written a
// chunk late on rank 0, so the copy overlaps the next chunk; a worker of the farm sends each at
// once) and the traces. The other ranks of a decomposed run pass no buffers to the collective calls.
struct RunShot {
  const Problem& pb;
  Propagator& prop;
  long long nsnap = 0;
  std::vector<float> field, traces;

  // (field.data() taken anew: rank 0's keep may swap the buffer, RunJournal::add.)
  void snapshot(ShotSteps& st, long long index, bool whole) {
    prop.receive_wavefield(whole ? field.data() : nullptr);
    if (whole) st.send(cluster::ResultKind::snapshot, index, field);
  }

  void compute(long long s, ShotSteps& st) {
    const long long nt = pb.steps, interval = pb.config.output.snapshot_interval;
    const long long chunk = interval > 0 ? interval : std::max(1LL, nt / 100);
    const std::string of = "/" + std::to_string(nt);
    const bool whole = !st.slabs() || st.keeps();
    const bool at_once = !st.slabs() && !st.keeps();
    st.begin([&] { prop.begin_shot(s); }, st.label() + ", step 0" + of);
    st.start_progress("");
    long long pending = -1;  // snapshot index requested but not yet written
    for (long long n = 0; n < nt;) {
      const long long k = std::min(chunk, nt - n);
      st.advance([&] { prop.advance(n, k); }, st.label() + ", step " + std::to_string(n + k) + of);
      n += k;
      if (interval > 0 && n % interval == 0 && n / interval <= nsnap) {
        if (pending >= 0) snapshot(st, pending, whole);
        prop.request_wavefield(pb.grid.cells());
        pending = n / interval - 1;
        if (at_once) snapshot(st, pending, whole), pending = -1;
      }
      st.progress("", n);
      if (st.slabs()) continue;  // (the chunk's verdict has checked every rank)
      if (10 * n >= 9 * nt) st.nearly_done();
      st.check(st.label() + ", step " + std::to_string(n) + of);
    }
    if (pending >= 0) snapshot(st, pending, whole);
    st.finish_progress();
    if (whole) traces.resize(static_cast<size_t>(pb.receivers_of(s).size() * nt));  // (a spread a shot: its own)
    prop.traces(whole ? traces.data() : nullptr);
    st.send(cluster::ResultKind::traces, 0, traces);
  }
};

// The file's layout (README "Output") for the survey's shots `ids` (empty: every shot). It is
// the writer's: it creates the datasets the time loop fills, and takes plain arrays.
io::SurveyLayout survey_layout(const Problem& pb, const std::vector<long long>& ids) {
  const Config& c = pb.config;
  io::SurveyLayout l;
  l.shots = ids.empty() ? pb.shot_count() : static_cast<long long>(ids.size());
  l.receivers = pb.max_receivers();
  l.steps = pb.steps;
  l.dt = pb.dt;
  l.n = pb.grid.n;
  l.h = pb.grid.h;
  l.snapshot_interval = c.output.snapshot_interval;
  l.traces = c.output.traces;
  l.model = c.output.model;
  l.origin = pb.grid.origin;
  l.varying = pb.varying_spread();
  l.first_record = c.sources.first_record;
  l.shot_ids = ids;
  return l;
}

// A rank other than 0: computes its shots (handed out by rank 0, or every shot over its slab)
// and sends them to rank 0 (or makes the collective calls of rank 0's); writes no file. A
// failure is reported to rank 0 with its shot.
RunSummary run_on_other_rank(const Problem& pb, Propagator& prop, const std::vector<long long>& shots,
                             long long pictured) {
  const Grid& g = pb.grid;
  const io::SurveyLayout layout = survey_layout(pb, {});
  ShotPlan plan = every_shot(pb, true);
  plan.shots = shots;
  RunShot shot{pb, prop, io::snapshot_count(layout), {}, {}};
  if (!plan.slabs) {
    shot.field.resize(shot.nsnap > 0 ? static_cast<size_t>(g.cells()) : 0);
    shot.traces.resize(static_cast<size_t>(pb.max_receivers() * pb.steps));
  }
  ShotWork work;
  work.compute = [&](long long s, ShotSteps& st) {
    shot.compute(s, st);
    // The first shot's wavefield picture is gathered from every slab.
    if (plan.slabs && s == pictured) prop.wavefield(nullptr);
  };
  work.workers_end_when_done = true;
  ShotLoop loop(plan, std::move(work));
  RunSummary sum;
  sum.seconds = loop.run();
  return sum;
}

// The model as configured (theta and phi back in degrees), the wavelet and the geometry.
void write_model_and_geometry(io::SurveyFile& file, const Problem& pb, const std::vector<long long>& shots) {
  file.write_model(pb.vp.data());
  if (pb.anisotropic()) {
    file.write_model_volume("epsilon", pb.epsilon.data());
    file.write_model_volume("delta", pb.delta.data());
    for (const auto* a : {&pb.theta, &pb.phi}) {
      if (a->empty()) continue;
      std::vector<float> deg(a->size());
      for (size_t i = 0; i < deg.size(); ++i) deg[i] = static_cast<float>((*a)[i] * 180.0 / std::numbers::pi);
      file.write_model_volume(a == &pb.theta ? "theta" : "phi", deg.data());
    }
  }
  std::vector<std::array<double, 3>> sources;
  for (long long s : shots) sources.push_back(pb.config.sources.shots[static_cast<size_t>(s)]);
  if (!pb.varying_spread()) {
    file.write_geometry(pb.wavelet.data(), sources, pb.grid.survey(pb.receivers.position));
    return;
  }
  file.write_geometry(pb.wavelet.data(), sources, {});
  std::vector<std::vector<std::array<double, 3>>> spreads;
  for (long long s : shots) spreads.push_back(pb.grid.survey(pb.receivers_of(s).position));
  file.write_spreads(spreads);
}

// SEG-Y copies of the gathers, members of the set: planned (and refused) before any stepping.
io::SegyRun plan_segy_copies(const Problem& pb, const std::string& producer) {
  const Config& c = pb.config;
  io::SegyRun segy;
  if (c.output.segy == SegyRevision::none) return segy;
  // The scalars hold every receiver of every shot.
  std::vector<std::array<double, 3>> receivers;
  for (long long s = 0; s < (pb.varying_spread() ? pb.shot_count() : 1); ++s)
    for (const auto& q : pb.grid.survey(pb.receivers_of(s).position)) receivers.push_back(q);
  segy = io::plan_segy(c.output.segy == SegyRevision::rev1 ? 1 : 2, pb.dt, pb.steps, c.sources.shots, receivers);
  segy.producer = producer;
  segy.first_record = c.sources.first_record;
  segy.config_file = c.source_file;
  segy.shape = pb.grid.n;
  segy.spacing = pb.grid.h;
  segy.origin = pb.grid.origin;
  const auto& w = c.sources.wavelet;
  char wl[96];
  std::snprintf(wl, sizeof wl, "Ricker, peak %g Hz, delay %g s", w.peak_frequency,
                w.delay ? *w.delay : 1.2 / w.peak_frequency);
  segy.wavelet = w.type == WaveletType::ricker ? wl : "wavelet file " + w.file + ":" + w.dataset;
  return segy;
}

void picture(io::OutputSet& set, const std::string& suffix, const io::Image2D& im) {
  io::write_image(set.add("_" + suffix + ".png"), im);
}

// A shot's traces, from this rank or another: the file, the SEG-Y copy and the gather picture.
void deliver_traces(const Problem& pb, io::SurveyFile& file, io::OutputSet& set, const io::SegyRun& segy, long long s,
                    const float* data) {
  const Config& c = pb.config;
  const PointSet& spread = pb.receivers_of(s);
  const long long nrec = spread.size(), nt = pb.steps;
  if (pb.varying_spread() && nrec < pb.max_receivers()) {
    // The shot's rows first, the rest of the layout's zero.
    std::vector<float> padded(static_cast<size_t>(pb.max_receivers() * nt), 0.0f);
    std::copy(data, data + nrec * nt, padded.begin());
    file.write_traces(s, padded.data());
  } else {
    file.write_traces(s, data);
  }
  if (c.output.segy != SegyRevision::none)
    io::write_segy_shot(set.add(std::string("_").append(io::shot_name(s)).append(".sgy")), segy, s, c.sources.shots[s],
                        pb.grid.survey(spread.position), data);
  if (c.output.pictures && nrec > 0) {
    // Seismic data in a symmetric colour scale clipped at a percentile of |p| (stated in the
    // picture), so a few large samples near the source do not wash out the rest.
    const io::Point3 src{c.sources.shots[s][0], c.sources.shots[s][1], c.sources.shots[s][2]};
    io::Image2D im = io::gather_picture(std::vector<float>(data, data + nrec * nt), nrec, nt, pb.dt,
                                        pb.grid.survey(spread.position), src);
    im.title = c.output.name + ": " + io::shot_name(s) + " " + im.title;
    picture(set, "gather_" + io::shot_name(s), im);
  }
}

// The first shot's (`s`: shot 0, or a part's first) last wavefield `field` and the model, sliced
// through its source.
void first_shot_pictures(const Problem& pb, long long s, const std::vector<float>& field, io::OutputSet& set) {
  const Config& c = pb.config;
  const Grid& g = pb.grid;
  const std::string front = c.output.name + ": " + io::shot_name(s);
  const auto& at = c.sources.shots[static_cast<size_t>(s)];
  const io::Point3 src{at[0], at[1], at[2]};
  const long long iy = std::clamp<long long>(std::llround((src[1] - g.origin[1]) / g.h[1]), 0, g.n[1] - 1);
  io::Image2D wf = io::volume_slice(field.data(), g.n, g.h, {g.origin[0], g.origin[1], g.origin[2]}, 'y', iy);
  char t[64];
  std::snprintf(t, sizeof t, "wavefield p at t = %.3f s, ", double(pb.steps) * pb.dt);
  wf.title = front + " " + t + wf.title;
  wf.value_label = "p", wf.value_unit = "arb. units";
  wf.clip_percentile = 99.5;  // most of a snapshot is still at rest: clip higher than a gather
  picture(set, "wavefield_" + io::shot_name(s), wf);
  io::Image2D vp = io::volume_slice(pb.vp.data(), g.n, g.h, {g.origin[0], g.origin[1], g.origin[2]}, 'y', iy);
  vp.title = c.output.name + ": model vp, " + vp.title;
  vp.value_label = "vp", vp.value_unit = "m/s";
  vp.map = io::Colormap::viridis, vp.symmetric = false, vp.clip_percentile = 100;
  picture(set, "model_vp", vp);
}

std::string run_identity(const Problem& pb, const std::string& producer, const std::string& propagator,
                         const std::vector<long long>& part) {
  // Where the outputs go names the journal; everything else of output.* shapes them.
  Config c = bit_deciding_config(pb.config);
  c.output.directory.clear(), c.output.name.clear();
  std::string id =
      to_yaml(c) + "\njournal format: 1\nproducer: " + producer + "\nbackend: " + backend_kind(propagator) + "\n";
  if (!part.empty()) {
    id += "shots (--shots):";
    for (long long s : part) id.append(" ").append(std::to_string(s));
    id += "\n";
  }
  return id + inputs_identity(pb);
}

}  // namespace

void write_run_attributes(hid_t root, const Problem& pb, const std::string& producer, const std::string& backend) {
  io::write_run_attributes(root, run_attributes(pb, producer, backend));
}

namespace {

// Rank 0's outputs of a run: the output set, created first (an unwritable output directory fails
// before any time stepping: every file of the run is a member, written under a temporary name,
// and the set replaces the previous one of this name only when everything has been written,
// io/output_file.hpp); the journal of an interrupted run of this one, if any (run_journal.hpp),
// whose shots go into the outputs as they were computed and are not computed again; the HDF5
// file and the SEG-Y copies' plan.
struct RunOutputs {
  const Problem& pb;
  std::optional<io::OutputSet> set;
  std::optional<RunJournal> journal;
  std::optional<io::SurveyFile> file;
  io::SegyRun segy;

  // A shot's result into the outputs: from this run (then into the journal too) or the journal.
  void deliver(long long s, RunJournal::Piece piece, long long index, std::vector<float>& data) {
    if (piece == RunJournal::Piece::snapshot)
      file->write_snapshot(s, index, data.data());
    else if (piece == RunJournal::Piece::traces)
      deliver_traces(pb, *file, *set, segy, s, data.data());
    else
      first_shot_pictures(pb, s, data, *set);
  }

  // Opens the outputs and replays the journal's shots into them; returns the shots replayed.
  // `shot` gets its buffers (the replay reads into its field).
  std::vector<long long> open(const Propagator& prop, const RunOptions& opt, const io::SurveyLayout& layout,
                              const std::vector<long long>& shots, long long pictured, RunShot& shot) {
    namespace fs = std::filesystem;
    const Config& c = pb.config;
    const long long nt = pb.steps, nshots = pb.shot_count();
    // (The journal first: its mark names this process before any temporary of the set exists.)
    RunJournal::Shape shape;
    shape.snapshots = io::snapshot_count(layout);
    shape.cells = pb.grid.cells();
    for (long long s = 0; s < nshots; ++s) shape.samples.push_back(pb.receivers_of(s).size() * nt);
    shape.pictured = pictured;
    journal.emplace((fs::path(c.output.directory) / (c.output.name + ".resume")).string(),
                    run_identity(pb, opt.producer, prop.name(), opt.shots), std::move(shape));
    std::vector<std::string> dropped;
    if (!c.output.resume) journal->switch_off();
    const std::vector<long long> kept = journal->open(dropped);
    set.emplace(c.output.directory, c.output.name);
    if (journal->held_elsewhere())
      std::fprintf(stderr,
                   "seisrtm: warning: another run of %s/%s is under way and holds its resume journal %s: this "
                   "run keeps none (it cannot be resumed)\n",
                   c.output.directory.c_str(), c.output.name.c_str(), journal->path().c_str());
    if (journal->unlocked())
      std::fprintf(stderr,
                   "seisrtm: warning: the file system of %s does not lock files (flock): do not run this output "
                   "twice at once, the runs would share its resume journal\n",
                   journal->path().c_str());
    for (long long s : kept)
      if (!std::binary_search(shots.begin(), shots.end(), s))
        throw Error("the resume journal '" + journal->path() + "' holds shot " + std::to_string(s) +
                    ", which this run does not compute: run it as it was, or remove the journal");

    file.emplace(set->h5(), layout);
    file->write_attributes(run_attributes(pb, opt.producer, prop.name()));
    write_model_and_geometry(*file, pb, shots);
    // SEG-Y copies of the gathers, members of the set: planned (and refused) before any stepping.
    segy = plan_segy_copies(pb, opt.producer);
    shot.field.resize(c.output.pictures || shot.nsnap > 0 ? static_cast<size_t>(pb.grid.cells()) : 0);
    shot.traces.resize(static_cast<size_t>(pb.max_receivers() * nt));
    if (!kept.empty() && !opt.quiet)
      std::fprintf(stderr, "seisrtm: resuming: %zu of the %zu shots are in the journal %s\n", kept.size(), shots.size(),
                   journal->path().c_str());
    const size_t field_size = shot.field.size();  // (the buffer of the replay: no volume more)
    std::vector<long long> done;
    for (long long s : kept) {
      // A shot's file that does not check (RunJournal::replay) is computed again: its
      // snapshots, already written, are written over.
      if (journal->replay(s, shot.field, [&](RunJournal::Piece piece, long long index, std::vector<float>& data) {
            deliver(s, piece, index, data);
          }))
        done.push_back(s);
      else
        dropped.push_back(journal->path() + "/" + io::shot_name(s));
    }
    shot.field.resize(field_size);
    for (const auto& d : dropped)
      std::fprintf(stderr,
                   "seisrtm: warning: '%s' of the resume journal does not check (damaged): removed, "
                   "its shot is computed again\n",
                   d.c_str());
    return done;
  }

  // After the last shot: the XDMF file, the set committed once no rank was signalled, the journal
  // removed; the summary's paths.
  void commit(ShotLoop& loop, const std::string& end, RunSummary& sum) {
    namespace fs = std::filesystem;
    const Grid& g = pb.grid;
    const std::vector<io::XdmfVolume> vols = file->xdmf_volumes();
    if (!vols.empty()) io::write_xdmf(set->add(".xmf"), set->h5().file_name(), g.n, g.h, vols, g.origin);
    // Every rank stops when any was signalled, rank 0 after the last write included: the set is
    // committed only when none was.
    cluster::settle_before_commit();
    loop.check_interrupt(end);
    set->commit();
    journal->remove();  // the outputs are whole: nothing is left to resume
    sum.h5_path = set->h5().path();
    for (const auto& f : set->others()) {
      if (fs::path(f).extension() == ".xmf")
        sum.xdmf_path = f;
      else
        sum.pictures.push_back(f);
    }
  }
};

}  // namespace

RunSummary run_survey(const Problem& pb, Propagator& prop, const RunOptions& opt) {
  const bool slabs = pb.config.solver.decomposition == Decomposition::z;
  const Config& c = pb.config;
  const Grid& g = pb.grid;
  const long long nt = pb.steps, nshots = pb.shot_count();
  std::vector<long long> shots = opt.shots;
  if (shots.empty())
    for (long long s = 0; s < nshots; ++s) shots.push_back(s);
  const io::SurveyLayout layout = survey_layout(pb, opt.shots);
  // The shot whose last wavefield is pictured: the first (of the part).
  const long long pictured = c.output.pictures ? shots.front() : -1;

  // Rank 0 opens the outputs (and replays its journal); every rank takes the shots left.
  RunOutputs out{pb, {}, {}, {}, {}};
  RunShot shot{pb, prop, io::snapshot_count(layout), {}, {}};
  std::vector<long long> done, left;
  std::string error;
  if (cluster::rank() == 0) {
    try {
      done = out.open(prop, opt, layout, shots, pictured, shot);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  cluster::agree(error);  // (one process: throws it)
  for (long long s : shots)
    if (!std::binary_search(done.begin(), done.end(), s)) left.push_back(s);
  cluster::broadcast_from_rank0(left);
  // Decomposed: every rank computes every shot over its slab, rank 0 writes; otherwise shots
  // are handed out to the ranks (ShotFarm).
  if (cluster::rank() > 0) return run_on_other_rank(pb, prop, left, pictured);

  ShotWork work;
  work.compute = [&](long long s, ShotSteps& st) {
    shot.compute(s, st);
    if (s == pictured) {  // (rank 0 always computes it: the first of the shots, its first shot)
      prop.wavefield(shot.field.data());
      out.deliver(s, RunJournal::Piece::wavefield, 0, shot.field);
      out.journal->add(s, RunJournal::Piece::wavefield, 0, shot.field);
    }
  };
  // Every result of a shot, this rank's own or another's (cluster.hpp).
  work.keep = [&](int from, long long s, cluster::ResultKind kind, long long index, std::vector<float>& data) {
    try {
      const auto piece =
          kind == cluster::ResultKind::snapshot ? RunJournal::Piece::snapshot : RunJournal::Piece::traces;
      out.deliver(s, piece, index, data);
      out.journal->add(s, piece, index, data);
    } catch (const Error& e) {  // named here, not as a failure of rank 0's own shot
      if (from == 0) throw;
      throw cluster::RankFailed("rank 0 failed writing shot " + std::to_string(s + 1) + "/" + std::to_string(nshots) +
                                " of rank " + std::to_string(from) + ": " + e.what());
    }
  };
  work.workers_end_when_done = true;
  ShotPlan plan = every_shot(pb, opt.quiet);
  plan.shots = left;
  ShotLoop loop(plan, std::move(work));
  const auto wall_start = std::chrono::steady_clock::now();

  RunSummary sum;
  sum.seconds = loop.run();
  sum.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (cluster::size() > 1 && !slabs) {
    // Every rank's stepping overlaps: the rate of the whole job is over its wall time.
    sum.seconds = sum.wall_seconds;
    sum.shots_by_other_ranks = loop.shots_by_other_ranks();
  }
  sum.shots = static_cast<long long>(left.size());
  sum.gcells_per_second = sum.seconds > 0 ? double(g.cells()) * nt * double(left.size()) / sum.seconds / 1e9 : 0;
  out.file->write_stepping_seconds(sum.seconds);
  out.commit(loop, "the end of shot " + std::to_string(shots.back() + 1) + "/" + std::to_string(nshots), sum);
  return sum;
}

}  // namespace seisrtm
