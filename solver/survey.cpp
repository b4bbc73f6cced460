#include "solver/survey.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "io/interrupt.hpp"
#include "io/output_file.hpp"
#include "io/png.hpp"
#include "solver/progress.hpp"

namespace seisrtm {

namespace {

std::string shot_name(long long s) {
  char b[32];
  std::snprintf(b, sizeof b, "shot_%04lld", s);
  return b;
}

}  // namespace

std::vector<float> xz_slice(const Grid& g, const float* v, long long iy) {
  std::vector<float> s(static_cast<size_t>(g.n[0] * g.n[2]));
  for (long long iz = 0; iz < g.n[2]; ++iz)
    for (long long ix = 0; ix < g.n[0]; ++ix) s[iz * g.n[0] + ix] = v[g.index(ix, iy, iz)];
  return s;
}

int picture_scale(const Grid& g) {
  const long long m = std::max(g.n[0], g.n[2]);
  return m >= 400 ? 1 : static_cast<int>(400 / m);
}

void write_run_attributes(hid_t root, const Problem& pb, const std::string& producer, const std::string& backend) {
  const Grid& g = pb.grid;
  io::write_attribute(root, "producer", producer);
  io::write_attribute(root, "backend", backend);
  io::write_attribute(root, "config", to_yaml(pb.config));
  io::write_attribute(root, "spacing", std::vector<double>{g.h[0], g.h[1], g.h[2]});
  io::write_attribute(root, "origin", std::vector<double>{0, 0, 0});
  io::write_attribute(root, "shape", std::vector<long long>{g.n[0], g.n[1], g.n[2]});  // int64
  io::write_attribute(root, "dt", std::vector<double>{pb.dt});
  io::write_attribute(root, "steps", pb.steps);
}

RunSummary run_survey(const Problem& pb, Propagator& prop, const RunOptions& opt) {
  namespace fs = std::filesystem;
  const Config& c = pb.config;
  const Grid& g = pb.grid;
  const long long nrec = pb.receivers.size(), nt = pb.steps, nshots = pb.shot_count();
  const long long interval = c.output.snapshot_interval;
  const long long nsnap = interval > 0 ? nt / interval : 0;

  // Created first: an unwritable output directory fails before any time stepping. Every file
  // of the run is a member of this set, written under a temporary name; the set replaces the
  // previous one of this name only when everything has been written (io/output_file.hpp).
  io::OutputSet set(c.output.directory, c.output.name);
  io::OutputFile& out = set.h5();
  const hid_t root = out.root();
  write_run_attributes(root, pb, opt.producer, prop.name());
  io::write_attribute(root, "units", "lengths m, times s, velocities m/s; spacing, origin and shape are [x, y, z]");
  io::write_attribute(root, "layout", "volumes are [z][y][x] (x fastest); traces are [shot][receiver][time]; "
                                      "snapshots/shot_NNNN are [time][z][y][x]");

  const hsize_t n3[3] = {hsize_t(g.n[2]), hsize_t(g.n[1]), hsize_t(g.n[0])};
  if (c.output.model) {
    out.create_group("model");
    io::write_dataset(root, "model/vp", {n3[0], n3[1], n3[2]}, pb.vp.data());
  }
  std::vector<double> time(nt);
  for (long long n = 0; n < nt; ++n) time[n] = (n + 1) * pb.dt;
  io::write_dataset(root, "time", {hsize_t(nt)}, time.data());
  out.create_group("sources");
  out.create_group("receivers");
  io::write_dataset(root, "sources/wavelet", {hsize_t(nt)}, pb.wavelet.data());
  std::vector<double> pos;
  for (const auto& s : c.sources.shots) pos.insert(pos.end(), s.begin(), s.end());
  io::write_dataset(root, "sources/positions", {hsize_t(nshots), 3}, pos.data());
  pos.clear();
  for (const auto& r : pb.receivers.position) pos.insert(pos.end(), r.begin(), r.end());
  if (nrec > 0) io::write_dataset(root, "receivers/positions", {hsize_t(nrec), 3}, pos.data());
  const bool traces = c.output.traces && nrec > 0;
  if (traces) out.create_chunked("traces", {hsize_t(nshots), hsize_t(nrec), hsize_t(nt)});
  std::vector<double> snap_times;
  for (long long k = 0; k < nsnap; ++k) snap_times.push_back((k + 1) * interval * pb.dt);
  if (nsnap > 0) {
    out.create_group("snapshots");
    io::write_dataset(root, "snapshots/time", {hsize_t(nsnap)}, snap_times.data());
  }

  std::vector<float> field(c.output.pictures || nsnap > 0 ? static_cast<size_t>(g.cells()) : 0);
  std::vector<float> shot_traces(static_cast<size_t>(nrec * nt));
  auto picture = [&](const std::string& suffix, const std::vector<float>& v, long long rows,
                     long long cols, io::Colormap map, float clip, int scale) {
    io::write_png(set.add("_" + suffix + ".png"), v, rows, cols, map, clip, scale);
  };

  RunSummary sum;
  const long long chunk = interval > 0 ? interval : std::max(1LL, nt / 100);
  for (long long s = 0; s < nshots; ++s) {
    const std::string label = "shot " + std::to_string(s + 1) + "/" + std::to_string(nshots);
    if (nsnap > 0) out.create_chunked("snapshots/" + shot_name(s), {hsize_t(nsnap), n3[0], n3[1], n3[2]});
    prop.begin_shot(s);
    Progress progress(label, nt, double(g.cells()), opt.quiet);
    long long pending = -1;  // snapshot index requested but not yet written
    for (long long n = 0; n < nt;) {
      const long long k = std::min(chunk, nt - n);
      prop.advance(n, k);
      n += k;
      if (interval > 0 && n % interval == 0 && n / interval <= nsnap) {
        // Written one snapshot late, so the copy overlaps the next chunk of time steps.
        if (pending >= 0) {
          prop.receive_wavefield(field.data());
          out.write_slab("snapshots/" + shot_name(s), pending, field.data());
        }
        prop.request_wavefield(g.cells());
        pending = n / interval - 1;
      }
      progress.update(n);
      io::check_interrupt(label + ", step " + std::to_string(n) + "/" + std::to_string(nt), c.output.directory);
    }
    if (pending >= 0) {
      prop.receive_wavefield(field.data());
      out.write_slab("snapshots/" + shot_name(s), pending, field.data());
    }
    progress.finish();
    sum.seconds += progress.seconds();
    prop.traces(shot_traces.data());
    if (traces) out.write_slab("traces", s, shot_traces.data());
    if (c.output.pictures) {
      if (nrec > 0) {
        // Gather: time down, receivers across.
        std::vector<float> gather(static_cast<size_t>(nt * nrec));
        for (long long r = 0; r < nrec; ++r)
          for (long long n = 0; n < nt; ++n) gather[n * nrec + r] = shot_traces[r * nt + n];
        const long long rows = std::min(nt, 800LL), cols = std::max(nrec, std::min(600LL, nrec * 8));
        picture("gather_" + shot_name(s), io::resample_nearest(gather, nt, nrec, rows, cols), rows, cols,
                io::Colormap::seismic,
                io::percentile_abs(gather, 0.99), 1);
      }
      if (s == 0) {
        prop.wavefield(field.data());
        const long long iy = std::llround(c.sources.shots[0][1] / g.h[1]);
        const auto slice = xz_slice(g, field.data(), iy);
        picture("wavefield_" + shot_name(s), slice, g.n[2], g.n[0], io::Colormap::seismic,
                io::percentile_abs(slice, 0.995), picture_scale(g));
        picture("model_vp", xz_slice(g, pb.vp.data(), iy), g.n[2], g.n[0], io::Colormap::gray, 0,
                picture_scale(g));
      }
    }
  }
  sum.gcells_per_second = sum.seconds > 0 ? double(g.cells()) * nt * nshots / sum.seconds / 1e9 : 0;
  io::write_attribute(root, "stepping_seconds", std::vector<double>{sum.seconds});

  std::vector<io::XdmfVolume> vols;
  if (c.output.model) vols.push_back({"/model/vp", "vp", 0, {}});
  for (long long s = 0; s < nshots && nsnap > 0; ++s)
    vols.push_back({"/snapshots/" + shot_name(s), "p_" + shot_name(s), nsnap, snap_times});
  if (!vols.empty()) io::write_xdmf(set.add(".xmf"), out.file_name(), g.n, g.h, vols);
  io::check_interrupt("the end of shot " + std::to_string(nshots) + "/" + std::to_string(nshots), c.output.directory);
  set.commit();
  sum.h5_path = out.path();
  for (const auto& f : set.others()) {
    if (fs::path(f).extension() == ".xmf")
      sum.xdmf_path = f;
    else
      sum.pictures.push_back(f);
  }
  return sum;
}

}  // namespace seisrtm
