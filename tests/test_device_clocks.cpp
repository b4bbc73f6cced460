// [unit] The clock samples' summary bench prints beside its rates: the samples of a span, the SM
// clock's mean and least, the board power, and the shares held by power and by heat, where NVML's
// other reasons (an idle GPU, application clocks) count as neither.
#include <chrono>
#include <vector>

#include "solver/device_clocks.hpp"
#include "tests/catch.hpp"

using namespace seisrtm;
using std::chrono::milliseconds;

TEST_CASE("the clocks' summary of a span: its samples only, power and heat told apart from other reasons", "[unit]") {
  const SampleClock::time_point t0{};
  auto at = [&](int ms) { return t0 + milliseconds(ms); };
  const std::vector<ClockSample> samples = {
      {at(0), 1980, 600000, 0},
      {at(10), 1900, 700000, ClockReason::kSwPowerCap},
      {at(20), 1850, 700000, ClockReason::kSwPowerCap | ClockReason::kHwPowerBrake},
      {at(30), 1980, 650000, ClockReason::kHwSlowdown},
      {at(40), 1000, 100000, 0x1 | 0x2},  // idle, application clocks
  };
  const ClockSummary c = summarize_clocks(samples, at(10), at(30), 1980, 700);
  CHECK(c.samples == 3);  // both ends of the span included
  CHECK(c.mean_sm_mhz == Approx((1900 + 1850 + 1980) / 3.0));
  CHECK(c.min_sm_mhz == 1850);
  CHECK(c.mean_power_w == Approx((700 + 700 + 650) / 3.0));
  CHECK(c.power_held == Approx(2 / 3.0));
  CHECK(c.thermal_held == Approx(1 / 3.0));
  CHECK(c.text() ==
        "SM clock 1910 MHz (1850 at the least; highest 1980), 683 W of 700, held by power 67% of the time, by heat "
        "or slowdown 33%");

  const ClockSummary idle = summarize_clocks(samples, at(35), at(45), 0, 0);
  CHECK(idle.samples == 1);
  CHECK(idle.power_held == 0);
  CHECK(idle.thermal_held == 0);
  CHECK(idle.text() == "SM clock 1000 MHz (1000 at the least), 100 W, held by power 0% of the time");

  const ClockSummary none = summarize_clocks(samples, at(41), at(50), 1980, 700);
  CHECK(none.samples == 0);
  CHECK(none.text().empty());
}
