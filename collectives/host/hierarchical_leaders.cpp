// Leader-based hierarchical collectives: correct for any grouping, uneven
// ones included (5 ranks as nodes of 4 + 1), where the shard steps of
// hierarchical.cpp do not line up. Broadcast and reduce use them on uniform
// hierarchies too.
//
// The leader chain (strata/topology.hpp):
//   d_0 = levels[0].group          my group at the fastest level
//   d_k = levels[k-1].leaders      the first ranks of the level-(k-1) groups
//                                  of my level-k group; MPI_COMM_NULL unless
//                                  I am first in my level-(k-1) group
// The communicators are ordered by rank, so a group's first rank is rank 0
// of d_k and the first rank of the communicator (rank 0) is rank 0 at every
// level: it is the top of the tree.
//
//   allreduce       reduce to rank 0 of d_0, d_1, ..., d_{L-2}; allreduce in
//                   d_{L-1}; broadcast back down d_{L-2}, ..., d_0
//   reduce          reduce up to rank 0 through every level; then rank 0
//                   sends the result to the root if that is another rank
//   broadcast       a root other than 0 first sends to rank 0; then broadcast
//                   down d_{L-1}, ..., d_0
//   reduce_scatter  reduce to rank 0, which sends every rank its block
//   allgather       every rank sends its block to rank 0, then broadcast
// Each result is computed in one place and copied, so all ranks hold the
// same bits.
#include "collectives/host/internal.hpp"

#include "base/log.hpp"

#include <cstring>

namespace strata::coll::host::detail {
namespace {

constexpr size_t kMaxLevels = 8;

struct LeaderChain {
  int levels = 0;
  bool member[kMaxLevels] = {};
  Ctx ctx[kMaxLevels];
  Ctx all;  // h.comm
};

Status leader_chain(const Hierarchy& h, DataType type, ReduceOp op, LeaderChain* chain) noexcept {
  const size_t levels = h.levels.size();
  if (levels == 0 || levels > kMaxLevels) return Status::invalid_argument;
  chain->levels = static_cast<int>(levels);
  STRATA_TRY(make_ctx(h.comm, type, op, &chain->all));
  for (size_t k = 0; k < levels; ++k) {
    const MPI_Comm comm = k == 0 ? h.levels[0].group : h.levels[k - 1].leaders;
    const bool leader_below = k == 0 || (chain->member[k - 1] && chain->ctx[k - 1].rank == 0);
    chain->member[k] = comm != MPI_COMM_NULL;
    if (chain->member[k] != leader_below) {
      STRATA_LOG(error, kColl, "hierarchy level %zu: leaders communicator %s, but this rank %s first in its group", k,
                 chain->member[k] ? "present" : "missing", leader_below ? "is" : "is not");
      return Status::invalid_argument;
    }
    if (chain->member[k]) STRATA_TRY(make_ctx(comm, type, op, &chain->ctx[k]));
  }
  return Status::ok;
}

// Reduces `in` up the first `levels` levels of the chain to the first rank
// of each group: afterwards `acc` holds the partial of my subtree on every
// rank that stayed a root (rank 0 of the communicator: the whole reduction).
// acc is only written on those ranks. Returns in *reached the number of
// levels at which I was a root.
Status reduce_up(const void* in, void* acc, size_t n, const LeaderChain& chain, int levels, const Flat& red,
                 int* reached) noexcept {
  const void* src = in;
  int k = 0;
  for (; k < levels && chain.member[k]; ++k) {
    const bool root = chain.ctx[k].rank == 0;
    STRATA_TRY(red.reduce(src, root ? acc : nullptr, n, 0, chain.ctx[k]));
    if (!root) break;
    src = acc;
  }
  *reached = k;
  return Status::ok;
}

// Broadcasts buf from rank 0 down the first `levels` levels of the chain.
Status broadcast_down(void* buf, size_t n, const LeaderChain& chain, int levels, const Flat& move) noexcept {
  for (int k = levels - 1; k >= 0; --k) {
    if (chain.member[k]) STRATA_TRY(move.broadcast(buf, n, 0, chain.ctx[k]));
  }
  return Status::ok;
}

}  // namespace

Status leaders_allreduce(const void* in, void* out, size_t n, DataType type, ReduceOp op, const Hierarchy& h,
                         const Flat& inner) noexcept {
  LeaderChain chain;
  STRATA_TRY(leader_chain(h, type, op, &chain));
  const Flat& red = reducing(inner, type);
  const int top = chain.levels - 1;
  int reached = 0;
  STRATA_TRY(reduce_up(in, out, n, chain, top, red, &reached));
  if (reached == top && chain.member[top]) {
    STRATA_TRY(red.allreduce(top == 0 ? in : out, out, n, chain.ctx[top]));
  }
  return broadcast_down(out, n, chain, top, inner);
}

Status hier_reduce(const void* in, void* out, size_t n, DataType type, ReduceOp op, int root, const Hierarchy& h,
                   const Flat& inner) noexcept {
  LeaderChain chain;
  STRATA_TRY(leader_chain(h, type, op, &chain));
  const int me = chain.all.rank;
  // The root's partials go straight to its buffer; other group leaders
  // (rank 0 of d_0) keep theirs in scratch.
  Scratch partial;
  void* acc = out;
  if (me != root && chain.ctx[0].rank == 0) {
    STRATA_TRY(partial.allocate(chain.all.bytes(n)));
    acc = partial.data();
  }
  int reached = 0;
  STRATA_TRY(reduce_up(in, acc, n, chain, chain.levels, reducing(inner, type), &reached));
  if (root == 0) return Status::ok;
  if (me == 0) return send(acc, chain.all.bytes(n), root, chain.all);
  if (me == root) return recv(out, chain.all.bytes(n), 0, chain.all);
  return Status::ok;
}

Status hier_broadcast(void* buf, size_t n, DataType type, int root, const Hierarchy& h, const Flat& inner) noexcept {
  LeaderChain chain;
  STRATA_TRY(leader_chain(h, type, ReduceOp::sum, &chain));
  const int me = chain.all.rank;
  if (root != 0 && me == root) STRATA_TRY(send(buf, chain.all.bytes(n), 0, chain.all));
  if (root != 0 && me == 0) STRATA_TRY(recv(buf, chain.all.bytes(n), root, chain.all));
  return broadcast_down(buf, n, chain, chain.levels, inner);
}

Status leaders_reduce_scatter(const void* in, void* out, size_t recv_count, DataType type, ReduceOp op,
                              const Hierarchy& h, const Flat& inner) noexcept {
  LeaderChain chain;
  STRATA_TRY(leader_chain(h, type, op, &chain));
  const Ctx& all = chain.all;
  const size_t n = recv_count * static_cast<size_t>(all.size);
  const size_t block = all.bytes(recv_count);
  // Partials (the full reduction on rank 0) go to scratch on the group
  // leaders: in place, `out` is the start of the input, still being read.
  Scratch full;
  if (chain.ctx[0].rank == 0) STRATA_TRY(full.allocate(all.bytes(n)));
  int reached = 0;
  STRATA_TRY(reduce_up(in, full.data(), n, chain, chain.levels, reducing(inner, type), &reached));
  if (all.rank != 0) return recv(out, block, 0, all);
  for (int x = 1; x < all.size; ++x) STRATA_TRY(send(full.data() + block * static_cast<size_t>(x), block, x, all));
  std::memcpy(out, full.data(), block);
  return Status::ok;
}

Status leaders_allgather(const void* mine, void* out, size_t send_count, DataType type, const Hierarchy& h,
                         const Flat& inner) noexcept {
  LeaderChain chain;
  STRATA_TRY(leader_chain(h, type, ReduceOp::sum, &chain));
  const Ctx& all = chain.all;
  const size_t block = all.bytes(send_count);
  char* base = static_cast<char*>(out);
  if (all.rank != 0) {
    STRATA_TRY(send(mine, block, 0, all));
  } else {
    if (mine != base) std::memcpy(base, mine, block);
    for (int x = 1; x < all.size; ++x) STRATA_TRY(recv(base + block * static_cast<size_t>(x), block, x, all));
  }
  return broadcast_down(out, send_count * static_cast<size_t>(all.size), chain, chain.levels, inner);
}

}  // namespace strata::coll::host::detail
