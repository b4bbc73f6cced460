#pragma once
// Error types shared by every layer. Host code throws; only main turns an exception into a
// message and an exit code.
#include <stdexcept>
#include <string>

namespace seisrtm {

// A user-facing error: bad configuration, bad input file, a problem that does not fit.
// The message names the key or file and what would be valid.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failing CUDA runtime or driver call, with the call's text, file and line.
class CudaError : public Error {
 public:
  CudaError(const std::string& call, const std::string& what, const char* file, int line)
      : Error(call + " failed: " + what + " (" + file + ":" + std::to_string(line) + ")") {}
};

}  // namespace seisrtm
