// seisrtm: 3D acoustic modelling and RTM on Hopper GPUs, with a CPU reference backend.
#include "app/entry.hpp"

int main(int argc, char** argv) {
  return seisrtm::app::run_main(argc, argv);
}
