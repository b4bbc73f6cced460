// seisrtm with the test suite's seams (solver/hooks.hpp) set from its environment, then the same
// program as the shipped binary (app::run_main). Under mpirun every rank reads its own
// environment (-x VAR=value), so one rank of a job can differ from the others:
//   SEISRTM_TEST_FAIL_SHOT=k          shot k (0-based) fails at its start, on whichever rank
//   SEISRTM_TEST_FAIL_RANK=r          every shot of rank r fails at its start (both: shot k on r)
//   SEISRTM_TEST_FAIL_ON_STOP_RANK=r  rank r fails at the check that finds rank 0's stop
//   SEISRTM_TEST_DELAY_FINAL_RESULT=s a worker holds each shot's last result s seconds
//   SEISRTM_CGROUP_ROOT=dir           a fake cgroup tree for the host-memory check
#include <cstdlib>
#include <string>

#include "app/entry.hpp"
#include "solver/hooks.hpp"

int main(int argc, char** argv) {
  seisrtm::Hooks h;
  if (const char* v = std::getenv("SEISRTM_TEST_FAIL_SHOT")) h.fail_shot = std::atoll(v);
  if (const char* v = std::getenv("SEISRTM_TEST_FAIL_RANK")) h.fail_rank = std::atoi(v);
  if (const char* v = std::getenv("SEISRTM_TEST_FAIL_ON_STOP_RANK")) h.fail_on_stop_rank = std::atoi(v);
  if (const char* v = std::getenv("SEISRTM_TEST_DELAY_FINAL_RESULT")) h.delay_final_result = std::atof(v);
  if (const char* v = std::getenv("SEISRTM_CGROUP_ROOT")) h.cgroup_root = v;
  seisrtm::set_hooks(h);
  return seisrtm::app::run_main(argc, argv);
}
