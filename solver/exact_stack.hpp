#pragma once
// The stack of a migration, summed exactly. Each shot's contribution k v (k the imaging
// interval, v a cell of the shot's image or illumination, their product in float) is rounded
// once to a fixed grid of 2^q and added as a 128-bit integer; the sum is rounded to float once,
// at the end. Integer addition is associative, so the stack is the same bits whatever the order
// the shots arrive in, the ranks that computed them, and the parts of the survey they were
// migrated in (`migrate --shots`, `seisrtm stack`): docs/guide/migrate.md "Parts of a survey".
//
// The grid: b, a power of two above any contribution (from the shots' injection peaks, the
// record length and 40 bits of margin for the fields' growth, the same for every part of a
// survey: all shots of the data), and q = b + 31 - 126, so that 2^31 contributions of at most
// 2^b sum within the 127 bits of a signed 128-bit integer. A contribution is rounded to 2^q,
// 2^-95 of the bound, which lies about 2^45 above the largest contribution in practice (the
// growth margin): about 50 bits below the image's peak, so only cells fainter than about 2^-26
// of it carry fewer than float's 24 bits of their exact sum. The sum is rounded to float through
// double. 32 bytes a cell (image and illumination), 16 a gather value.
#include <memory>
#include <string>
#include <vector>

namespace seisrtm {

struct Problem;

// Bits above the fields' one-step injection peaks that the fields may grow by (a field sums its
// injections over many steps and focuses near its points): the bound's margin. Part of what
// parts of a survey must share (stack_parts.hpp).
constexpr int kStackGrowthBits = 40;

struct StackExponents {
  int image = 0;         // b of image contributions (S R summed over the imaging steps, times k)
  int illumination = 0;  // b of illumination contributions (S^2)
  bool operator==(const StackExponents&) const = default;
};

// The bounds of a survey: every shot of `pb`, its data rows in `traces` ([shot][receivers][steps],
// pb.max_receivers() rows a shot).
StackExponents stack_exponents(const Problem& pb, const float* traces);

class ExactStack {
 public:
  ExactStack() = default;
  // `gathers`: the values of the image gathers (solver/image_gathers.hpp) summed beside the image,
  // on the image's grid (|S(x - h) R(x + h)| has the image's bound); 0: none.
  ExactStack(long long cells, StackExponents e, long long gathers = 0);
  long long cells() const { return cells_; }
  long long gather_values() const { return gather_values_; }
  const StackExponents& exponents() const { return e_; }
  // Adds a shot: k image[i] and k illumination[i] (float products), each rounded to the grid, on
  // `threads` OpenMP threads (0: OpenMP's default). Throws Error when a contribution reaches the
  // bound (a wavefield that grew without limit).
  // With gathers, `gathers` (gather_values() of them) are added as well.
  void add(const float* image, const float* illumination, float k, int threads = 0, const float* gathers = nullptr);
  // Adds another stack of the same grid, exactly.
  void add(const ExactStack& other);
  // The sums rounded to float.
  void to_float(float* image, float* illumination) const;
  void gathers_to_float(float* gathers) const;
  // The sums themselves, cells() of them (parts and the resume journal write and read them
  // whole: two 64-bit words a cell, low then high, two's complement).
  __int128* sums(bool illumination) { return illumination ? illumination_.get() : image_.get(); }
  const __int128* sums(bool illumination) const { return illumination ? illumination_.get() : image_.get(); }
  __int128* gather_sums() { return gathers_.get(); }
  const __int128* gather_sums() const { return gathers_.get(); }

 private:
  StackExponents e_;
  long long cells_ = 0, gather_values_ = 0;
  // Zeroed by every thread in its own part (first touch: no single-threaded fill of 32 bytes a cell).
  std::unique_ptr<__int128[]> image_, illumination_, gathers_;
};

}  // namespace seisrtm
