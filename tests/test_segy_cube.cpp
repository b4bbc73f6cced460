// [unit] The image as a SEG-Y cube (io/segy_cube.hpp, docs/SEGY.md): a known 7 x 5 x 11 volume
// with survey coordinates in cm reads back through segyio's C API with one trace per column,
// inline (189) = y index + 1 and crossline (193) = x index + 1, inline slowest (the sorting
// segyio infers), CDP x, y (181, 185) x the scalar (71) the cell coordinates, and the samples
// bit for bit; plan_segy_cube refuses what the headers cannot hold.
// [integration] segyio.tools.cube (Python, PyPI's segyio in a venv under the build folder)
// gives an array (ny, nx, nz) equal to the volume.
#include <segyio/segy.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "io/segy_cube.hpp"
#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/segy_file.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

// A small cube: 7 x 5 x 11 cells, origin in cm (scalar -100), first depth 12 m.
constexpr std::array<long long, 3> kN{7, 5, 11};
constexpr std::array<double, 3> kH{12.5, 25.0, 5.0};
constexpr std::array<double, 3> kOrigin{500000.25, 4200000.5, 12.0};

// volume[z][y][x]: each sample names its cell (1000 k + 100 j + i, exact in a float), with a
// fraction, a negative zero and a denormal planted so a conversion or a mixed-up axis shows.
std::vector<float> known_volume() {
  std::vector<float> v(static_cast<size_t>(kN[0] * kN[1] * kN[2]));
  for (long long k = 0; k < kN[2]; ++k)
    for (long long j = 0; j < kN[1]; ++j)
      for (long long i = 0; i < kN[0]; ++i)
        v[static_cast<size_t>((k * kN[1] + j) * kN[0] + i)] = float(1000 * k + 100 * j + i) + 0.375f;
  v[1] = -0.0f;
  v[2] = 1e-41f;
  v[3] = -std::numeric_limits<float>::max();
  return v;
}

uint64_t get_be(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

using seisrtm::test::Segy;  // tests/segy_file.hpp

// The value a stored coordinate stands for (scalar < 0 divides, > 0 multiplies).
double unscaled(int raw, int scalar) {
  return scalar < 0 ? raw / double(-scalar) : double(raw) * scalar;
}

}  // namespace

TEST_CASE("an image as a SEG-Y cube reads back with segyio: geometry, coordinates, samples bit for bit",
          "[unit][segy]") {
  using namespace seisrtm;
  const fs::path d = test::fresh_dir("seisrtm_test_segy_cube_", "c");
  const std::vector<float> volume = known_volume();
  const long long nx = kN[0], ny = kN[1], nz = kN[2];
  const int rev = GENERATE(1, 2);
  INFO("rev " << rev);
  const std::string file = (d / ("image_rev" + std::to_string(rev) + ".sgy")).string();
  io::write_segy_cube(file, volume.data(), kN, kH, kOrigin, rev, "seisrtm test: migrated image\nconfig test.yaml");

  // 3600-byte file header, then nx ny traces of 240 + 4 nz bytes.
  CHECK(fs::file_size(file) == static_cast<uintmax_t>(3600 + nx * ny * (240 + 4 * nz)));
  Segy s(file);
  REQUIRE(s.traces == nx * ny);
  REQUIRE(s.samples == nz);
  CHECK(s.bfield(SEGY_BIN_FORMAT) == SEGY_IEEE_FLOAT_4_BYTE);
  CHECK(s.bfield(SEGY_BIN_INTERVAL) == 5000);  // 5 m in mm, the "us" field of time data
  CHECK(s.bfield(SEGY_BIN_TRACES) == nx);      // an ensemble is an inline
  CHECK(s.bfield(SEGY_BIN_SORTING_CODE) == 4);
  CHECK(s.bfield(SEGY_BIN_MEASUREMENT_SYSTEM) == 1);
  CHECK(s.bfield(SEGY_BIN_SEGY_REVISION) == (rev == 1 ? 0x0100 : 0x0200));
  if (rev == 2) {
    const char* b = s.bin;
    CHECK(get_be(b + 3269 - 3201, 4) == static_cast<uint64_t>(nz));
    const uint64_t bits = get_be(b + 3273 - 3201, 8);
    double ext;
    std::memcpy(&ext, &bits, 8);
    CHECK(ext == 5000.0);
    CHECK(get_be(b + 3297 - 3201, 4) == 16909060u);
    CHECK(get_be(b + 3513 - 3201, 8) == static_cast<uint64_t>(nx * ny));
  }
  const std::string text = s.text();
  CHECK_THAT(text, Contains("C01 seisrtm test: migrated image"));
  CHECK_THAT(text, Contains("EXACT DEPTH INTERVAL DZ = 5 M"));
  CHECK_THAT(text, Contains("ORIGIN X Y = 500000.25 4200000.5 M"));
  CHECK_THAT(text, Contains(rev == 1 ? "C39 SEG Y REV1" : "C39 SEG-Y_REV2.0"));
  // No line was cut at 80 columns: each ends in blanks.
  for (int l = 0; l < 40; ++l) CHECK(text[static_cast<size_t>(l * 80 + 79)] == ' ');

  // segyio's own geometry inference (what segyio.open(iline=189, xline=193) does).
  int sorting = -1, offsets = 0, n_il = 0, n_xl = 0;
  REQUIRE(segy_sorting(s.f, SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_OFFSET, &sorting, s.trace0, s.trsize) ==
          SEGY_OK);
  CHECK(sorting == SEGY_INLINE_SORTING);
  REQUIRE(segy_offsets(s.f, SEGY_TR_INLINE, SEGY_TR_CROSSLINE, s.traces, &offsets, s.trace0, s.trsize) == SEGY_OK);
  CHECK(offsets == 1);
  REQUIRE(segy_lines_count(s.f, SEGY_TR_INLINE, SEGY_TR_CROSSLINE, sorting, offsets, &n_il, &n_xl, s.trace0,
                           s.trsize) == SEGY_OK);
  CHECK(n_il == ny);
  CHECK(n_xl == nx);

  for (long long j = 0; j < ny; ++j)
    for (long long i = 0; i < nx; ++i) {
      const int t = static_cast<int>(j * nx + i);
      INFO("trace " << t + 1 << " (x index " << i << ", y index " << j << ")");
      const auto h = s.header(t);
      CHECK(Segy::field(h, SEGY_TR_INLINE) == j + 1);
      CHECK(Segy::field(h, SEGY_TR_CROSSLINE) == i + 1);
      const int scalar = Segy::field(h, SEGY_TR_SOURCE_GROUP_SCALAR);
      CHECK(scalar == -100);  // the coarsest that holds 500000.25 and 4200000.5 exactly
      // Exact: raw / 100 rounds to the nearest double, and origin + i h is exact here
      // (multiples of 0.25 m below 2^23).
      const double x = kOrigin[0] + double(i) * kH[0], y = kOrigin[1] + double(j) * kH[1];
      CHECK(unscaled(Segy::field(h, SEGY_TR_CDP_X), scalar) == x);
      CHECK(unscaled(Segy::field(h, SEGY_TR_CDP_Y), scalar) == y);
      CHECK(unscaled(Segy::field(h, SEGY_TR_SOURCE_X), scalar) == x);
      CHECK(unscaled(Segy::field(h, SEGY_TR_GROUP_Y), scalar) == y);
      CHECK(Segy::field(h, SEGY_TR_SAMPLE_COUNT) == nz);
      CHECK(Segy::field(h, SEGY_TR_SAMPLE_INTER) == 5000);
      CHECK(Segy::field(h, SEGY_TR_DELAY_REC_TIME) == 12);  // the first depth, m
      CHECK(Segy::field(h, SEGY_TR_SCALAR_TRACE_HEADER) == 1);
      const std::vector<float> tr = s.trace(t);
      std::vector<float> want(static_cast<size_t>(nz));
      for (long long k = 0; k < nz; ++k) want[k] = volume[static_cast<size_t>((k * ny + j) * nx + i)];
      CHECK(std::memcmp(tr.data(), want.data(), want.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("plan_segy_cube: scalars for the first depth, and what the headers cannot hold", "[unit][segy]") {
  using namespace seisrtm;
  // A first depth in cm: the time scalar (215) -100 holds it.
  const io::SegyCube c = io::plan_segy_cube("output.segy_image", 1, {4, 3, 10}, {10, 10, 2.5}, {0, 0, 7.25});
  CHECK(c.first_depth == 725);
  CHECK(c.depth_scalar == -100);
  CHECK(c.coordinate_scalar == 1);
  CHECK(c.interval == 2500);
  // 40 m is 40000 mm: beyond rev 1's 32767, within rev 2's 65535.
  CHECK_THROWS_WITH(io::plan_segy_cube("output.segy_image", 1, {4, 3, 10}, {10, 10, 40}, {0, 0, 0}),
                    Contains("output.segy_image") && Contains("40000 mm") && Contains("3217"));
  CHECK(io::plan_segy_cube("output.segy_image", 2, {4, 3, 10}, {10, 10, 40}, {0, 0, 0}).interval == 40000);
  CHECK_THROWS_WITH(io::plan_segy_cube("output.segy_image", 1, {4, 3, 40000}, {10, 10, 5}, {0, 0, 0}),
                    Contains("40000 depth samples") && Contains("rev 2 holds 65535"));
  CHECK_THROWS_WITH(io::plan_segy_cube("output.segy_image", 1, {4, 3, 10}, {10, 10, 5}, {3e9, 0, 0}),
                    Contains("32-bit"));
  CHECK_THROWS_WITH(io::plan_segy_cube("output.segy_image", 1, {4, 3, 10}, {10, 10, 5}, {0, 0, 40000}),
                    Contains("109-110"));
}

TEST_CASE("segyio.tools.cube reads the image cube as (ny, nx, nz), equal to the volume", "[integration][segy]") {
  using namespace seisrtm;
  const fs::path d = test::fresh_dir("seisrtm_test_segy_cube_", "python");
  const std::vector<float> volume = known_volume();
  const std::string file = (d / "image.sgy").string();
  io::write_segy_cube(file, volume.data(), kN, kH, kOrigin, 1, "seisrtm test: migrated image");
  const fs::path raw = d / "volume.f32";  // [z][y][x], native float32
  {
    std::ofstream o(raw, std::ios::binary);
    o.write(reinterpret_cast<const char*>(volume.data()), static_cast<std::streamsize>(volume.size() * 4));
    REQUIRE(o.good());
  }
  // The venv is made once and reused while it imports segyio and numpy; no python3, no venv
  // module or no PyPI is a failure with the command that failed, not a skip.
  const std::string venv = std::string(SEISRTM_BUILD_DIR) + "/python-segyio-venv";
  const std::string py = venv + "/bin/python";
  if (test::run_shell("'" + py + "' -c 'import segyio, numpy'").code != 0) {
    const test::Result made = test::run_shell("rm -rf '" + venv + "' && python3 -m venv '" + venv + "' && '" + py +
                                              "' -m pip install --quiet --disable-pip-version-check segyio numpy");
    INFO("creating the venv " << venv << " with PyPI's segyio and numpy (python3-venv, network):\n" << made.output);
    REQUIRE(made.code == 0);
  }
  const std::string check = test::write_text(d / "check.py", R"(import sys
import numpy as np
import segyio

path, raw, nx, ny, nz = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
cube = segyio.tools.cube(path)
assert cube.shape == (ny, nx, nz), f"shape {cube.shape}, expected {(ny, nx, nz)}"
want = np.fromfile(raw, dtype=np.float32).reshape(nz, ny, nx).transpose(1, 2, 0)
bits = lambda a: np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
assert np.array_equal(bits(cube), bits(want)), "samples differ"
with segyio.open(path, iline=189, xline=193) as f:
    assert f.sorting == segyio.TraceSortingFormat.INLINE_SORTING, f.sorting
    assert list(f.ilines) == list(range(1, ny + 1)), list(f.ilines)
    assert list(f.xlines) == list(range(1, nx + 1)), list(f.xlines)
    assert np.allclose(f.samples, 12.0 + 5.0 * np.arange(nz)), f.samples  # depths, m
print("segyio.tools.cube:", cube.shape)
)");
  const test::Result r =
      test::run_shell("'" + py + "' '" + check + "' '" + file + "' '" + raw.string() + "' " + std::to_string(kN[0]) +
                      " " + std::to_string(kN[1]) + " " + std::to_string(kN[2]));
  INFO(r.output);
  CHECK(r.code == 0);
}
