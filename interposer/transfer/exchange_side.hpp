// One side (what a rank sends, or what it receives) of an exchange on the
// NCCL route (collectives/exchange.hpp): a contiguous block per peer, made
// from an MPI call's buffer, counts, displacements and datatype. A block of
// a contiguous datatype is the user's memory itself; any other is packed
// into (or unpacked from, flush()) a host buffer by ContiguousView, which
// the exchange stages through device memory.
#pragma once

#include "collectives/exchange.hpp"
#include "interposer/transfer/contiguous_view.hpp"
#include "portability/mover/staging.hpp"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace strata::interposer {

class ExchangeSide {
 public:
  // `peers` empty blocks.
  explicit ExchangeSide(int peers) : blocks_(static_cast<size_t>(peers)) {}

  // Block p: `count` elements of `type` at `buf` + p * count * extent, for
  // every peer (MPI_Alltoall, and the root's side of MPI_Gather and
  // MPI_Scatter). `read`: the call reads them (a send side).
  int every_peer(void* buf, int64_t count, MPI_Datatype type, bool read);
  // Block p: counts[p] elements at `buf` + displs[p] * extent (the v forms).
  int every_peer_v(void* buf, const int counts[], const int displs[], MPI_Datatype type, bool read);
  // Only block p: `count` elements at `buf`.
  int one_peer(int p, void* buf, int64_t count, MPI_Datatype type, bool read);
  // Every block: the same `count` elements at `buf` (MPI_Allgatherv's send).
  int same_for_every_peer(void* buf, int64_t count, MPI_Datatype type);
  // Every block but `skip`'s: `block` (MPI_Allgatherv's send under
  // MPI_IN_PLACE, my block of the receive side).
  void same_block_for_every_peer(const coll::Block& block, int skip);
  // Every block p: a copy of block p of `other` taken now (MPI_IN_PLACE of
  // the all-to-alls, whose receives overwrite what is sent).
  int copy_of(const ExchangeSide& other);
  // Block p moves nothing and is not written back (a root's own block
  // under MPI_IN_PLACE); what it points to stays valid.
  void clear(int p);

  const coll::Block* blocks() const { return blocks_.data(); }
  // Is every block with bytes the user's own memory on the current device
  // (nothing packed or copied): this rank's vote for the NCCL route.
  bool on_current_device() const;
  // A receive side after the exchange: unpacks the packed blocks into the
  // user's buffer.
  int flush();

 private:
  int open_block(int p, void* at, int64_t count, MPI_Datatype type, bool read);

  std::vector<coll::Block> blocks_;
  struct View {
    int peer;
    bool write_back;
    ContiguousView view;
  };
  std::vector<View> views_;  // the packed blocks
  std::vector<mover::Staging> copies_;
  bool all_direct_ = true;
};

}  // namespace strata::interposer
