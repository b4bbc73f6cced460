#pragma once
// Progress of long runs on stderr: step, percentage, GCells/s and time left. One updating line
// on a terminal, a line every 10% (or 15 s) otherwise, nothing when quiet.
#include <chrono>
#include <functional>
#include <string>

namespace seisrtm {

class Progress {
 public:
  Progress(std::string label, long long total_steps, double cells_per_step, bool quiet);
  void update(long long steps_done);
  void set_label(std::string label) { label_ = std::move(label); }
  // Text after each progress line's own (the whole survey's time left: shot_loop.hpp).
  void set_suffix(std::function<std::string()> suffix) { suffix_ = std::move(suffix); }
  void finish();
  double seconds() const;
  double gcells_per_second() const;

 private:
  std::string label_;
  std::function<std::string()> suffix_;
  long long total_;
  double cells_;
  bool quiet_, tty_;
  long long done_ = 0;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace seisrtm
