#include "solver/nccl_halo.hpp"

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>
#include <stdlib.h>

#include "solver/cluster.hpp"

namespace seisrtm {

struct DeviceHalo::Impl {
  Slab slab;
  void* lib = nullptr;
  ncclComm_t comm = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;

  void check(ncclResult_t r, const char* what) const {
    if (r != ncclSuccess)
      throw Error(std::string("NCCL ") + what + " failed on rank " + std::to_string(slab.rank) + ": " +
                  (error_string ? error_string(r) : "error " + std::to_string(int(r))));
  }
};

namespace {

template <class F>
void bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) throw Error(std::string("libnccl.so.2 has no ") + name + " (NCCL 2.7 or later is needed)");
}

}  // namespace

DeviceHalo::DeviceHalo(const Slab& slab) : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.slab = slab;
  d.lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!d.lib)
    throw Error(std::string("solver.decomposition z on GPUs exchanges halos with NCCL, which could not be loaded (") +
                dlerror() + "); install NCCL 2 (libnccl2) or run with solver.backend: cpu");
  bind(d.lib, "ncclGetUniqueId", d.get_unique_id);
  bind(d.lib, "ncclCommInitRank", d.comm_init_rank);
  bind(d.lib, "ncclCommDestroy", d.comm_destroy);
  bind(d.lib, "ncclGetErrorString", d.error_string);
  bind(d.lib, "ncclSend", d.send);
  bind(d.lib, "ncclRecv", d.recv);
  bind(d.lib, "ncclGroupStart", d.group_start);
  bind(d.lib, "ncclGroupEnd", d.group_end);
}

DeviceHalo::~DeviceHalo() {
  if (impl_->comm) impl_->comm_destroy(impl_->comm);
  // The library stays loaded: NCCL's own threads may outlive the communicator.
}

void DeviceHalo::connect() {
  Impl& d = *impl_;
  if (d.comm || d.slab.ranks == 1) return;
  // At most 4 CTAs a NCCL kernel unless the user says otherwise: its CTAs take SMs from the
  // interior stencil while they wait for the peer, and fewer of them bring the weak scaling
  // closer to ideal than NCCL's default (docs/BENCHMARKS.md, "Several GPUs").
  setenv("NCCL_MAX_CTAS", "4", 0);
  ncclUniqueId id{};
  if (cluster::rank() == 0) d.check(d.get_unique_id(&id), "ncclGetUniqueId");
  cluster::check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast (the NCCL id)");
  d.check(d.comm_init_rank(&d.comm, d.slab.ranks, id, d.slab.rank), "ncclCommInitRank");
}

bool DeviceHalo::connected() const {
  return impl_->comm != nullptr;
}

void DeviceHalo::exchange(float* const* fields, int count, long long plane, cudaStream_t stream) {
  Impl& d = *impl_;
  const Slab& s = d.slab;
  if (!d.comm) return;
  const size_t n = static_cast<size_t>(s.halo * plane);
  const long long own_first = s.own_lo - s.lo, own_end = s.own_hi - s.lo;
  d.check(d.group_start(), "ncclGroupStart");
  for (int k = 0; k < count; ++k) {
    float* f = fields[k];
    if (s.up()) {
      d.check(d.recv(f, n, ncclFloat32, s.rank - 1, d.comm, stream), "ncclRecv");
      d.check(d.send(f + own_first * plane, n, ncclFloat32, s.rank - 1, d.comm, stream), "ncclSend");
    }
    if (s.down()) {
      d.check(d.recv(f + own_end * plane, n, ncclFloat32, s.rank + 1, d.comm, stream), "ncclRecv");
      d.check(d.send(f + (own_end - s.halo) * plane, n, ncclFloat32, s.rank + 1, d.comm, stream), "ncclSend");
    }
  }
  d.check(d.group_end(), "ncclGroupEnd");
}

}  // namespace seisrtm
