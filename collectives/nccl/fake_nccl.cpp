#include "collectives/nccl/fake_nccl.hpp"

#include "base/config.hpp"
#include "collectives/host/host_collectives.hpp"
#include "mpi/helpers.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <climits>
#include <vector>

#if !defined(STRATA_HAVE_CUDA) && !defined(STRATA_HAVE_HIP)
#include "portability/gpu/fake_device.hpp"
#define STRATA_FAKE_NCCL_BUILT 1
#else
#define STRATA_FAKE_NCCL_BUILT 0
#endif

namespace strata::coll::fake_nccl {

using mpi::real;

namespace {

config::BoolParam g_fake_nccl{"STRATA_FAKE_NCCL", true,
                              "Tests, CPU builds only: with STRATA_FAKE_DEVICE, a stand-in NCCL runs the device "
                              "collectives (the library's collectives on the stand-in's device memory), so that the "
                              "NCCL route runs without a GPU; 0: no NCCL"};

// The tag of the stand-in's point-to-point messages, on its own communicator.
constexpr int kP2pTag = 7;

bool in_device_memory(const void* p) {
  const ::strata::device::Pointer w = gpu::classify(p);
  return w.kind == ::strata::device::MemoryKind::device;
}

// The host view of a device pointer; MPI_IN_PLACE and null stay.
void* view(const void* p) {
#if STRATA_FAKE_NCCL_BUILT
  if (p == nullptr || p == MPI_IN_PLACE) return const_cast<void*>(p);
  return gpu::fake::host_view(p);
#else
  return const_cast<void*>(p);
#endif
}

// NCCL takes device memory only.
Status device_only(std::initializer_list<const void*> buffers) {
  for (const void* b : buffers) {
    if (b != nullptr && b != MPI_IN_PLACE && !in_device_memory(b)) return Status::invalid_argument;
  }
  return Status::ok;
}

// The library where it reduces the type, else the host ring (float16, bfloat16).
Algorithm algorithm_for(DataType type) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  return host::mpi_type_of(type, &t) ? Algorithm::library : Algorithm::ring;
}

host::Hierarchy flat(const Comm& c) {
  host::Hierarchy h;
  h.comm = c.comm;
  return h;
}

}  // namespace

bool enabled() noexcept {
#if STRATA_FAKE_NCCL_BUILT
  return gpu::fake::enabled() && g_fake_nccl.get();
#else
  return false;
#endif
}

Status ready(Comm& c, MPI_Comm parent) noexcept {
  if (c.comm != MPI_COMM_NULL) return Status::ok;
  return real().MPI_Comm_dup(parent, &c.comm) == MPI_SUCCESS ? Status::ok : Status::mpi_error;
}

void release(Comm& c) noexcept {
  if (c.comm != MPI_COMM_NULL && !mpi::finalized()) real().MPI_Comm_free(&c.comm);
  c.comm = MPI_COMM_NULL;
}

Status allreduce(Comm& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op) noexcept {
  STRATA_TRY(device_only({send, recv}));
  return host::allreduce(view(send), view(recv), count, type, op, algorithm_for(type), flat(c));
}

Status reduce_scatter(Comm& c, const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op) noexcept {
  STRATA_TRY(device_only({send, recv}));
  return host::reduce_scatter(view(send), view(recv), recv_count, type, op, algorithm_for(type), flat(c));
}

Status allgather(Comm& c, const void* send, void* recv, size_t send_count, DataType type) noexcept {
  STRATA_TRY(device_only({send, recv}));
  return host::allgather(view(send), view(recv), send_count, type, Algorithm::library, flat(c));
}

Status broadcast(Comm& c, void* buffer, size_t count, DataType type, int root) noexcept {
  STRATA_TRY(device_only({buffer}));
  return host::broadcast(view(buffer), count, type, root, Algorithm::library, flat(c));
}

Status reduce(Comm& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root) noexcept {
  int rank = 0;
  real().MPI_Comm_rank(c.comm, &rank);
  STRATA_TRY(device_only({send, rank == root ? recv : nullptr}));
  return host::reduce(view(send), rank == root ? view(recv) : nullptr, count, type, op, root, algorithm_for(type),
                      flat(c));
}

Status p2p_group(const P2p* ops, size_t count) noexcept {
  for (size_t i = 0; i < count; ++i) {
    if (ops[i].comm == nullptr || ops[i].bytes > static_cast<size_t>(INT_MAX)) return Status::invalid_argument;
    STRATA_TRY(device_only({ops[i].buffer}));
  }
  std::vector<MPI_Request> requests(count, MPI_REQUEST_NULL);
  int rc = MPI_SUCCESS;
  for (size_t i = 0; i < count && rc == MPI_SUCCESS; ++i) {
    const P2p& op = ops[i];
    const int n = static_cast<int>(op.bytes);
    rc = op.send ? real().MPI_Isend(view(op.buffer), n, MPI_BYTE, op.peer, kP2pTag, op.comm->comm, &requests[i])
                 : real().MPI_Irecv(view(op.buffer), n, MPI_BYTE, op.peer, kP2pTag, op.comm->comm, &requests[i]);
  }
  // Whatever was posted completes before the buffers go back to the caller.
  const int waited = real().MPI_Waitall(static_cast<int>(count), requests.data(), MPI_STATUSES_IGNORE);
  return rc == MPI_SUCCESS && waited == MPI_SUCCESS ? Status::ok : Status::mpi_error;
}

}  // namespace strata::coll::fake_nccl
