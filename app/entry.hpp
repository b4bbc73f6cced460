#pragma once
// The program's entry (app/entry.cpp): main's body, in the library so that a test executable
// (tests/seisrtm_hooked.cpp) runs the same program after installing its seams (solver/hooks.hpp).

namespace seisrtm::app {

// Starts MPI when launched by mpirun, runs the command of argv and returns the exit code.
int run_main(int argc, char** argv);

}  // namespace seisrtm::app
