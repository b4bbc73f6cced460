#pragma once
// SIGINT, SIGTERM and SIGHUP (a closed terminal, a dropped ssh connection) stop a run cleanly: main installs handlers
// that only record the signal (async-signal-safe; a signal the caller ignores, as nohup does SIGHUP, stays ignored);
// the time loops call check_interrupt() between chunks of steps, which throws Interrupted, so every RAII owner of a
// temporary file removes it on the way out and the results of earlier runs are never touched. A second signal is not
// caught: it ends the process at once (for a loop that does not come back to a check).
#include <unistd.h>

#include <csignal>
#include <string>

#include "base/error.hpp"

namespace seisrtm::io {

// The signal that asked the run to stop, 0 while none did.
inline volatile std::sig_atomic_t interrupt_signal = 0;

// The name a message gives the signal that stopped the run.
inline const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return "a signal";
  }
}

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

// The temporaries of the output set being written, which the signal handler removes itself
// (unlink is async-signal-safe): under mpirun a rank is killed (SIGKILL) 1 s after the SIGTERM it
// was passed, which a loaded node's rank 0 may not reach its next check within. Best effort: the
// first kMaxTemporaries paths (their strings are kept until the process ends). A set that has
// started committing keeps its files (committing).
inline constexpr int kMaxTemporaries = 16384;
inline const char* temporary_paths[kMaxTemporaries];
inline volatile std::sig_atomic_t temporary_count = 0;
inline volatile std::sig_atomic_t committing = 0;

inline void register_temporary(const std::string& path) {
  if (temporary_count >= kMaxTemporaries) return;
  char* copy = new char[path.size() + 1];  // kept: the handler may read it at any time
  path.copy(copy, path.size());
  copy[path.size()] = '\0';
  temporary_paths[temporary_count] = copy;
  temporary_count = temporary_count + 1;  // published after the path is in place
}

// From the signal handler: unlinks every registered temporary unless a set is committing.
inline void remove_temporaries_now() {
  if (committing) return;
  for (int i = 0; i < temporary_count; ++i) ::unlink(temporary_paths[i]);
}

// Set by a SIGCONT (main installs the handler under mpirun only): Open MPI's mpirun answers
// SIGINT or SIGTERM with SIGCONT to every rank, SIGTERM one odls_base_sigkill_timeout (1 s)
// later, SIGKILL after another; a job that would end within that second must not commit
// (cluster::settle_before_commit). A resumed job (Ctrl-Z, fg) gets SIGCONT as well.
inline volatile std::sig_atomic_t continued = 0;

// Throws Interrupted when a signal asked the run to stop.
inline void check_interrupt(const std::string& where, const std::string& directory) {
  if (const int s = interrupt_signal) throw Interrupted(s, where, directory);
}

}  // namespace seisrtm::io
