// [unit] The clock samples' summary bench prints beside its rates: the samples of a span, the SM
// clock's mean and least, the board power, and the shares held by power and by heat, where NVML's
// other reasons (an idle GPU, application clocks) count as neither; and several spans combined.
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

  // Spans combined (a cell's runs) say what one summary of their samples says; an empty span adds nothing.
  // Spans of 3 and 1 samples: a mean of the spans' means, unweighted, would differ.
  const ClockSummary both = combine_clocks({summarize_clocks(samples, at(0), at(20), 1980, 700), none,
                                            summarize_clocks(samples, at(40), at(40), 1980, 700)});
  const std::vector<ClockSample> four = {samples[0], samples[1], samples[2], samples[4]};
  const ClockSummary direct = summarize_clocks(four, at(0), at(40), 1980, 700);
  CHECK(both.samples == 4);
  CHECK(both.mean_sm_mhz == Approx(direct.mean_sm_mhz));
  CHECK(both.min_sm_mhz == 1000);
  CHECK(both.mean_power_w == Approx(direct.mean_power_w));
  CHECK(both.power_held == Approx(0.5));
  CHECK(both.thermal_held == 0);
  CHECK(both.text() == direct.text());
  CHECK(combine_clocks({none}).text().empty());

  // Each of NVML's reasons on its own: the power cap and the power brake are power, the three
  // slowdowns heat; idle, application clocks, sync boost and display clocks are neither.
  struct Case {
    unsigned long long reason;
    int power, heat;
  };
  for (const Case k : {Case{0x4, 1, 0}, Case{0x80, 1, 0}, Case{0x8, 0, 1}, Case{0x20, 0, 1}, Case{0x40, 0, 1},
                       Case{0x1, 0, 0}, Case{0x2, 0, 0}, Case{0x10, 0, 0}, Case{0x100, 0, 0}}) {
    INFO("reason " << k.reason);
    const ClockSummary one = summarize_clocks({{at(0), 1500, 500000, k.reason}}, at(0), at(0), 0, 0);
    CHECK(one.power_held == k.power);
    CHECK(one.thermal_held == k.heat);
  }
}
