// [gpu] The clock sampler reads the GPU the CUDA runtime works on through NVML (the driver's
// library, present wherever the driver is): samples at the period asked, an SM clock no higher
// than the device's highest, and the board's power limit.
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
  const ClockSummary c = sampler.between(t0, SampleClock::now());
  // 40 periods of 5 ms; a loaded host may stretch a few, not most.
  CHECK(c.samples >= 20);
  CHECK(c.samples <= 41);
  CHECK(c.min_sm_mhz > 0);
  CHECK(c.top_sm_mhz > 0);
  CHECK(c.mean_sm_mhz <= c.top_sm_mhz);
  CHECK(c.power_limit_w > 0);
  CHECK(c.mean_power_w > 0);
  CHECK(sampler.between(t0, t0).samples == 0);  // before the first sample
}
