// [unit] The z-slab decomposition's bookkeeping (solver/decomposition.hpp): which planes each rank
// owns, holds, computes first and sends, and which sources and receivers each slab takes. The
// exchange itself runs under mpirun in tests/test_mpi.cpp.
#include <map>

#include "base/error.hpp"
#include "io/config.hpp"
#include "solver/decomposition.hpp"
#include "solver/problem.hpp"
#include "tests/catch.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;

TEST_CASE("slabs own every plane once, hold their halos, and compute edges before an interior that reads no halo",
          "[unit]") {
  for (int halo : {1, 4, 8})
    for (long long nz : {8LL, 9LL, 17LL, 40LL, 101LL})
      for (int ranks = 1; ranks <= nz / halo && ranks <= 12; ++ranks) {
        INFO("nz " << nz << ", halo " << halo << ", ranks " << ranks);
        long long next = 0;
        for (int r = 0; r < ranks; ++r) {
          const Slab s = make_slab(nz, halo, r, ranks);
          INFO("rank " << r << ": own [" << s.own_lo << ", " << s.own_hi << "), holds [" << s.lo << ", " << s.hi
                       << ")");
          // Own planes: consecutive, as even as possible, at least `halo` of them.
          CHECK(s.own_lo == next);
          next = s.own_hi;
          CHECK(s.own_hi - s.own_lo >= halo);
          CHECK(s.own_hi - s.own_lo <= nz / ranks + 1);
          // Held: `halo` planes of each neighbour, none beyond the grid.
          CHECK(s.lo == (r == 0 ? 0 : s.own_lo - halo));
          CHECK(s.hi == (r == ranks - 1 ? nz : s.own_hi + halo));
          // What rank r sends down is what rank r + 1 holds above its own planes.
          if (r + 1 < ranks) CHECK(make_slab(nz, halo, r + 1, ranks).lo == s.own_hi - halo);
          // The three ranges cover the own planes once; the edge ranges hold the planes the
          // neighbours receive; the interior's stencil (reach <= halo) stays on own planes.
          const SlabRanges g = slab_ranges(s);
          CHECK(g.own0 == s.own_lo - s.lo);
          CHECK(g.own1 == s.own_hi - s.lo);
          CHECK(g.own0 <= g.top);
          CHECK(g.top <= g.bottom);
          CHECK(g.bottom <= g.own1);
          std::map<long long, int> computed;
          for (long long z = g.own0; z < g.top; ++z) ++computed[z];
          for (long long z = g.bottom; z < g.own1; ++z) ++computed[z];
          for (long long z = g.top; z < g.bottom; ++z) ++computed[z];
          CHECK(static_cast<long long>(computed.size()) == g.own1 - g.own0);
          for (const auto& [z, times] : computed) CHECK(times == 1);
          if (g.bottom > g.top) {  // towards a neighbour; at the grid's ends the boundary applies
            if (s.up()) CHECK(g.top - halo >= g.own0);
            if (s.down()) CHECK(g.bottom + halo <= g.own1);
          }
          const auto sent_before_interior = [&](long long z) { return z < g.top || z >= g.bottom; };
          if (s.up())
            for (long long z = g.own0; z < g.own0 + halo; ++z) CHECK(sent_before_interior(z));
          if (s.down())
            for (long long z = g.own1 - halo; z < g.own1; ++z) CHECK(sent_before_interior(z));
        }
        CHECK(next == nz);
      }
}

TEST_CASE("a decomposition thinner than the halo is refused naming grid.shape", "[unit]") {
  CHECK_THROWS_WITH(make_slab(10, 4, 0, 3), Contains("grid.shape") && Contains("at most 2 ranks"));
  CHECK_NOTHROW(make_slab(12, 4, 2, 3));
}

TEST_CASE("each source entry goes to one slab, each receiver to one slab that holds all its entries", "[unit]") {
  const Problem pb = build_problem(parse_config(R"(
grid: {shape: [30, 20, 41], spacing: 10}
time: {steps: 10}
boundary: {damping_width: 5, free_surface: true}
sources: {shots: [[150, 100, 0], [150, 100, 133], [150, 100, 200], [140, 95, 397]]}
receivers: {line: {start: [20, 100, 0], end: [280, 100, 400], count: 41}}
)"));
  const int halo = slab_halo(pb.radius);
  CHECK(halo == 4);
  const long long plane = pb.grid.n[0] * pb.grid.n[1];
  for (int ranks : {2, 3, 5, 10}) {
    INFO(ranks << " ranks");
    const std::vector<int> owners = receiver_owners(pb, halo, ranks);
    std::vector<long long> src_entries(pb.shots.size(), 0), rec_entries(static_cast<size_t>(pb.receivers.size()), 0);
    std::vector<long long> injected(static_cast<size_t>(pb.receivers.size()), 0);
    for (int r = 0; r < ranks; ++r) {
      const Slab s = make_slab(pb.grid.n[2], halo, r, ranks);
      const Problem local = slab_problem(pb, s, owners);
      CHECK(local.grid.n[2] == s.hi - s.lo);
      CHECK(local.free_surface == (r == 0));
      CHECK(local.vp.size() == static_cast<size_t>(local.grid.cells()));
      CHECK(local.damping[2][0] == pb.damping[2][static_cast<size_t>(s.lo)]);
      CHECK(local.vp.back() == pb.vp[static_cast<size_t>(s.hi * plane - 1)]);
      for (size_t k = 0; k < pb.shots.size(); ++k) {
        src_entries[k] += static_cast<long long>(local.shots[k].cell.size());
        for (long long c : local.shots[k].cell) {  // own planes only
          CHECK(c / plane + s.lo >= s.own_lo);
          CHECK(c / plane + s.lo < s.own_hi);
        }
      }
      for (long long q = 0; q < pb.receivers.size(); ++q) {
        const long long n = local.receivers.offset[q + 1] - local.receivers.offset[q];
        rec_entries[static_cast<size_t>(q)] += n;
        CHECK((n > 0) == (owners[static_cast<size_t>(q)] == r));
      }
      const PointSet own = own_entries(pb.receivers, pb.grid, s);
      for (long long q = 0; q < pb.receivers.size(); ++q)
        injected[static_cast<size_t>(q)] += own.offset[q + 1] - own.offset[q];
    }
    for (size_t k = 0; k < pb.shots.size(); ++k)
      CHECK(src_entries[k] == static_cast<long long>(pb.shots[k].cell.size()));
    for (long long q = 0; q < pb.receivers.size(); ++q) {
      const long long n = pb.receivers.offset[q + 1] - pb.receivers.offset[q];
      CHECK(rec_entries[static_cast<size_t>(q)] == n);  // recorded whole, by one slab
      CHECK(injected[static_cast<size_t>(q)] == n);     // injected once, entry by entry
    }
  }
}
