#pragma once
// SIGINT and SIGTERM stop a run cleanly: main installs handlers that only record the signal
// (async-signal-safe); the time loops call check_interrupt() between chunks of steps, which
// throws Interrupted, so every RAII owner of a temporary file removes it on the way out and
// the results of earlier runs are never touched. A second signal is not caught: it ends the
// process at once (for a loop that does not come back to a check).
#include <csignal>
#include <string>

#include "base/error.hpp"

namespace seisrtm::io {

// The signal that asked the run to stop, 0 while none did.
inline volatile std::sig_atomic_t interrupt_signal = 0;

// Thrown by check_interrupt; not an Error, so no code that reports bad input can take it for one.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signal, const std::string& where, const std::string& directory)
      : std::runtime_error("interrupted at " + where), signal_(signal), where_(where), directory_(directory) {}
  int signal() const { return signal_; }
  // Where the run stopped ("shot 2/3, step 40/100") and the output directory it was writing to.
  const std::string& where() const { return where_; }
  const std::string& directory() const { return directory_; }

 private:
  int signal_;
  std::string where_, directory_;
};

// Throws Interrupted when a signal asked the run to stop.
inline void check_interrupt(const std::string& where, const std::string& directory) {
  if (const int s = interrupt_signal) throw Interrupted(s, where, directory);
}

}  // namespace seisrtm::io
