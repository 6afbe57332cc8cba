// Exchanges of blocks between the ranks of a communicator on the NCCL
// route: the all-to-alls, gathers, scatters and allgatherv that NCCL has no
// collective for, run as one NCCL group of ncclSend / ncclRecv (a block to
// or from every peer, oneself included). decide_exchange (routing.hpp)
// says whether a call runs here; the interposer turns an MPI call's counts,
// displacements and datatypes into the blocks.
#pragma once

#include "collectives/routing.hpp"

#include <cstddef>

namespace strata::coll {

// What goes to or comes from one peer: `bytes` contiguous bytes at `data`
// (0: nothing).
struct Block {
  void* data = nullptr;
  size_t bytes = 0;
};

// Runs an exchange decided for the NCCL route: sends[p] to rank p and
// recvs[p] from rank p of the decision's communicator (one entry per rank
// in each). A block in host memory (a rank whose buffers changed kind
// between two agreements) is staged through device memory. Returns when
// the received blocks are in place.
Status run_exchange(const Decision& d, const Block* sends, const Block* recvs) noexcept;

}  // namespace strata::coll
