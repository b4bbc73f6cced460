#include "solver/survey.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numbers>

#include "io/interrupt.hpp"
#include "io/output_file.hpp"
#include "io/plot.hpp"
#include "io/segy.hpp"
#include "io/survey_file.hpp"
#include "solver/cluster.hpp"
#include "solver/decomposition.hpp"
#include "solver/progress.hpp"

namespace seisrtm {

namespace {

io::RunAttributes run_attributes(const Problem& pb, const std::string& producer, const std::string& backend) {
  return {producer, backend, to_yaml(pb.config), pb.grid.n, pb.grid.h, pb.dt, pb.steps};
}

// A shot's start (with the test suite's failure hook).
void begin_shot(Propagator& prop, long long s) {
  cluster::inject_test_failure(s);
  prop.begin_shot(s);
}

// A rank other than 0 of a shot-parallel run: computes the shots rank 0 hands it and sends their
// snapshots and traces back; writes no file. A failure is reported to rank 0 with its shot.
RunSummary run_worker(const Problem& pb, Propagator& prop, cluster::ShotFarm& farm) {
  const Grid& g = pb.grid;
  const long long nrec = pb.receivers.size(), nt = pb.steps;
  const long long interval = pb.config.output.snapshot_interval;
  const io::SurveyLayout layout{pb.shot_count(), nrec, nt, pb.dt, g.n, g.h, interval, true, true};
  const long long nsnap = io::snapshot_count(layout);
  std::vector<float> field(nsnap > 0 ? static_cast<size_t>(g.cells()) : 0);
  std::vector<float> shot_traces(static_cast<size_t>(nrec * nt));
  const long long chunk = interval > 0 ? interval : std::max(1LL, nt / 100);
  RunSummary sum;
  for (long long s = farm.next(); s >= 0; s = farm.next()) {
    try {
      begin_shot(prop, s);
      Progress progress("shot", nt, double(g.cells()), true);
      for (long long n = 0; n < nt;) {
        const long long k = std::min(chunk, nt - n);
        prop.advance(n, k);
        n += k;
        if (interval > 0 && n % interval == 0 && n / interval <= nsnap) {
          prop.request_wavefield(g.cells());
          prop.receive_wavefield(field.data());
          farm.send(s, cluster::ResultKind::snapshot, n / interval - 1, field.data(), field.size());
        }
        if (10 * n >= 9 * nt) farm.ask();  // the next shot's number arrives while this one ends
        farm.check_interrupt("shot " + std::to_string(s + 1) + ", step " + std::to_string(n) + "/" + std::to_string(nt),
                             pb.config.output.directory);
      }
      progress.finish();
      sum.seconds += progress.seconds();
      prop.traces(shot_traces.data());
      farm.send(s, cluster::ResultKind::traces, 0, shot_traces.data(), shot_traces.size());
    } catch (const io::Interrupted& e) {
      // Rank 0 owns the files: it removes the temporaries and ends the job.
      farm.fail(s, std::string("interrupted by ") + io::signal_name(e.signal()));
    } catch (const std::exception& e) {
      farm.fail(s, e.what());
    }
  }
  return sum;
}

// A rank other than 0 of a decomposed run (solver.decomposition z): every shot over its slab,
// making the same collective calls as rank 0's loop in run_survey, in the same order (begin,
// each chunk's verdict, snapshot gathers, the traces, the first shot's wavefield picture).
RunSummary run_slab_worker(const Problem& pb, Propagator& prop) {
  const Grid& g = pb.grid;
  const long long nt = pb.steps, nshots = pb.shot_count();
  const long long interval = pb.config.output.snapshot_interval;
  const io::SurveyLayout layout{nshots, pb.receivers.size(), nt, pb.dt, g.n, g.h, interval, true, true};
  const long long nsnap = io::snapshot_count(layout);
  const long long chunk = interval > 0 ? interval : std::max(1LL, nt / 100);
  const std::string& dir = pb.config.output.directory;
  RunSummary sum;
  for (long long s = 0; s < nshots; ++s) {
    agreed_step([&] { begin_shot(prop, s); }, s, nshots, "", dir);
    long long pending = -1;
    for (long long n = 0; n < nt;) {
      const long long k = std::min(chunk, nt - n);
      agreed_step<SharedFailure>([&] { prop.advance(n, k); }, s, nshots, "", dir);
      n += k;
      if (interval > 0 && n % interval == 0 && n / interval <= nsnap) {
        if (pending >= 0) prop.receive_wavefield(nullptr);
        prop.request_wavefield(g.cells());
        pending = n / interval - 1;
      }
    }
    if (pending >= 0) prop.receive_wavefield(nullptr);
    prop.traces(nullptr);
    if (pb.config.output.pictures && s == 0) prop.wavefield(nullptr);
  }
  return sum;
}

}  // namespace

void write_run_attributes(hid_t root, const Problem& pb, const std::string& producer, const std::string& backend) {
  io::write_run_attributes(root, run_attributes(pb, producer, backend));
}

RunSummary run_survey(const Problem& pb, Propagator& prop, const RunOptions& opt) {
  namespace fs = std::filesystem;
  // Decomposed: every rank computes every shot over its slab, rank 0 writes; otherwise shots
  // are handed out to the ranks (ShotFarm).
  const bool slabs = pb.config.solver.decomposition == Decomposition::z;
  cluster::ShotFarm farm(pb.shot_count());
  farm.workers_end_when_done();  // (run_worker returns once told that no shot is left)
  if (slabs && cluster::rank() > 0) return run_slab_worker(pb, prop);
  if (!slabs && !farm.coordinator()) return run_worker(pb, prop, farm);
  const Config& c = pb.config;
  const Grid& g = pb.grid;
  const long long nrec = pb.receivers.size(), nt = pb.steps, nshots = pb.shot_count();
  const long long interval = c.output.snapshot_interval;

  // Created first: an unwritable output directory fails before any time stepping. Every file
  // of the run is a member of this set, written under a temporary name; the set replaces the
  // previous one of this name only when everything has been written (io/output_file.hpp).
  io::OutputSet set(c.output.directory, c.output.name);
  // The file's layout (README "Output") is the writer's: it creates the datasets the time loop
  // fills now, and takes plain arrays.
  const io::SurveyLayout layout{nshots, nrec, nt, pb.dt, g.n, g.h, interval, c.output.traces, c.output.model};
  io::SurveyFile file(set.h5(), layout);
  const long long nsnap = file.snapshots();
  file.write_attributes(run_attributes(pb, opt.producer, prop.name()));
  file.write_model(pb.vp.data());
  if (pb.anisotropic()) {  // the model as configured: theta and phi back in degrees
    file.write_model_volume("epsilon", pb.epsilon.data());
    file.write_model_volume("delta", pb.delta.data());
    for (const auto* a : {&pb.theta, &pb.phi}) {
      if (a->empty()) continue;
      std::vector<float> deg(a->size());
      for (size_t i = 0; i < deg.size(); ++i) deg[i] = static_cast<float>((*a)[i] * 180.0 / std::numbers::pi);
      file.write_model_volume(a == &pb.theta ? "theta" : "phi", deg.data());
    }
  }
  file.write_geometry(pb.wavelet.data(), c.sources.shots, pb.receivers.position);
  // SEG-Y copies of the gathers, members of the set: planned (and refused) before any stepping.
  io::SegyRun segy;
  if (c.output.segy != SegyRevision::none) {
    segy =
        io::plan_segy(c.output.segy == SegyRevision::rev1 ? 1 : 2, pb.dt, nt, c.sources.shots, pb.receivers.position);
    segy.producer = opt.producer;
    segy.config_file = c.source_file;
    segy.shape = g.n;
    segy.spacing = g.h;
    const auto& w = c.sources.wavelet;
    char wl[96];
    std::snprintf(wl, sizeof wl, "Ricker, peak %g Hz, delay %g s", w.peak_frequency,
                  w.delay ? *w.delay : 1.2 / w.peak_frequency);
    segy.wavelet = w.type == WaveletType::ricker ? wl : "wavelet file " + w.file + ":" + w.dataset;
  }

  std::vector<float> field(c.output.pictures || nsnap > 0 ? static_cast<size_t>(g.cells()) : 0);
  std::vector<float> shot_traces(static_cast<size_t>(nrec * nt));
  auto picture = [&](const std::string& suffix, const io::Image2D& im) {
    io::write_image(set.add("_" + suffix + ".png"), im);
  };

  // A shot's traces, from this rank or another: the file, the SEG-Y copy and the gather picture.
  auto deliver_traces = [&](long long s, const float* data) {
    file.write_traces(s, data);
    if (c.output.segy != SegyRevision::none)
      io::write_segy_shot(set.add(std::string("_").append(io::shot_name(s)).append(".sgy")), segy, s,
                          c.sources.shots[s], pb.receivers.position, data);
    if (c.output.pictures && nrec > 0) {
      // Seismic data in a symmetric colour scale clipped at a percentile of |p| (stated in the
      // picture), so a few large samples near the source do not wash out the rest.
      const io::Point3 src{c.sources.shots[s][0], c.sources.shots[s][1], c.sources.shots[s][2]};
      io::Image2D im =
          io::gather_picture(std::vector<float>(data, data + nrec * nt), nrec, nt, pb.dt, pb.receivers.position, src);
      im.title = c.output.name + ": " + io::shot_name(s) + " " + im.title;
      picture("gather_" + io::shot_name(s), im);
    }
  };
  // What the other ranks of a shot-parallel run send (cluster.hpp).
  const cluster::ShotFarm::Sink sink = [&](int from, long long s, cluster::ResultKind kind, long long index,
                                           std::vector<float>& data) {
    try {
      if (kind == cluster::ResultKind::snapshot)
        file.write_snapshot(s, index, data.data());
      else
        deliver_traces(s, data.data());
    } catch (const Error& e) {  // named here, not as a failure of rank 0's own shot
      throw cluster::RankFailed("rank 0 failed writing shot " + std::to_string(s + 1) + "/" + std::to_string(nshots) +
                                " of rank " + std::to_string(from) + ": " + e.what());
    }
  };
  const auto wall_start = std::chrono::steady_clock::now();

  RunSummary sum;
  const long long chunk = interval > 0 ? interval : std::max(1LL, nt / 100);
  long long slab_shot = 0;
  auto next_shot = [&] { return slabs ? (slab_shot < nshots ? slab_shot++ : -1) : farm.next(); };
  for (long long s = next_shot(); s >= 0; s = next_shot()) try {
      const std::string label = "shot " + std::to_string(s + 1) + "/" + std::to_string(nshots);
      if (slabs)  // every rank's start, then one verdict (a collective step of the slabs)
        agreed_step([&] { begin_shot(prop, s); }, s, nshots, label + ", step 0/" + std::to_string(nt),
                    c.output.directory);
      else
        begin_shot(prop, s);
      Progress progress(label, nt, double(g.cells()), opt.quiet);
      long long pending = -1;  // snapshot index requested but not yet written
      for (long long n = 0; n < nt;) {
        const long long k = std::min(chunk, nt - n);
        if (slabs)
          agreed_step<SharedFailure>([&] { prop.advance(n, k); }, s, nshots,
                                     label + ", step " + std::to_string(n + k) + "/" + std::to_string(nt),
                                     c.output.directory);
        else
          prop.advance(n, k);
        n += k;
        if (interval > 0 && n % interval == 0 && n / interval <= nsnap) {
          // Written one snapshot late, so the copy overlaps the next chunk of time steps.
          if (pending >= 0) {
            prop.receive_wavefield(field.data());
            file.write_snapshot(s, pending, field.data());
          }
          prop.request_wavefield(g.cells());
          pending = n / interval - 1;
        }
        progress.update(n);
        if (!slabs)  // (a decomposed run's verdict above has checked every rank)
          farm.check_interrupt(label + ", step " + std::to_string(n) + "/" + std::to_string(nt), c.output.directory);
        if (!slabs) farm.serve(sink);
      }
      if (pending >= 0) {
        prop.receive_wavefield(field.data());
        file.write_snapshot(s, pending, field.data());
      }
      progress.finish();
      sum.seconds += progress.seconds();
      prop.traces(shot_traces.data());
      deliver_traces(s, shot_traces.data());
      if (c.output.pictures) {
        const std::string front = c.output.name + ": " + io::shot_name(s);
        const io::Point3 src{c.sources.shots[s][0], c.sources.shots[s][1], c.sources.shots[s][2]};
        if (s == 0) {  // (rank 0 always computes shot 0: its first next())
          prop.wavefield(field.data());
          const long long iy = std::clamp<long long>(std::llround(src[1] / g.h[1]), 0, g.n[1] - 1);
          io::Image2D wf = io::volume_slice(field.data(), g.n, g.h, {0, 0, 0}, 'y', iy);
          char t[64];
          std::snprintf(t, sizeof t, "wavefield p at t = %.3f s, ", double(nt) * pb.dt);
          wf.title = front + " " + t + wf.title;
          wf.value_label = "p", wf.value_unit = "arb. units";
          wf.clip_percentile = 99.5;  // most of a snapshot is still at rest: clip higher than a gather
          picture("wavefield_" + io::shot_name(s), wf);
          io::Image2D vp = io::volume_slice(pb.vp.data(), g.n, g.h, {0, 0, 0}, 'y', iy);
          vp.title = c.output.name + ": model vp, " + vp.title;
          vp.value_label = "vp", vp.value_unit = "m/s";
          vp.map = io::Colormap::viridis, vp.symmetric = false, vp.clip_percentile = 100;
          picture("model_vp", vp);
        }
      }
    } catch (const cluster::RankFailed&) {
      throw;  // another rank's shot, named in the message
    } catch (const Error& e) {
      // Several ranks: say which one and which shot; alone, the message as it was (a decomposed
      // run's verdict names the rank itself).
      if (cluster::size() == 1 || slabs) throw;
      std::string what = "rank 0 failed on shot ";
      what += std::to_string(s + 1);
      what += "/";
      what += std::to_string(nshots);
      what += ": ";
      what += e.what();
      throw Error(what);
    }
  if (!slabs) farm.drain(sink, [&] { farm.check_interrupt("the other ranks' last shots", c.output.directory); });
  sum.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (cluster::size() > 1 && !slabs) {
    // Every rank's stepping overlaps: the rate of the whole job is over its wall time.
    sum.seconds = sum.wall_seconds;
    sum.shots_by_other_ranks = farm.shots_done_by_others();
  }
  sum.gcells_per_second = sum.seconds > 0 ? double(g.cells()) * nt * nshots / sum.seconds / 1e9 : 0;
  file.write_stepping_seconds(sum.seconds);

  const std::vector<io::XdmfVolume> vols = file.xdmf_volumes();
  if (!vols.empty()) io::write_xdmf(set.add(".xmf"), set.h5().file_name(), g.n, g.h, vols);
  // Every rank stops when any was signalled, rank 0 after the last write included: the set is
  // committed only when none was.
  const std::string end = "the end of shot " + std::to_string(nshots) + "/" + std::to_string(nshots);
  cluster::settle_before_commit();
  if (slabs)
    io::check_interrupt(end, c.output.directory);
  else
    farm.check_interrupt(end, c.output.directory);
  set.commit();
  sum.h5_path = set.h5().path();
  for (const auto& f : set.others()) {
    if (fs::path(f).extension() == ".xmf")
      sum.xdmf_path = f;
    else
      sum.pictures.push_back(f);
  }
  return sum;
}

}  // namespace seisrtm
