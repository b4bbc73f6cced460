#include "solver/cluster.hpp"

// The C API only (Open MPI's and MPICH's C++ bindings would need their own library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/error.hpp"
#include "io/interrupt.hpp"
#include "solver/hooks.hpp"

namespace seisrtm::cluster {

namespace {

bool g_started = false;
int g_rank = 0, g_size = 1, g_local_rank = 0, g_local_size = 1;
bool g_agreed = false;  // every rank knows of the failure (agree)

// kStop: a signal number, from a signalled worker to rank 0 (its report) and from rank 0 to every
// worker (stop now); a worker sends rank 0 one kStop at most, its report or its answer.
enum Tag : int { kRequest = 1, kAssign = 2, kResult = 3, kData = 4, kFail = 5, kStop = 7 };

struct ResultHeader {
  long long shot, kind, index, count;
};

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(std::string("MPI ") + what + " failed on rank " + std::to_string(g_rank) + ": " +
                std::string(msg, static_cast<std::size_t>(len)));
  }
}

// A worker: receives rank 0's next message of tag `tag` into `value`; rank 0's stop (kStop)
// instead is answered and throws QuietExit{128 + signal}.
void recv_from_rank0(void* value, MPI_Datatype type, int tag) {
  MPI_Status st;
  check(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "MPI_Probe");
  if (st.MPI_TAG == kStop) {
    int signal = 0;
    check(MPI_Recv(&signal, 1, MPI_INT, 0, kStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (stop)");
    check(MPI_Send(&signal, 1, MPI_INT, 0, kStop, MPI_COMM_WORLD), "MPI_Send (stop)");
    g_agreed = true;
    throw QuietExit{128 + signal};
  }
  check(MPI_Recv(value, 1, type, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
}

}  // namespace

void check_mpi(int rc, const char* what) {
  check(rc, what);
}

void send_floats(const float* data, long long count, int to, int tag) {
  for (long long o = 0; o < count; o += kPieceFloats)
    check_mpi(
        MPI_Send(data + o, static_cast<int>(std::min(kPieceFloats, count - o)), MPI_FLOAT, to, tag, MPI_COMM_WORLD),
        "MPI_Send");
}

void recv_floats(float* data, long long count, int from, int tag) {
  for (long long o = 0; o < count; o += kPieceFloats)
    check(MPI_Recv(data + o, static_cast<int>(std::min(kPieceFloats, count - o)), MPI_FLOAT, from, tag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
}

void init(int* argc, char*** argv) {
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
  if (!launched) return;
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  MPI_Comm_rank(node, &g_local_rank);
  MPI_Comm_size(node, &g_local_size);
  MPI_Comm_free(&node);
}

void finalize() {
  if (g_started) MPI_Finalize();
  g_started = false;
}

bool failure_agreed() {
  return g_agreed;
}
bool started() {
  return g_started;
}
int rank() {
  return g_rank;
}
int size() {
  return g_size;
}
int local_size() {
  return g_local_size;
}

int local_rank() {
  return g_local_rank;
}

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

void abort_job(int code) {
  if (g_started && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

void settle_before_commit() {
  if (!g_started || g_size == 1 || g_rank != 0 || !io::continued) return;
  double delay = 1.0;  // s, Open MPI's default odls_base_sigkill_timeout
  if (const char* v = std::getenv("OMPI_MCA_odls_base_sigkill_timeout")) delay = std::max(0.0, std::atof(v));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(delay + 0.5);
  while (!io::interrupt_signal && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

int gpu_for_rank(int configured, int gpu_count) {
  if (gpu_count <= 0) return configured;
  return (configured + g_local_rank) % gpu_count;
}

std::vector<std::string> gather_strings(const std::string& mine) {
  if (!g_started || g_size == 1) return {mine};
  constexpr int kLen = 512;
  std::vector<char> out(kLen, '\0');
  std::memcpy(out.data(), mine.data(), std::min<std::size_t>(mine.size(), kLen - 1));
  std::vector<char> all(g_rank == 0 ? std::size_t(kLen) * g_size : 0);
  check(MPI_Gather(out.data(), kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Gather");
  if (g_rank != 0) return {mine};
  std::vector<std::string> r;
  for (int i = 0; i < g_size; ++i) r.emplace_back(all.data() + std::size_t(i) * kLen);
  return r;
}

void agree(const std::string& error) {
  if (!g_started || g_size == 1) {
    if (!error.empty()) throw Error(error);
    return;
  }
  const std::vector<std::string> all = gather_strings(error);
  int failed = -1;
  if (g_rank == 0)
    for (int i = 0; i < g_size && failed < 0; ++i)
      if (!all[static_cast<std::size_t>(i)].empty()) failed = i;
  check(MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (failed < 0) return;
  g_agreed = true;
  if (g_rank != 0) throw QuietExit{};
  throw Error(failed == 0 ? all[0] : "rank " + std::to_string(failed) + ": " + all[static_cast<std::size_t>(failed)]);
}

void mark_agreed() {
  g_agreed = true;
}

void inject_test_failure(long long shot) {
  const Hooks& h = hooks();
  if (h.fail_rank < 0 && h.fail_shot < 0) return;
  if (h.fail_rank >= 0 && h.fail_rank != g_rank) return;
  if (h.fail_shot >= 0 && h.fail_shot != shot) return;
  throw Error("SEISRTM_TEST_FAIL: a failure injected by the test suite");
}

void inject_test_failure_on_stop() {
  if (hooks().fail_on_stop_rank >= 0 && hooks().fail_on_stop_rank == g_rank)
    throw Error("SEISRTM_TEST_FAIL: a failure injected by the test suite as rank 0's stop came");
}

void delay_final_result_for_test(long long shot) {
  const double delay = hooks().delay_final_result;
  if (delay < 0) return;
  std::fprintf(stderr, "SEISRTM_TEST_DELAY_FINAL_RESULT: rank %d holds the last result of shot %lld for %g s\n", g_rank,
               shot + 1, delay);
  std::this_thread::sleep_for(std::chrono::duration<double>(delay));
}

void broadcast_from_rank0(std::vector<long long>& values) {
  if (!g_started || g_size == 1) return;
  long long n = static_cast<long long>(values.size());
  check(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast (count)");
  values.resize(static_cast<std::size_t>(n));
  if (n > 0) check(MPI_Bcast(values.data(), static_cast<int>(n), MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
}

ShotFarm::ShotFarm(long long shots)
    : shots_(shots), told_none_(static_cast<std::size_t>(g_size), 0), due_(static_cast<std::size_t>(g_size), 0) {}

void ShotFarm::reply(int source) {
  long long shot = -1;
  if (next_ < shots_) {
    shot = next_++;
    ++outstanding_;
    ++due_[static_cast<std::size_t>(source)];
  } else {
    ++stopped_;
    told_none_[static_cast<std::size_t>(source)] = 1;
  }
  check(MPI_Send(&shot, 1, MPI_LONG_LONG, source, kAssign, MPI_COMM_WORLD), "MPI_Send (shot)");
}

long long ShotFarm::next() {
  if (coordinator()) return next_ < shots_ ? next_++ : -1;
  ask();
  long long shot = -1;
  recv_from_rank0(&shot, MPI_LONG_LONG, kAssign);
  asked_ = false;
  return shot;
}

void ShotFarm::ask() {
  if (coordinator() || asked_) return;
  int nothing = 0;
  check(MPI_Send(&nothing, 1, MPI_INT, 0, kRequest, MPI_COMM_WORLD), "MPI_Send (request)");
  asked_ = true;
}

bool ShotFarm::handle_one(int source, int tag, const Sink& sink) {
  if (tag == kRequest) {
    int nothing = 0;
    check(MPI_Recv(&nothing, 1, MPI_INT, source, kRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (request)");
    reply(source);
    return true;
  }
  if (tag == kResult) {
    ResultHeader h{};
    check(MPI_Recv(&h, 4, MPI_LONG_LONG, source, kResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (result)");
    std::vector<float> data(static_cast<std::size_t>(h.count));
    recv_floats(data.data(), h.count, source, kData);
    const auto kind = static_cast<ResultKind>(h.kind);
    sink(source, h.shot, kind, h.index, data);
    if (kind == ResultKind::traces || kind == ResultKind::illumination) {
      --outstanding_;
      --due_[static_cast<std::size_t>(source)];
      ++done_by_others_;
    }
    return true;
  }
  if (tag == kStop) {  // a worker was signalled: every rank stops at rank 0's next check
    int signal = 0;
    check(MPI_Recv(&signal, 1, MPI_INT, source, kStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (stop)");
    if (!reported_signal_) reported_signal_ = signal;
    told_none_[static_cast<std::size_t>(source)] = 2;  // answered: rank 0's stop needs no answer from it
    return true;
  }
  if (tag == kFail) {
    MPI_Status st;
    check(MPI_Probe(source, kFail, MPI_COMM_WORLD, &st), "MPI_Probe (failure)");
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::vector<char> msg(static_cast<std::size_t>(n) + 1, '\0');
    check(MPI_Recv(msg.data(), n, MPI_CHAR, source, kFail, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (failure)");
    throw RankFailed("rank " + std::to_string(source) + " failed on " + std::string(msg.data()));
  }
  throw Error("MPI: rank 0 got a message with unknown tag " + std::to_string(tag) + " from rank " +
              std::to_string(source));
}

void ShotFarm::serve(const Sink& sink) {
  if (!coordinator() || g_size == 1) return;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
    if (!flag) return;
    handle_one(st.MPI_SOURCE, st.MPI_TAG, sink);
  }
}

void ShotFarm::drain(const Sink& sink, const std::function<void()>& idle) {
  if (!coordinator() || g_size == 1) return;
  while (outstanding_ > 0 || stopped_ < g_size - 1) {
    int flag = 0;
    MPI_Status st;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
    if (flag) {
      handle_one(st.MPI_SOURCE, st.MPI_TAG, sink);
    } else {
      idle();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

void ShotFarm::send(long long shot, ResultKind kind, long long index, const float* data, std::size_t count) {
  if (kind == ResultKind::traces || kind == ResultKind::illumination) delay_final_result_for_test(shot);
  const ResultHeader h{shot, static_cast<long long>(kind), index, static_cast<long long>(count)};
  check(MPI_Send(&h, 4, MPI_LONG_LONG, 0, kResult, MPI_COMM_WORLD), "MPI_Send (result)");
  send_floats(data, static_cast<long long>(count), 0, kData);
}

void ShotFarm::fail(const std::string& shot, const std::string& what) {
  const std::string msg = shot + ": " + what;
  MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, 0, kFail, MPI_COMM_WORLD);
  // Rank 0 removes its temporaries and ends the job; nothing is ever sent here.
  int nothing = 0;
  MPI_Recv(&nothing, 1, MPI_INT, 0, kFail, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  abort_job(1);
}

void ShotFarm::check_interrupt(const std::string& where, const std::string& directory) {
  if (!g_started || g_size == 1) return io::check_interrupt(where, directory);
  if (!coordinator()) {
    int flag = 0;
    check(MPI_Iprobe(0, kStop, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe (stop)");
    if (flag) {
      inject_test_failure_on_stop();
      stop_worker(false);
    }
    if (const int signal = io::interrupt_signal) {
      reported_signal_ = signal;
      check(MPI_Send(&reported_signal_, 1, MPI_INT, 0, kStop, MPI_COMM_WORLD), "MPI_Send (stop)");
      stop_worker(true);
    }
    return;
  }
  // Rank 0: its own signal first, else a worker's report (taken here or by serve and drain).
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(MPI_ANY_SOURCE, kStop, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe (stop)");
  if (flag) handle_one(st.MPI_SOURCE, kStop, {});
  if (const int signal = io::interrupt_signal ? int(io::interrupt_signal) : reported_signal_)
    stop_every_rank(signal, where, directory);
}

void ShotFarm::stop_every_rank(int signal, const std::string& where, const std::string& directory) {
  // Every worker is told, those told that no shot is left too (they wait in MPI_Finalize, which
  // does not return before rank 0's, and take the message there). These small messages go out at once (eager).
  for (int r = 1; r < g_size; ++r) check(MPI_Send(&signal, 1, MPI_INT, r, kStop, MPI_COMM_WORLD), "MPI_Send (stop)");
  // Each worker still in the farm answers at its next check, or in next(); until then what it
  // sends is taken and dropped, so that none blocks in the send of a large result. A worker told
  // that no shot is left may still owe its last shot's results (it asks for the next shot before
  // its current one ends): it is waited for until it has answered or sent them, for it may be
  // past its last check and about to send them, which no receive would match once rank 0 ended.
  const auto state = [&](int r) { return told_none_[static_cast<std::size_t>(r)]; };
  const auto settled = [&](int r) {
    return state(r) == 2 || (state(r) == 1 && due_[static_cast<std::size_t>(r)] == 0);
  };
  std::string failure;  // a worker's failure, reported instead of its answer
  for (;;) {
    bool waiting = false;
    for (int r = 1; r < g_size; ++r) waiting = waiting || !settled(r);
    if (!waiting) break;
    MPI_Status st;
    check(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "MPI_Probe (stopping)");
    if (st.MPI_TAG == kResult) {
      ResultHeader h{};
      check(MPI_Recv(&h, 4, MPI_LONG_LONG, st.MPI_SOURCE, kResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Recv (result)");
      std::vector<float> data(static_cast<std::size_t>(h.count));
      recv_floats(data.data(), h.count, st.MPI_SOURCE, kData);
      const auto kind = static_cast<ResultKind>(h.kind);
      if (kind == ResultKind::traces || kind == ResultKind::illumination)
        --due_[static_cast<std::size_t>(st.MPI_SOURCE)];
      continue;
    }
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    std::vector<char> dropped(static_cast<std::size_t>(count) + 1, '\0');
    check(MPI_Recv(dropped.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv (stopping)");
    if (st.MPI_TAG == kStop) told_none_[static_cast<std::size_t>(st.MPI_SOURCE)] = 2;
    if (st.MPI_TAG == kFail) {
      // That worker waits in fail() for rank 0 to end the job, and never answers the stop: the
      // job ends as on a failure (main's MPI_Abort), the failure said in rank 0's one message.
      failure = "rank " + std::to_string(st.MPI_SOURCE) + " failed on " + std::string(dropped.data());
      break;
    }
  }
  // A worker told that no shot is left may be in one of migrate's collectives after the farm
  // (agree before an own stack's sum), which no message ends: then main ends the job as on a
  // failure (MPI_Abort).
  bool all_stopped = failure.empty();
  for (int r = 1; r < g_size; ++r) all_stopped = all_stopped && (workers_end_when_done_ || state(r) == 2);
  if (all_stopped) g_agreed = true;
  throw io::Interrupted(signal, failure.empty() ? where : where + " (as the job stopped, " + failure + ")", directory);
}

void ShotFarm::stop_worker(bool wait) {
  // Rank 0's stop: the next kStop from it; its replies to an earlier ask before that are dropped.
  int signal = 0;
  for (;;) {
    MPI_Status st;
    check(MPI_Probe(0, wait ? MPI_ANY_TAG : kStop, MPI_COMM_WORLD, &st), "MPI_Probe (stop)");
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    std::vector<char> msg(static_cast<std::size_t>(std::max(count, 1)));
    check(MPI_Recv(msg.data(), count, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    if (st.MPI_TAG != kStop) continue;
    std::memcpy(&signal, msg.data(), sizeof signal);
    break;
  }
  if (!reported_signal_)  // the answer rank 0 waits for
    check(MPI_Send(&signal, 1, MPI_INT, 0, kStop, MPI_COMM_WORLD), "MPI_Send (stop)");
  g_agreed = true;
  throw QuietExit{128 + signal};
}

}  // namespace seisrtm::cluster
