#pragma once
// What a resumed run or an added part must share with the run it continues: an identity, a text
// of the resolved config (less what does not change a shot's bits) and hashes of the inputs as
// read. Two identities that differ are named by their first differing lines.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "io/config.hpp"
#include "solver/problem.hpp"

namespace seisrtm {

// FNV-1a's step over 64-bit words (8 times faster than over bytes: a journal of 800^3 holds 16
// GiB), the bytes that do not fill a word at the end one by one. The same value however the
// bytes are split between calls. Enough to tell two files or data sets apart (not a defence).
class Fnv {
 public:
  void add(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (; n > 0 && pending_ > 0; --n) push(*p++);
    for (; n >= 8; n -= 8, p += 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      h_ = (h_ ^ w) * kPrime;
    }
    for (; n > 0; --n) push(*p++);
  }
  std::uint64_t value() const {
    std::uint64_t h = h_;
    for (int i = 0; i < pending_; ++i) h = (h ^ word_[i]) * kPrime;
    return h;
  }

 private:
  static constexpr std::uint64_t kPrime = 1099511628211ull;
  void push(unsigned char b) {
    word_[pending_++] = b;
    if (pending_ < 8) return;
    std::uint64_t w;
    std::memcpy(&w, word_, 8);
    h_ = (h_ ^ w) * kPrime;
    pending_ = 0;
  }
  std::uint64_t h_ = 1469598103934665603ull;
  unsigned char word_[8] = {};
  int pending_ = 0;
};

// The FNV of n bytes as 16 hexadecimal digits.
std::string hash_text(const void* data, std::size_t n);
template <class T>
std::string data_hash(const std::vector<T>& v) {
  return hash_text(v.data(), v.size() * sizeof(T));
}

// The config as it decides a shot's bits: without the config file's name, the model's and the
// wavelet's file names (their contents are hashed by inputs_identity) and the solver keys that
// keep the bits (backend, which the caller names as resolved, threads, device, memory, graphs,
// decomposition: z slabs give one process's bits); kernel, z_block and storage stay.
Config bit_deciding_config(Config c);

// The inputs as read: the model's volumes, the wavelet, the sources' and receivers' positions.
std::string inputs_identity(const Problem& pb);

// The backend's kind from a propagator's or migrator's name, up to its settings ("cpu", "cuda
// tma"; a slab's name adds ", z slab ...").
std::string backend_kind(const std::string& name);

// Where two identities differ: the lines of each that the other lacks, with the keys of the YAML
// lines that enclose them ("a.b: 3"), up to three ("'a: 1', 'b: 2'"; "(nothing)" where one has none).
std::pair<std::string, std::string> identity_differences(const std::string& a, const std::string& b);

// fsync of a file or a directory by path; false where it cannot be opened or synced.
bool sync_path(const std::string& path);

}  // namespace seisrtm
