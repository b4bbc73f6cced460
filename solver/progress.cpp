#include "solver/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace seisrtm {

Progress::Progress(std::string label, long long total_steps, double cells_per_step, bool quiet)
    : label_(std::move(label)),
      total_(total_steps),
      cells_(cells_per_step),
      quiet_(quiet),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Progress::gcells_per_second() const {
  const double s = seconds();
  return s > 0 ? cells_ * done_ / s / 1e9 : 0.0;
}

void Progress::update(long long steps_done) {
  done_ = steps_done;
  if (quiet_ || total_ <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  const int decile = static_cast<int>(10 * done_ / total_);
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (tty_ ? since < 0.2 && done_ < total_ : decile == last_decile_ && since < 15) return;
  last_decile_ = decile;
  last_print_ = now;
  const double s = seconds();
  const double left = done_ > 0 ? s * (total_ - done_) / done_ : 0.0;
  const std::string more = suffix_ ? suffix_() : "";
  std::fprintf(stderr, "%s%s step %lld/%lld (%3.0f%%)  %.3f GCells/s  %.0f s left%s%s", tty_ ? "\r" : "",
               label_.c_str(), done_, total_, 100.0 * done_ / total_, gcells_per_second(), left, more.c_str(),
               tty_ ? "   " : "\n");
  std::fflush(stderr);
}

void Progress::finish() {
  if (quiet_) return;
  std::fprintf(stderr, "%s%s done: %lld steps in %.2f s, %.3f GCells/s\n", tty_ ? "\r" : "", label_.c_str(), done_,
               seconds(), gcells_per_second());
}

}  // namespace seisrtm
