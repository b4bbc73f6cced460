// [gpu] The clock sampler reads the GPU the CUDA runtime works on through NVML (the driver's
// library; a container needs the driver's utility capability for it, as nvidia-smi does): samples
// at the period asked, an SM clock no higher than the device's highest, the board's power and its
// limit.
#include <chrono>
#include <thread>

#include "solver/device_clocks.hpp"
#include "tests/catch.hpp"

using namespace seisrtm;

TEST_CASE("the clock sampler reads the SM clock, power and reasons of CUDA device 0", "[gpu]") {
  const SampleClock::time_point t0 = SampleClock::now();
  const ClockSampler sampler(0, std::chrono::milliseconds(5));
  INFO(sampler.reason());
  REQUIRE(sampler.active());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const SampleClock::time_point t1 = SampleClock::now();
  const ClockSummary c = sampler.between(t0, t1);
  // Samples are at least a period apart, so no more than the span holds; a loaded host may delay
  // some, not most of them.
  const double periods = std::chrono::duration<double>(t1 - t0).count() / 0.005;
  INFO(c.samples << " samples in " << periods << " periods");
  CHECK(c.samples <= periods + 1);
  CHECK(c.samples >= 10);
  CHECK(c.min_sm_mhz > 0);
  CHECK(c.top_sm_mhz > 0);
  CHECK(c.mean_sm_mhz <= c.top_sm_mhz);
  CHECK(c.power_limit_w > 0);
  CHECK(c.mean_power_w > 0);
  CHECK(sampler.between(t0, t0).samples == 0);  // before the first sample
}
