#pragma once
// z-slab domain decomposition (solver.decomposition: z; DESIGN.md section 9). Under mpirun every
// rank computes every shot over its own slab of planes: planes [own_lo, own_hi) of the grid, plus
// `halo` planes of each neighbour's, which are exchanged every step (host: MPI; GPU: NCCL,
// solver/nccl_halo.hpp). A slab is a Problem of its own (slab_problem): its grid is the planes it
// holds, its model and z damping are the global ones' planes, the free surface stays with the
// slab at z = 0, and it injects the source entries of its own planes and records the receivers
// assigned to it. Each cell is updated by the same arithmetic as on one rank from bitwise equal
// inputs, so the slabs together give the single-rank wavefield and traces bit for bit.
//
// The halo planes are stepped with the slab's own boundary conditions, then overwritten by the
// exchange: only the own planes count, and the exchange of step n comes after the step's source
// injection and before its receivers are recorded.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "solver/migration.hpp"
#include "solver/problem.hpp"
#include "solver/propagator.hpp"

namespace seisrtm {

struct Slab {
  int rank = 0, ranks = 1;
  long long nz = 0;                          // planes of the whole grid
  long long own_lo = 0, own_hi = 0;          // the planes this rank computes, [own_lo, own_hi)
  long long lo = 0, hi = 0;                  // the planes it holds: its own and `halo` of each neighbour's
  int halo = 0;                              // planes exchanged with each neighbour every step
  bool up() const { return own_lo > 0; }     // a neighbour above (rank - 1)
  bool down() const { return own_hi < nz; }  // a neighbour below (rank + 1)
  long long planes() const { return hi - lo; }
};

// A slab's own planes in slab coordinates, as a step computes them: first the edge planes its
// neighbours receive, [own0, top) and [bottom, own1), then the interior [top, bottom), whose
// stencils read no halo plane (top >= own0 + halo >= own0 + R). Where the edges would overlap,
// top = bottom = own1: the first range holds every own plane, the others are empty.
struct SlabRanges {
  long long own0 = 0, top = 0, bottom = 0, own1 = 0;
};
struct Slab;
SlabRanges slab_ranges(const Slab& s);

// The halo width: the stencil radius, and at least kHicksRadius planes, so that a receiver's
// interpolation footprint (at most 2 kHicksRadius planes deep) lies whole on one slab.
int slab_halo(int radius);
// Rank r of `ranks` holds nz planes split as evenly as possible (the first nz % ranks slabs one
// plane more). Throws Error naming grid.shape when a slab would own fewer than `halo` planes.
Slab make_slab(long long nz, int halo, int rank, int ranks);
// Per receiver, the rank that records it: the first whose held planes contain all its entries
// (0 for a receiver without entries).
std::vector<int> receiver_owners(const Problem& global, int halo, int ranks);
// The same for the receivers `rec` (a shot's spread).
std::vector<int> receiver_owners(const Problem& global, const PointSet& rec, int halo, int ranks);
// The slab's own problem (see above). Receivers it does not record keep no entries.
// shot_owners: a spread a shot's owners, one list a shot (empty: one spread for every shot).
Problem slab_problem(const Problem& global, const Slab& s, const std::vector<int>& owners,
                     const std::vector<std::vector<int>>& shot_owners = {});

// A box of the whole grid's cells restricted to the slab's own planes, in slab coordinates.
CellBox slab_box(const CellBox& global, const Slab& s);
// Every point of `global` with only its entries on the slab's own planes, in slab coordinates
// (a migration's receivers, injected where they lie: each entry by exactly one slab).
PointSet own_entries(const PointSet& global, const Grid& g, const Slab& s);

// Collective over the ranks of a decomposed run: true on every rank when any rank passes true.
bool any_rank(bool mine);
// Exchanges the halo planes of one field in host memory: `field` points at the slab's plane 0,
// planes are `plane` floats apart. Sends the first and last `halo` own planes to the neighbours
// and receives theirs into the halo planes (MPI).
void exchange_host_planes(float* field, long long plane, const Slab& s);

// Collective, after each chunk of steps of a decomposed run: when any rank failed (`error` not
// empty) or was asked to stop (SIGINT/SIGTERM), every rank stops. Rank 0 throws Error ("rank R
// failed on shot S/N: ...") or io::Interrupted; the others throw cluster::QuietExit. Without
// MPI: throws Error(error) when there is one.
void slab_verdict(const std::string& error, long long shot, long long shots, const std::string& where,
                  const std::string& directory);

// An error every rank of a decomposed run raises at the same point (a NaN found by a collective
// check): caught into slab_verdict. Any other error of one rank ends the job (MPI_Abort).
struct SharedFailure : Error {
  using Error::Error;
};

// One collective step of a decomposed run: `step` on every rank, then slab_verdict on the error
// of type E it threw, if any (other exceptions pass).
template <class E = Error, class Step>
void agreed_step(Step&& step, long long shot, long long shots, const std::string& where, const std::string& directory) {
  std::string error;
  try {
    step();
  } catch (const E& e) {
    error = e.what();
  }
  slab_verdict(error, shot, shots, where, directory);
}

// The global view of a decomposed run: a Propagator over the whole grid whose every call is
// collective. The slab's backend steps the slab's problem and exchanges the halos itself; this
// gathers wavefields and traces to rank 0 (the other ranks' `out` is not touched and may be null).
class SlabPropagator final : public Propagator {
 public:
  using Backend = std::function<std::unique_ptr<Propagator>(const Problem& slab_problem, const Slab& slab)>;
  SlabPropagator(const Problem& global, int ranks, int rank, const Backend& backend);
  ~SlabPropagator() override;
  std::string name() const override;
  void begin_shot(long long shot) override {
    shot_ = shot;
    inner_->begin_shot(shot);
  }
  void advance(long long first, long long count) override { inner_->advance(first, count); }
  void wavefield(float* out) override;
  void traces(float* out) override;
  void request_wavefield(long long) override { inner_->request_wavefield(local_.grid.cells()); }
  void receive_wavefield(float* out) override;
  std::vector<std::string> notes() const override { return inner_->notes(); }
  DeviceMemory device_memory() const override { return inner_->device_memory(); }
  Propagator& backend() { return *inner_; }

 private:
  void gather_field(float* out);
  const Problem& global_;
  Slab slab_;
  std::vector<int> owners_;
  std::vector<std::vector<int>> shot_owners_;  // a spread a shot: each shot's owners
  long long shot_ = 0;
  Problem local_;
  std::unique_ptr<Propagator> inner_;
  std::vector<float> field_, traces_;
};

// The migrator of a decomposed migration: each rank migrates every shot over its slab (its
// backend, built by `backend` for the slab's problem, exchanges the halos itself) and rank 0
// receives the shot's image and illumination of every slab. Every call is collective.
class SlabMigrator final : public Migrator {
 public:
  using Backend = std::function<std::unique_ptr<Migrator>(const Problem& slab_problem, const Slab& slab)>;
  SlabMigrator(const Problem& global, int ranks, int rank, const Backend& backend);
  ~SlabMigrator() override;
  std::string name() const override;
  // image and illumination: the whole grid's, written on rank 0 only (others may pass null).
  void migrate_shot(long long shot, const float* data, float* image, float* illumination,
                    const Progress& progress) override;
  Migrator& backend() { return *inner_; }

 private:
  const Problem& global_;
  Slab slab_;
  Problem local_;
  std::unique_ptr<Migrator> inner_;
  std::vector<float> image_, illumination_, gathers_local_;
};

}  // namespace seisrtm
