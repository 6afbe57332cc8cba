// A stand-in for NCCL in CPU builds with the device stand-in on
// (STRATA_FAKE_DEVICE, portability/gpu/fake_device.hpp; STRATA_FAKE_NCCL=0
// turns it off): flat device collectives done by the MPI library on the
// stand-in's host views of device memory, over a communicator of their own
// (a duplicate made, collectively, at the first call, as NCCL makes its
// communicator). It is there so that CI runs Strata's NCCL route: like
// NCCL it takes device memory only (a host pointer fails), and a rank that
// is not in it while another is hangs, exactly as with NCCL.
#pragma once

#include <strata/collectives.hpp>

#include <mpi.h>

#include <cstddef>

namespace strata::coll::fake_nccl {

// The stand-in is on (a CPU build, STRATA_FAKE_DEVICE > 0, STRATA_FAKE_NCCL).
bool enabled() noexcept;

struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;
};
// Collective over `parent` the first time.
Status ready(Comm& c, MPI_Comm parent) noexcept;
void release(Comm& c) noexcept;

// MPI semantics (MPI_IN_PLACE as MPI has it); device pointers only.
Status allreduce(Comm& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op) noexcept;
Status reduce_scatter(Comm& c, const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op) noexcept;
Status allgather(Comm& c, const void* send, void* recv, size_t send_count, DataType type) noexcept;
Status broadcast(Comm& c, void* buffer, size_t count, DataType type, int root) noexcept;
Status reduce(Comm& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root) noexcept;

// One send or receive of a group (ncclSend / ncclRecv of bytes).
struct P2p {
  Comm* comm = nullptr;
  bool send = true;
  void* buffer = nullptr;  // device memory
  size_t bytes = 0;
  int peer = 0;
};
// A group: every transfer posted, then all waited for (NCCL's group
// semantics: no order of posts deadlocks; a message to oneself works).
Status p2p_group(const P2p* ops, size_t count) noexcept;

}  // namespace strata::coll::fake_nccl
