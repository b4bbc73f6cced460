#pragma once
// Several processes, one per GPU, started by mpirun (DESIGN.md section 9). MPI is initialised
// only when the process was started by an MPI launcher (its environment says so); otherwise the
// program is one rank of one and never calls MPI, so the same binary runs on its own.
//
// Shot-parallel forward modelling (ShotFarm): rank 0 owns the output set and the file, computes
// shots itself and, between chunks of time steps, hands the next shot to whichever rank asks
// and writes what the other ranks send back (snapshots, traces). A rank that fails reports its
// shot and message to rank 0, which removes the temporaries and ends the job (MPI_Abort).
// A signal (SIGINT, SIGTERM, SIGHUP) on any rank stops every rank at its next check instead
// (ShotFarm::check_interrupt): rank 0 says it once, commits nothing, and every rank exits 128 + signal.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace seisrtm::cluster {

// Another rank's failure, as rank 0 learns it (its message names that rank and its shot).
struct RankFailed : Error {
  using Error::Error;
};
// Thrown on the ranks other than 0 when rank 0 reports a failure they share: main exits with
// `code` without a message of its own (rank 0's code: 1, or 128 + signal for an interrupt, so
// that mpirun reports the same whichever rank ends first).
struct QuietExit {
  int code = 1;
};
// Every rank reached the same verdict on its own (a refused command): no MPI_Abort needed.
void mark_agreed();

// MPI_Init when launched by mpirun (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE set); no-op
// otherwise. finalize() ends it (no-op when not started).
void init(int* argc, char*** argv);
void finalize();
bool started();
int rank();        // 0 without MPI
int size();        // 1 without MPI
int local_rank();  // the rank among those on this node (0 without MPI)
int local_size();  // ranks on this node (1 without MPI)
std::string host();
// Throws Error naming the MPI call `what`, this rank and MPI's reason when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* what);
// MPI counts are int: larger messages travel in pieces of at most this many floats (1 GiB).
inline constexpr long long kPieceFloats = 1LL << 28;
// Point-to-point floats in pieces of at most kPieceFloats, matched piece by piece by the other
// side's call.
void send_floats(const float* data, long long count, int to, int tag);
void recv_floats(float* data, long long count, int from, int tag);
// Ends every rank of the job with `code` (after this rank's own cleanup). Plain exit without MPI.
[[noreturn]] void abort_job(int code);
// Rank 0 of a job of several, before the last signal check of a commit: when a SIGCONT came
// (io::continued: mpirun was asked to end the job, or the job was resumed), waits for the
// SIGTERM mpirun sends one odls_base_sigkill_timeout later (OMPI_MCA_odls_base_sigkill_timeout,
// default 1 s) plus 0.5 s for its delivery, so that a job stopped near its end commits nothing.
// A resumed job commits that much later. Otherwise, and in a lone process: returns at once.
void settle_before_commit();
// The GPU of this rank: (configured + node-local rank) % GPUs on the node.
int gpu_for_rank(int configured, int gpu_count);
// Rank 0 receives one string from every rank, in rank order (each rank gets back its own
// string alone when it is not rank 0).
std::vector<std::string> gather_strings(const std::string& mine);
// Collective: every rank passes its setup error ("" when it has none). When any rank has one,
// rank 0 throws Error with the first (named by rank unless it is rank 0's own) and the others
// throw QuietExit. Without MPI: throws Error(error) when there is one.
void agree(const std::string& error);
bool failure_agreed();  // agree() found a failure: every rank ends on its own, no MPI_Abort
// Runs `setup` on every rank, then agree() on the Error any of them threw (one process: the
// Error as thrown).
template <class Setup>
void setup_on_every_rank(Setup&& setup) {
  std::string failure;
  try {
    setup();
  } catch (const Error& e) {
    if (size() == 1) throw;
    failure = e.what();
  }
  agree(failure);
}

// Collective: every rank receives rank 0's `values` (one process: unchanged).
void broadcast_from_rank0(std::vector<long long>& values);

// Fault injection the test suite sets (solver/hooks.hpp; production: none of these acts).
// Throws at the start of a shot: Hooks::fail_shot, whichever rank computes it, and/or every
// shot of Hooks::fail_rank.
void inject_test_failure(long long shot);
// Hooks::fail_on_stop_rank fails at the check that finds rank 0's stop, instead of answering it
// (a failure in the chunk of steps during which rank 0 began stopping).
void inject_test_failure_on_stop();
// Hooks::delay_final_result: a worker, past its shot's last check, waits that long before it
// sends the shot's last result (traces or illumination), and says so on stderr once it begins
// waiting: a stop from rank 0 then comes after the last check of the worker's last shot.
void delay_final_result_for_test(long long shot);

// The work queue of a shot-parallel run. Results travel as (shot, kind, index, floats).
// A shot is complete with its last result: traces (run), illumination (migrate, after image and
// the image gathers where the migration forms them).
enum class ResultKind : int { snapshot = 1, traces = 2, image = 3, illumination = 4, gathers = 5 };

class ShotFarm {
 public:
  // (data may be moved from.)
  using Sink =
      std::function<void(int from_rank, long long shot, ResultKind kind, long long index, std::vector<float>& data)>;
  explicit ShotFarm(long long shots);
  bool coordinator() const { return rank() == 0; }
  // The next shot this rank computes; -1 when there is none left. Rank 0 takes them from the
  // counter it hands out; the others ask rank 0 (or collect the answer to an earlier ask()).
  long long next();
  // Workers: ask for the next shot while the current one is still running, so that the answer
  // is there when it ends (called once the shot is nearly done).
  void ask();
  // Rank 0: answers pending requests and takes pending results (non-blocking).
  void serve(const Sink& sink);
  // Rank 0, once its own shots are done: serves until every handed-out shot's traces are in and
  // every other rank was told there is no shot left.
  // `idle` runs while it waits (a check for SIGINT/SIGTERM: rank 0 never blocks in MPI there).
  void drain(const Sink& sink, const std::function<void()>& idle);
  // Workers: results for rank 0.
  void send(long long shot, ResultKind kind, long long index, const float* data, std::size_t count);
  // Workers: reports a failed shot to rank 0, then waits for rank 0 to end the job. `shot` names
  // it as the survey does ("shot s+1/N"), not by its position in the farm.
  [[noreturn]] void fail(const std::string& shot, const std::string& what);
  // The signal check of a shot-parallel run, where a lone run calls io::check_interrupt (one
  // process: just that). A worker that was signalled reports it to rank 0 and waits for its
  // word; rank 0, signalled or told, tells every worker to stop, takes what they still send
  // until each has answered or, told that no shot is left, has sent its last shot's last result,
  // and throws io::Interrupted; a worker told to stop throws QuietExit{128 + signal}. Every rank
  // thus stops within one chunk of steps of its own, the set is not committed, and no MPI_Abort
  // is needed (mark_agreed), unless a worker may be in a collective after the farm (see
  // workers_end_when_done) or reports a failure instead of answering: then rank 0 ends the job
  // as on a failure, the failure named in its message.
  void check_interrupt(const std::string& where, const std::string& directory);
  // A worker told that no shot is left returns and ends (run), instead of joining rank 0 in
  // collectives after the farm (migrate's sums, the default): a stop then needs no MPI_Abort.
  void workers_end_when_done() { workers_end_when_done_ = true; }
  long long shots_done_by_others() const { return done_by_others_; }

 private:
  bool handle_one(int source, int tag, const Sink& sink);
  void reply(int source);  // the next shot, or -1
  [[noreturn]] void stop_every_rank(int signal, const std::string& where, const std::string& directory);
  // A worker: takes rank 0's stop (waiting for it when `wait`), answers it unless this rank
  // reported the signal itself, throws QuietExit{128 + signal}.
  [[noreturn]] void stop_worker(bool wait);
  long long shots_ = 0, next_ = 0, outstanding_ = 0, done_by_others_ = 0;
  int stopped_ = 0;  // ranks told that no shot is left
  bool asked_ = false;
  std::vector<char> told_none_;  // rank 0, per rank: 0 in the farm, 1 told that no shot is left, 2 answered a stop
  std::vector<int> due_;         // rank 0, per rank: shots handed out whose last result has not come back
  int reported_signal_ = 0;      // rank 0: the signal a worker reported; a worker: the one it reported
  bool workers_end_when_done_ = false;
};

}  // namespace seisrtm::cluster
