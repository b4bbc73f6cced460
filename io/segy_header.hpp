#pragma once
// What the SEG-Y writers and readers of io/ share (io/segy.cpp: shot gathers; io/segy_cube.cpp:
// image and model cubes): segyio handles, the header sizes, the scalar convention of the
// coordinate and depth fields, big-endian rev 2 fields and the 40-line textual header.
#include <segyio/segy.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace seisrtm::io::segy {

struct Closer {
  void operator()(segy_file* f) const {
    if (f) segy_close(f);  // only on a failure path: a writer closes itself and checks
  }
};
using Handle = std::unique_ptr<segy_file, Closer>;

constexpr int kText = SEGY_TEXT_HEADER_SIZE, kBin = SEGY_BINARY_HEADER_SIZE, kTrace = SEGY_TRACE_HEADER_SIZE;
constexpr long kTrace0 = kText + kBin;  // no extended textual headers

// A number for a header text or message, 10 significant digits.
std::string fmt(double v);
// Big-endian bytes for the rev 2 fields of the binary header that segyio 1.8 does not name.
void put_be(char* p, uint64_t v, int bytes);
// Those rev 2 fields of the 400-byte binary header `bin`: extended traces per ensemble (3261),
// samples (3269), the sample interval as a double in the 16-bit field's units (3273, 3281), the
// byte order constant (3297), traces in the file (3513, 64 bits) and the byte offset of the
// first trace (3521, 64 bits: kTrace0, no extended textual headers).
void put_rev2_fields(char* bin, long long per_ensemble, long long samples, double interval, long long traces);
// Decimal exponent k of the scalar -10^k (k = 0: scalar 1) for a set of values: the smallest
// k that holds every value exactly (to 1e-9 of its unit), else the largest whose values stay
// within `limit` (a 32-bit field by default); -1 when even scalar 1 exceeds it.
int scalar_exponent(const std::vector<double>& values, double limit = 2147483647.0);
int scalar_of(int k);  // the scalar of exponent k: 1, -10, -100, ...
// The stored integer of value v under `scalar` (stored = v x 10^k for scalar -10^k).
long long scaled(double v, int scalar);
// The value a stored integer stands for: scalar > 0 multiplies, < 0 divides, 0 is taken as 1
// (common in the field: SEG-Y rev 1 leaves it undefined).
double unscaled(int32_t raw, int scalar);
// A scalar with its unit for a textual header: "-100 (cm)".
std::string scalar_text(int s);
// 40 lines of 80 characters, "C01 ..." to "C40 ...": the first 38 of `lines` (blank beyond
// them) and the revision's two closing lines ("SEG Y REV1", "END TEXTUAL HEADER" for rev 1;
// "SEG-Y_REV2.0", "END TEXT" for rev 2), NUL-terminated for segy_write_textheader.
std::string text_header(std::vector<std::string> lines, int revision);

}  // namespace seisrtm::io::segy
