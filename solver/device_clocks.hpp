#pragma once
// The GPU's clocks while it works: its SM clock, its board power and the reasons the driver gives
// for holding the clock below its highest, sampled through NVML (the driver's libnvidia-ml.so.1,
// opened at run time, so the program starts without it). bench prints them beside its rates: a
// memory-bound kernel can run at the card's power limit, and then its rate depends on the card and
// its cooling as much as on the code (docs/BENCHMARKS.md, "RTM").
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace seisrtm {

using SampleClock = std::chrono::steady_clock;

struct ClockSample {
  SampleClock::time_point at;
  unsigned sm_mhz = 0;
  unsigned power_mw = 0;           // NVML's board power reading
  unsigned long long reasons = 0;  // NVML's clock event reasons, a bit mask (ClockReason)
};

// NVML's clock event reasons that bench reports (nvmlClocksEventReason*).
namespace ClockReason {
constexpr unsigned long long kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                             kHwPowerBrake = 0x80;
constexpr unsigned long long kPower = kSwPowerCap | kHwPowerBrake;
constexpr unsigned long long kThermal = kHwSlowdown | kSwThermal | kHwThermal;
}  // namespace ClockReason

// What the samples of one span say.
struct ClockSummary {
  int samples = 0;
  double mean_sm_mhz = 0;
  unsigned min_sm_mhz = 0, top_sm_mhz = 0;     // top: the device's highest SM clock (0: unknown)
  double mean_power_w = 0, power_limit_w = 0;  // limit: the enforced power limit (0: unknown)
  double power_held = 0;                       // share of the samples with a power reason
  double thermal_held = 0;                     // share of the samples with a thermal or slowdown reason
  // "SM clock 1500 MHz (1400 at the least; highest 2000), 500 W of 600, held by power 50% of the
  // time" (values of the form only); the thermal share only where it is not 0; "" without samples.
  std::string text() const;
};

// The summary of the samples taken in [from, to].
ClockSummary summarize_clocks(const std::vector<ClockSample>& samples, SampleClock::time_point from,
                              SampleClock::time_point to, unsigned top_sm_mhz, double power_limit_w);

// The summary of several spans' samples together (the runs of one cell), as if summarized at once.
ClockSummary combine_clocks(const std::vector<ClockSummary>& spans);

// Samples one CUDA device every `period` on its own thread for as long as it lives. Where NVML or
// the device cannot be read it samples nothing and `reason()` says why; nothing else changes.
class ClockSampler {
 public:
  explicit ClockSampler(int cuda_device = 0, std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  bool active() const;
  std::chrono::milliseconds period() const;
  const std::string& reason() const;  // why it samples nothing ("" when active)
  ClockSummary between(SampleClock::time_point from, SampleClock::time_point to) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seisrtm
