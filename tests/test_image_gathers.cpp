// Subsurface-offset gathers and their angle transform (solver/image_gathers.hpp).
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "io/config.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/decomposition.hpp"
#include "solver/image_gathers.hpp"
#include "solver/migration.hpp"
#include "solver/problem.hpp"
#include "tests/catch.hpp"
#include "tests/fixtures.hpp"

using seisrtm::CellBox;
using seisrtm::GatherLayout;
using seisrtm::Grid;

namespace {

double ricker(double t, double f) {
  const double a = std::numbers::pi * f * t;
  return (1 - 2 * a * a) * std::exp(-a * a);
}

// The depth of the largest |value| of row `r` (nz samples), refined by a parabola.
double peak_depth(const float* r, long long nz) {
  long long k = 1;
  for (long long z = 1; z + 1 < nz; ++z)
    if (std::abs(r[z]) > std::abs(r[k])) k = z;
  const double p = r[k - 1], q = r[k], s = r[k + 1];
  return double(k) + 0.5 * (p - s) / (p - 2 * q + s);
}

}  // namespace

TEST_CASE("offset gathers: each location's S(x - h) R(x + h), summed over levels, offsets beyond the box skipped",
          "[unit]") {
  Grid g;
  g.n = {23, 5, 7};
  g.h = {10, 10, 10};
  const CellBox box{{2, 1, 1}, {21, 4, 6}};
  const GatherLayout l = seisrtm::gather_layout(g, box, 3, {4, 2});
  REQUIRE(l.x == std::vector<long long>{2, 6, 10, 14, 18});
  REQUIRE(l.y == std::vector<long long>{1, 3});
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> out(static_cast<size_t>(l.values()), 0.0), want(out.size(), 0.0);
  for (int level = 0; level < 3; ++level) {
    std::vector<double> s(static_cast<size_t>(g.cells())), r(s.size());
    for (auto& v : s) v = u(gen);
    for (auto& v : r) v = u(gen);
    auto s_row = [&](long long iy, long long iz) { return s.data() + g.index(0, iy, iz); };
    auto r_row = [&](long long iy, long long iz) { return r.data() + g.index(0, iy, iz); };
    seisrtm::add_offset_gathers<double>(l, box, s_row, r_row, out.data());
    for (size_t jy = 0; jy < l.y.size(); ++jy)
      for (size_t jx = 0; jx < l.x.size(); ++jx)
        for (long long h = -3; h <= 3; ++h)
          for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz) {
            const long long ix = l.x[jx], iy = l.y[jy];
            if (ix - h < box.lo[0] || ix + h >= box.hi[0] || ix + h < box.lo[0] || ix - h >= box.hi[0]) continue;
            want[static_cast<size_t>(l.at(jy, jx, h, iz))] += s[g.index(ix - h, iy, iz)] * r[g.index(ix + h, iy, iz)];
          }
  }
  CHECK(out == want);  // the same products in the same order: the same bits
  // The first location (x = 2, the box's edge) has no negative or positive offset but 0.
  for (long long h = -3; h <= 3; ++h) CHECK((out[static_cast<size_t>(l.at(0, 0, h, 3))] == 0) == (h != 0));
}

TEST_CASE("angle gathers: a focused event is flat in angle; an event sloping in offset maps to its angle", "[unit]") {
  // 33 offsets of 10 m, 200 depths of 5 m; a 25 Hz-like Ricker in depth (wavelength ~ 60 m).
  const long long H = 16, nh = 2 * H + 1, nz = 200;
  const double dh = 10, dz = 5, z0 = 500;
  std::vector<double> angles;
  for (int a = -40; a <= 40; a += 5) angles.push_back(a);
  auto event = [&](double slope) {  // I(h, z) = w(z - z0 - h tan(slope)), h in m
    std::vector<float> g(static_cast<size_t>(nh * nz));
    for (long long h = -H; h <= H; ++h)
      for (long long z = 0; z < nz; ++z)
        g[static_cast<size_t>((h + H) * nz + z)] =
            static_cast<float>(ricker((z * dz - z0 - h * dh * std::tan(slope * std::numbers::pi / 180)) / 1500, 25));
    return g;
  };
  SECTION("focused at h = 0: the same depth and amplitude at every angle") {
    std::vector<float> g(static_cast<size_t>(nh * nz), 0.0f);
    for (long long z = 0; z < nz; ++z)
      g[static_cast<size_t>(H * nz + z)] = static_cast<float>(ricker((z * dz - z0) / 1500, 25));
    const std::vector<float> a = seisrtm::offset_to_angle(g.data(), nh, nz, dh, dz, angles);
    for (size_t k = 0; k < angles.size(); ++k) {
      INFO("angle " << angles[k]);
      CHECK(std::abs(peak_depth(a.data() + k * nz, nz) * dz - z0) < 0.05 * dz);
      CHECK(std::abs(a[k * nz + 100] - a[angles.size() / 2 * nz + 100]) < 1e-5);
    }
  }
  SECTION("sloping in offset by 20 degrees: its energy at +20 degrees") {
    const std::vector<float> g = event(20);
    const std::vector<float> a = seisrtm::offset_to_angle(g.data(), nh, nz, dh, dz, angles);
    size_t best = 0;
    double best_e = -1;
    for (size_t k = 0; k < angles.size(); ++k) {
      double e = 0;
      for (long long z = 0; z < nz; ++z) e += double(a[k * nz + z]) * a[k * nz + z];
      if (e > best_e) best_e = e, best = k;
    }
    CHECK(angles[best] == 20);
  }
}

TEST_CASE("gathers in the device's layout [y][z][x][offset] add into [y][x][offset][z] value for value", "[unit]") {
  // Sizes that are not multiples of the 32-value tiles on either side.
  Grid g;
  g.n = {101, 9, 45};
  g.h = {10, 10, 10};
  const CellBox box{{3, 1, 0}, {98, 8, 45}};
  const GatherLayout l = seisrtm::gather_layout(g, box, 5, {7, 3});
  const long long nyl = static_cast<long long>(l.y.size()), nxl = static_cast<long long>(l.x.size());
  std::vector<float> device(static_cast<size_t>(l.values())), out(device.size());
  for (size_t i = 0; i < device.size(); ++i) device[i] = float(i) + 0.5f;
  for (size_t i = 0; i < out.size(); ++i) out[i] = -float(i);
  seisrtm::add_from_device_layout(l, device.data(), out.data(), seisrtm::DevicePlanes{l.nz, 0, l.nz, 0});
  long long wrong = 0;
  for (long long jy = 0; jy < nyl; ++jy)
    for (long long z = 0; z < l.nz; ++z)
      for (long long jx = 0; jx < nxl; ++jx)
        for (long long h = -l.half_offsets; h <= l.half_offsets; ++h) {
          const size_t d = static_cast<size_t>(((jy * l.nz + z) * nxl + jx) * l.offsets() + h + l.half_offsets);
          const size_t o = static_cast<size_t>(l.at(jy, jx, h, z));
          wrong += out[o] != -float(o) + device[d];
        }
  CHECK(wrong == 0);
  // A z slab's device layout: 13 planes of which [2, 11) are its own, plane z the layout's z + 20;
  // the layout's other depths untouched.
  const seisrtm::DevicePlanes p{13, 2, 11, 20};
  std::vector<float> slab(static_cast<size_t>(nyl * nxl * l.offsets() * p.planes));
  for (size_t i = 0; i < slab.size(); ++i) slab[i] = float(i) + 0.25f;
  for (size_t i = 0; i < out.size(); ++i) out[i] = -float(i);
  seisrtm::add_from_device_layout(l, slab.data(), out.data(), p);
  wrong = 0;
  for (long long jy = 0; jy < nyl; ++jy)
    for (long long z = 0; z < l.nz; ++z)
      for (long long jx = 0; jx < nxl; ++jx)
        for (long long h = -l.half_offsets; h <= l.half_offsets; ++h) {
          const long long zl = z - p.z_shift;
          const bool own = zl >= p.z_lo && zl < p.z_hi;
          const size_t o = static_cast<size_t>(l.at(jy, jx, h, z));
          const float add =
              own ? slab[static_cast<size_t>(((jy * p.planes + zl) * nxl + jx) * l.offsets() + h + l.half_offsets)]
                  : 0.0f;
          wrong += own ? out[o] != -float(o) + add : out[o] != -float(o);
        }
  CHECK(wrong == 0);
  CHECK_THROWS_WITH(seisrtm::add_from_device_layout(l, slab.data(), out.data(), seisrtm::DevicePlanes{13, 2, 11, 40}),
                    Catch::Matchers::Contains("do not fit"));
}

TEST_CASE("a GPU migration's host memory counts its image gathers and refuses, naming the keys, what does not fit",
          "[unit]") {
  // The GPU tests' grid (77 x 53 x 61, damping 10, free surface: interior 57 x 33 x 51), gathers of
  // -7..7 at every x and y cell: 57 x 33 x 15 x 61 values of 36 bytes on the host (32 and the
  // pinned copy's 4) and angle gathers of 0, 2, ..., 60 degrees (31 traces of 4 bytes a depth),
  // beside the 14 volumes of the image's stack and a shot's.
  seisrtm::Config c = seisrtm::parse_config(seisrtm::test::fixture("gpu_migration.yaml"));
  seisrtm::MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 2;
  mc.gathers = seisrtm::GathersConfig{7, 1, 1, 60, 2};
  c.migration = mc;
  const seisrtm::Problem p = seisrtm::build_problem(c);
  const seisrtm::MigrationFootprint fp = seisrtm::migration_footprint(p, seisrtm::CudaOptions{});
  const double gathers = 36.0 * 57 * 33 * 15 * 61 + 4.0 * 57 * 33 * 31 * 61, volumes = 14.0 * double(fp.image_volume);
  CHECK(seisrtm::gather_layout(p).values() == 57LL * 33 * 15 * 61);
  CHECK(seisrtm::migration_host_bytes(p, fp) == gathers + volumes);
  CHECK(fp.volumes >= 4 * 57 * 33 * 15 * 61);  // the device's 4 bytes a value
  CHECK_NOTHROW(seisrtm::check_migration_host_memory(p, fp, (gathers + volumes) / 0.9 + 1));
  CHECK_THROWS_WITH(seisrtm::check_migration_host_memory(p, fp, (gathers + volumes) / 0.9 - 1024),
                    Catch::Matchers::Contains("for the image gathers") &&
                        Catch::Matchers::Contains("migration.gathers.x_every, y_every"));
}

TEST_CASE("the cuda backend refuses isic and gathers with fp16 storage, naming the keys; their device bytes counted",
          "[unit]") {
  // check_cuda_migration: what migrate runs before the traces are read and the migrator again.
  // isic and gathers on the device read fp32 fields; isic with gathers is refused on any backend.
  // Device bytes: isic's two volumes (1 / (v^2 dt^2) and dR); the gathers' 4 bytes a value over
  // the grid's planes, or a z slab's own and halo planes.
  using Catch::Matchers::Contains;
  seisrtm::Config c = seisrtm::parse_config(seisrtm::test::fixture("gpu_migration.yaml"));
  seisrtm::MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 2;
  c.migration = mc;
  seisrtm::Problem p = seisrtm::build_problem(c);
  const seisrtm::CudaOptions fp32;
  const seisrtm::MigrationFootprint correlation = seisrtm::migration_footprint(p, fp32);
  p.config.migration->imaging_condition = seisrtm::ImagingCondition::isic;
  const seisrtm::MigrationFootprint isic = seisrtm::migration_footprint(p, fp32);
  CHECK(isic.volumes == correlation.volumes + 2 * correlation.image_volume);
  seisrtm::CudaOptions half;
  half.storage = seisrtm::kernels::Storage::fp16;
  CHECK_THROWS_WITH(seisrtm::check_cuda_migration(p, half),
                    Contains("migration.imaging_condition") && Contains("solver.storage: fp32"));
  CHECK_NOTHROW(seisrtm::check_cuda_migration(p, fp32));
  p.config.migration->gathers = seisrtm::GathersConfig{4, 5, 4, 60, 2};
  CHECK_THROWS_WITH(seisrtm::check_cuda_migration(p, fp32),
                    Contains("migration.imaging_condition") && Contains("migration.gathers"));
  p.config.migration->imaging_condition = seisrtm::ImagingCondition::correlation;
  CHECK_THROWS_WITH(seisrtm::check_cuda_migration(p, half), Contains("migration.gathers") && Contains("fp32"));
  CHECK_NOTHROW(seisrtm::check_cuda_migration(p, fp32));
  const seisrtm::GatherLayout l = seisrtm::gather_layout(p);
  const seisrtm::Slab slab = seisrtm::make_slab(p.grid.n[2], seisrtm::slab_halo(p.radius), 1, 2);
  p.config.migration->gathers = seisrtm::GathersConfig{};
  const seisrtm::MigrationFootprint none = seisrtm::migration_footprint(p, fp32, &slab);
  p.config.migration->gathers = seisrtm::GathersConfig{4, 5, 4, 60, 2};
  const seisrtm::MigrationFootprint with = seisrtm::migration_footprint(p, fp32, &slab);
  CHECK(with.volumes - none.volumes == static_cast<std::size_t>(4 * l.locations() * l.offsets() * slab.planes()));
  CHECK(slab.planes() < p.grid.n[2]);
}
