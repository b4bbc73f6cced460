// [cpu] The shot loop of run and migrate in one process: it computes the shots of its plan, in
// the plan's order, and hands every result over to the command's keep; a shot's failure reaches
// the caller as it was thrown.
#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.hpp"
#include "solver/shot_loop.hpp"
#include "tests/catch.hpp"

using namespace seisrtm;

namespace {

ShotPlan plan_of(std::vector<long long> shots, long long total) {
  ShotPlan plan;
  plan.shots = std::move(shots);
  plan.total = total;
  plan.steps = 4;
  plan.cells = 1;
  plan.quiet = true;
  plan.directory = ".";
  return plan;
}

}  // namespace

TEST_CASE("the shot loop computes the shots of its plan and hands every result over", "[cpu]") {
  std::vector<std::string> computed;
  std::vector<std::tuple<int, long long, float>> kept;
  ShotWork work;
  work.compute = [&](long long s, ShotSteps& st) {
    computed.push_back(st.label());
    st.begin({}, st.label());
    st.progress("", 4);
    st.check(st.label() + ", step 4/4");
    std::vector<float> traces{float(10 * s)};
    st.send(cluster::ResultKind::traces, 0, traces);
  };
  work.keep = [&](int from, long long s, cluster::ResultKind kind, long long, std::vector<float>& data) {
    CHECK(kind == cluster::ResultKind::traces);
    kept.emplace_back(from, s, data.at(0));
  };
  ShotLoop loop(plan_of({3, 0, 2}, 5), std::move(work));
  loop.run();
  CHECK(computed == std::vector<std::string>{"shot 4/5", "shot 1/5", "shot 3/5"});
  CHECK(kept == std::vector<std::tuple<int, long long, float>>{{0, 3, 30.0f}, {0, 0, 0.0f}, {0, 2, 20.0f}});
  CHECK(loop.shots_by_other_ranks() == 0);
}

TEST_CASE("a shot's failure in one process reaches the caller as it was thrown", "[cpu]") {
  ShotWork work;
  work.compute = [](long long s, ShotSteps&) {
    if (s == 1) throw Error("shot two failed");
  };
  work.keep = [](int, long long, cluster::ResultKind, long long, std::vector<float>&) {};
  ShotLoop loop(plan_of({0, 1}, 2), std::move(work));
  CHECK_THROWS_WITH(loop.run(), "shot two failed");
}

TEST_CASE("the survey's time left: the shots left at the pace of those done, less the time since", "[unit]") {
  using std::chrono::seconds;
  SurveyClock c;
  c.total = 5;
  CHECK(c.text().empty());  // nothing done: nothing to go by
  const auto now = std::chrono::steady_clock::now();
  c.start = now - seconds(10);
  c.last_done = now;
  c.done = 2;  // 2 shots in 10 s: 3 more in about 15 s
  CHECK(c.text() == "; survey: 2 of 5 shots done, about 15 s left");
  c.last_done = now - seconds(4);  // the same pace, the last 4 s ago: 11 s
  c.start = now - seconds(14);
  CHECK(c.text() == "; survey: 2 of 5 shots done, about 11 s left");
  c.start = now - seconds(3000);
  c.last_done = now;
  c.done = 1;  // 4 more at 3000 s each: 3 h 20 min
  CHECK(c.text() == "; survey: 1 of 5 shots done, about 3 h 20 min left");
  c.done = 5;
  CHECK(c.text().empty());  // done: the closing lines say the rest
}
