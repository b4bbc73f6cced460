#include "solver/decomposition.hpp"

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "io/interrupt.hpp"
#include "solver/cluster.hpp"

namespace seisrtm {

namespace {

bool several() {
  return cluster::started() && cluster::size() > 1;
}

using cluster::check_mpi;
using cluster::recv_floats;
using cluster::send_floats;

enum Tag : int { kHaloUp = 101, kHaloDown = 102, kField = 103, kTraces = 104 };

}  // namespace

int slab_halo(int radius) {
  return std::max(radius, kHicksRadius);
}

Slab make_slab(long long nz, int halo, int rank, int ranks) {
  Slab s;
  s.rank = rank;
  s.ranks = ranks;
  s.nz = nz;
  s.halo = halo;
  const long long base = nz / ranks, extra = nz % ranks;
  if (base < halo)
    throw Error("config key 'grid.shape': solver.decomposition z splits its " + std::to_string(nz) +
                " planes in z over " + std::to_string(ranks) + " ranks, " + std::to_string(base) +
                " a rank, but every slab must own at least " + std::to_string(halo) +
                " (the halo it sends; valid: at most " + std::to_string(std::max(1LL, nz / halo)) +
                " ranks, or more planes in z)");
  s.own_lo = rank * base + std::min<long long>(rank, extra);
  s.own_hi = s.own_lo + base + (rank < extra ? 1 : 0);
  s.lo = std::max(0LL, s.own_lo - halo);
  s.hi = std::min(nz, s.own_hi + halo);
  return s;
}

std::vector<int> receiver_owners(const Problem& global, int halo, int ranks) {
  return receiver_owners(global, global.receivers, halo, ranks);
}

std::vector<int> receiver_owners(const Problem& global, const PointSet& rec, int halo, int ranks) {
  const long long plane = global.grid.n[0] * global.grid.n[1];
  std::vector<Slab> slabs;
  for (int r = 0; r < ranks; ++r) slabs.push_back(make_slab(global.grid.n[2], halo, r, ranks));
  std::vector<int> owner(static_cast<size_t>(rec.size()), 0);
  for (long long r = 0; r < rec.size(); ++r) {
    if (rec.offset[r + 1] == rec.offset[r]) continue;
    long long zmin = LLONG_MAX, zmax = -1;
    for (long long e = rec.offset[r]; e < rec.offset[r + 1]; ++e) {
      zmin = std::min(zmin, rec.cell[e] / plane);
      zmax = std::max(zmax, rec.cell[e] / plane);
    }
    int found = -1;
    for (int k = 0; k < ranks && found < 0; ++k)
      if (zmin >= slabs[k].lo && zmax < slabs[k].hi) found = k;
    if (found < 0)  // not reachable with halo >= kHicksRadius; said rather than assumed
      throw Error("receiver " + std::to_string(r + 1) + " spans planes " + std::to_string(zmin) + ".." +
                  std::to_string(zmax) + ", more than one slab of solver.decomposition z holds");
    owner[static_cast<size_t>(r)] = found;
  }
  return owner;
}

Problem slab_problem(const Problem& global, const Slab& s, const std::vector<int>& owners,
                     const std::vector<std::vector<int>>& shot_owners) {
  Problem p;
  p.config = global.config;
  p.grid = global.grid;
  p.grid.n[2] = s.planes();
  p.radius = global.radius;
  p.dt = global.dt;
  p.dt_max = global.dt_max;
  p.steps = global.steps;
  p.v_min = global.v_min;
  p.v_max = global.v_max;
  p.equation = global.equation;
  p.clamped_cells = global.clamped_cells;
  p.d2 = global.d2;
  const long long plane = global.grid.n[0] * global.grid.n[1];
  auto slice = [&](const std::vector<float>& v) {
    if (v.empty()) return std::vector<float>();
    return std::vector<float>(v.begin() + s.lo * plane, v.begin() + s.hi * plane);
  };
  p.vp = slice(global.vp);
  p.epsilon = slice(global.epsilon);
  p.delta = slice(global.delta);
  p.theta = slice(global.theta);
  p.phi = slice(global.phi);
  p.damping = global.damping;
  p.damping[2].assign(global.damping[2].begin() + s.lo, global.damping[2].begin() + s.hi);
  p.free_surface = global.free_surface && s.own_lo == 0;
  p.wavelet = global.wavelet;
  // Points keep their positions (and count); entries move to slab indices.
  auto keep = [&](const PointSet& from, auto&& take_point, auto&& take_entry) {
    PointSet to;
    to.position = from.position;
    for (long long k = 0; k < from.size(); ++k) {
      if (take_point(k))
        for (long long e = from.offset[k]; e < from.offset[k + 1]; ++e)
          if (take_entry(from.cell[e])) {
            to.cell.push_back(from.cell[e] - s.lo * plane);
            to.weight.push_back(from.weight[e]);
          }
      to.offset.push_back(static_cast<long long>(to.cell.size()));
    }
    return to;
  };
  auto own = [&](long long cell) { return cell / plane >= s.own_lo && cell / plane < s.own_hi; };
  for (const PointSet& shot : global.shots)
    p.shots.push_back(keep(
        shot, [](long long) { return true; }, own));
  p.receivers = keep(
      global.receivers, [&](long long r) { return owners[static_cast<size_t>(r)] == s.rank; },
      [](long long) { return true; });
  // A spread a shot: each shot's receivers that this slab records.
  for (size_t k = 0; k < global.shot_receivers.size(); ++k)
    p.shot_receivers.push_back(keep(
        global.shot_receivers[k], [&](long long r) { return shot_owners[k][static_cast<size_t>(r)] == s.rank; },
        [](long long) { return true; }));
  return p;
}

SlabRanges slab_ranges(const Slab& s) {
  SlabRanges r;
  r.own0 = s.own_lo - s.lo;
  r.own1 = s.own_hi - s.lo;
  r.top = s.up() ? r.own0 + s.halo : r.own0;
  r.bottom = s.down() ? r.own1 - s.halo : r.own1;
  if (r.bottom < r.top) r.top = r.bottom = r.own1;
  return r;
}

CellBox slab_box(const CellBox& global, const Slab& s) {
  CellBox b = global;
  b.lo[2] = std::max(global.lo[2], s.own_lo) - s.lo;
  b.hi[2] = std::max(std::min(global.hi[2], s.own_hi), std::max(global.lo[2], s.own_lo)) - s.lo;
  return b;
}

PointSet own_entries(const PointSet& global, const Grid& g, const Slab& s) {
  const long long plane = g.n[0] * g.n[1];
  PointSet out;
  out.position = global.position;
  for (long long k = 0; k < global.size(); ++k) {
    for (long long e = global.offset[k]; e < global.offset[k + 1]; ++e) {
      const long long z = global.cell[e] / plane;
      if (z < s.own_lo || z >= s.own_hi) continue;
      out.cell.push_back(global.cell[e] - s.lo * plane);
      out.weight.push_back(global.weight[e]);
    }
    out.offset.push_back(static_cast<long long>(out.cell.size()));
  }
  return out;
}

namespace {

// Rank 0 receives every slab's own planes of a field (`local`: the slab's, from its plane 0)
// into `out` (the whole grid's); the other ranks send theirs.
void gather_own_planes(const float* local, const Slab& s, long long plane, float* out) {
  const float* own = local + (s.own_lo - s.lo) * plane;
  const long long count = (s.own_hi - s.own_lo) * plane;
  if (s.rank != 0) return send_floats(own, count, 0, kField);
  std::memcpy(out + s.own_lo * plane, own, static_cast<size_t>(count) * sizeof(float));
  for (int r = 1; r < s.ranks; ++r) {
    const Slab o = make_slab(s.nz, s.halo, r, s.ranks);
    recv_floats(out + o.own_lo * plane, (o.own_hi - o.own_lo) * plane, r, kField);
  }
}

}  // namespace

bool any_rank(bool mine) {
  if (!several()) return mine;
  int v = mine ? 1 : 0, all = 0;
  check_mpi(MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return all != 0;
}

void exchange_host_planes(float* field, long long plane, const Slab& s) {
  if (!several() || s.ranks == 1) return;
  const long long n = s.halo * plane;
  const long long own_first = s.own_lo - s.lo, own_end = s.own_hi - s.lo;
  std::vector<MPI_Request> req;
  // In pieces of at most cluster::kPieceFloats (MPI counts are int), matched in order on both sides.
  auto post = [&](float* recv_at, const float* send_from, int peer, int recv_tag, int send_tag) {
    for (long long o = 0; o < n; o += cluster::kPieceFloats) {
      const int c = static_cast<int>(std::min(cluster::kPieceFloats, n - o));
      req.emplace_back();
      check_mpi(MPI_Irecv(recv_at + o, c, MPI_FLOAT, peer, recv_tag, MPI_COMM_WORLD, &req.back()), "MPI_Irecv");
      req.emplace_back();
      check_mpi(MPI_Isend(send_from + o, c, MPI_FLOAT, peer, send_tag, MPI_COMM_WORLD, &req.back()), "MPI_Isend");
    }
  };
  if (s.up()) post(field, field + own_first * plane, s.rank - 1, kHaloDown, kHaloUp);
  if (s.down()) post(field + own_end * plane, field + (own_end - s.halo) * plane, s.rank + 1, kHaloUp, kHaloDown);
  check_mpi(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void slab_verdict(const std::string& error, long long shot, long long shots, const std::string& where,
                  const std::string& directory) {
  const int signal = io::interrupt_signal;
  if (!several()) {
    if (!error.empty()) throw Error(error);
    io::check_interrupt(where, directory);
    return;
  }
  // Every rank's state: "" (fine), "!<signal>" (asked to stop) or its error.
  const std::string mine = !error.empty() ? error : signal ? "!" + std::to_string(signal) : "";
  const std::vector<std::string> all = cluster::gather_strings(mine);
  int verdict = 0;  // 0 go on, 1 interrupted, 2 failed
  std::string what;
  int stop_signal = 0;
  if (cluster::rank() == 0)
    for (int r = 0; r < cluster::size(); ++r) {
      const std::string& a = all[static_cast<size_t>(r)];
      if (a.empty()) continue;
      if (a[0] != '!' && verdict < 2) {
        verdict = 2;
        what = "rank " + std::to_string(r) + " failed on shot " + std::to_string(shot + 1) + "/" +
               std::to_string(shots) + ": " + a;
      } else if (a[0] == '!' && verdict == 0) {
        verdict = 1;
        stop_signal = std::atoi(a.c_str() + 1);
      }
    }
  int msg[2] = {verdict, stop_signal};
  check_mpi(MPI_Bcast(msg, 2, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (msg[0] == 0) return;
  cluster::mark_agreed();
  if (cluster::rank() != 0) throw cluster::QuietExit{msg[0] == 2 ? 1 : 128 + msg[1]};
  if (msg[0] == 2) throw Error(what);
  throw io::Interrupted(msg[1], where, directory);
}

SlabPropagator::SlabPropagator(const Problem& global, int ranks, int rank, const Backend& backend) : global_(global) {
  const int halo = slab_halo(global.radius);
  slab_ = make_slab(global.grid.n[2], halo, rank, ranks);
  owners_ = receiver_owners(global, halo, ranks);
  for (const PointSet& spread : global.shot_receivers)
    shot_owners_.push_back(receiver_owners(global, spread, halo, ranks));
  local_ = seisrtm::slab_problem(global, slab_, owners_, shot_owners_);
  inner_ = backend(local_, slab_);
}

SlabPropagator::~SlabPropagator() = default;

std::string SlabPropagator::name() const {
  return inner_->name() + ", z slab " + std::to_string(slab_.rank + 1) + "/" + std::to_string(slab_.ranks) +
         " (planes " + std::to_string(slab_.own_lo) + ".." + std::to_string(slab_.own_hi - 1) + ")";
}

void SlabPropagator::gather_field(float* out) {
  gather_own_planes(field_.data(), slab_, global_.grid.n[0] * global_.grid.n[1], out);
}

void SlabPropagator::wavefield(float* out) {
  field_.resize(static_cast<size_t>(local_.grid.cells()));
  inner_->wavefield(field_.data());
  gather_field(out);
}

void SlabPropagator::receive_wavefield(float* out) {
  field_.resize(static_cast<size_t>(local_.grid.cells()));
  inner_->receive_wavefield(field_.data());
  gather_field(out);
}

void SlabPropagator::traces(float* out) {
  // The receivers of the shot: a spread a shot has its own owners.
  const std::vector<int>& owners = shot_owners_.empty() ? owners_ : shot_owners_[static_cast<size_t>(shot_)];
  const long long nrec = global_.receivers_of(shot_).size(), nt = global_.steps;
  traces_.resize(static_cast<size_t>(global_.max_receivers() * nt));
  inner_->traces(traces_.data());
  // Rank r sends the rows ([receiver][step]) of the receivers it records, in receiver order.
  std::vector<float> rows;
  if (slab_.rank != 0) {
    for (long long r = 0; r < nrec; ++r)
      if (owners[static_cast<size_t>(r)] == slab_.rank)
        rows.insert(rows.end(), traces_.begin() + r * nt, traces_.begin() + (r + 1) * nt);
    if (!rows.empty()) send_floats(rows.data(), static_cast<long long>(rows.size()), 0, kTraces);
    return;
  }
  for (long long r = 0; r < nrec; ++r)
    if (owners[static_cast<size_t>(r)] == 0) std::memcpy(out + r * nt, traces_.data() + r * nt, nt * sizeof(float));
  for (int k = 1; k < slab_.ranks; ++k) {
    long long n = 0;
    for (int o : owners) n += o == k;
    if (n == 0) continue;
    rows.resize(static_cast<size_t>(n * nt));
    recv_floats(rows.data(), n * nt, k, kTraces);
    long long i = 0;
    for (long long r = 0; r < nrec; ++r)
      if (owners[static_cast<size_t>(r)] == k) std::memcpy(out + r * nt, rows.data() + (i++) * nt, nt * sizeof(float));
  }
}

SlabMigrator::SlabMigrator(const Problem& global, int ranks, int rank, const Backend& backend) : global_(global) {
  const int halo = slab_halo(global.radius);
  slab_ = make_slab(global.grid.n[2], halo, rank, ranks);
  std::vector<std::vector<int>> shot_owners;
  for (const PointSet& spread : global.shot_receivers)
    shot_owners.push_back(receiver_owners(global, spread, halo, ranks));
  local_ = seisrtm::slab_problem(global, slab_, receiver_owners(global, halo, ranks), shot_owners);
  // A migration injects its data at the receivers: each entry by the slab that owns its plane.
  local_.receivers = own_entries(global.receivers, global.grid, slab_);
  for (size_t k = 0; k < global.shot_receivers.size(); ++k)
    local_.shot_receivers[k] = own_entries(global.shot_receivers[k], global.grid, slab_);
  inner_ = backend(local_, slab_);
}

SlabMigrator::~SlabMigrator() = default;

std::string SlabMigrator::name() const {
  return inner_->name() + ", z slab " + std::to_string(slab_.rank + 1) + "/" + std::to_string(slab_.ranks) +
         " (planes " + std::to_string(slab_.own_lo) + ".." + std::to_string(slab_.own_hi - 1) + ")";
}

void SlabMigrator::migrate_shot(long long shot, const float* data, float* image, float* illumination,
                                const Progress& progress) {
  image_.assign(static_cast<size_t>(local_.grid.cells()), 0.0f);
  illumination_.assign(image_.size(), 0.0f);
  // Image gathers: every slab adds its own planes into a zeroed copy of the whole layout (the
  // others' values stay 0); the other ranks send their own planes of each trace (a trace: one
  // location's offset, z fastest) and rank 0 writes them into its copy: the bits of one process's
  // gathers. Rank 0 receives one slab's share at a time.
  const long long gathers = gather_layout(global_).values();
  if (gathers > 0) {
    gathers_local_.assign(static_cast<size_t>(gathers), 0.0f);
    inner_->gathers_into(gathers_local_.data());
  }
  inner_->migrate_shot(shot, data, image_.data(), illumination_.data(), progress);
  inner_->gathers_into(nullptr);
  const long long plane = global_.grid.n[0] * global_.grid.n[1];
  gather_own_planes(image_.data(), slab_, plane, image);
  gather_own_planes(illumination_.data(), slab_, plane, illumination);
  if (gathers == 0) return;
  const long long nz = global_.grid.n[2], traces = gathers / nz;
  auto own_share = [&](const Slab& o) { return traces * (o.own_hi - o.own_lo); };
  std::vector<float> share;
  if (slab_.rank != 0) {
    share.resize(static_cast<size_t>(own_share(slab_)));
    const long long own = slab_.own_hi - slab_.own_lo;
    for (long long t = 0; t < traces; ++t)
      std::copy_n(gathers_local_.data() + t * nz + slab_.own_lo, own, share.data() + t * own);
    return send_floats(share.data(), own_share(slab_), 0, kField);
  }
  for (int r = 1; r < slab_.ranks; ++r) {
    const Slab o = make_slab(nz, slab_.halo, r, slab_.ranks);
    const long long own = o.own_hi - o.own_lo;
    share.resize(static_cast<size_t>(own_share(o)));
    recv_floats(share.data(), own_share(o), r, kField);
    for (long long t = 0; t < traces; ++t)
      std::copy_n(share.data() + t * own, own, gathers_local_.data() + t * nz + o.own_lo);
  }
  if (gathers_)
    for (long long i = 0; i < gathers; ++i) gathers_[i] += gathers_local_[i];
}

}  // namespace seisrtm
