// Hierarchical collectives on uniform hierarchies, by shards (Horovod / HAN /
// the Frontier 3-level scheme), and the choice between them and the
// leader-based forms (hierarchical_leaders.cpp).
//
// How the levels are used (strata/topology.hpp): the shard chain is
//   c_0 = levels[0].group          my group at the fastest level
//   c_k = levels[k-1].cross        the ranks of my level-k group that have my
//                                  position vector up to level k-1
// so j_k, my rank in c_k, is my position at step k, and the members of c_k
// hold the same shard when step k starts. The sizes multiply to the
// communicator's size. levels[L-1].cross and the leaders communicators are
// not used here.
//
//   allreduce       reduce-scatter in c_0, c_1, ..., c_{L-2} (each on the
//                   shard the previous left), allreduce in c_{L-1} on the last
//                   shard, all-gather back in c_{L-2}, ..., c_0
//   reduce_scatter  reduce-scatter in c_0, ..., c_{L-1}: the piece a rank ends
//                   with is at the mixed-radix offset (j_0, ..., j_{L-1}) of
//                   the vector, so the rank blocks are first permuted into
//                   that order (one all-gather of every rank's offset)
//   allgather       the reverse: all-gather in c_{L-1}, ..., c_0 in that
//                   order, then permuted back into rank order
//   broadcast, reduce, and every collective on uneven hierarchies: leader-based
#include "collectives/host/internal.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"

#include <cstring>

namespace strata::coll::host::detail {

using mpi::real;

namespace {

constexpr size_t kMaxLevels = 8;

struct Chain {
  int levels = 0;
  Ctx ctx[kMaxLevels];
};

Status shard_chain(const Hierarchy& h, DataType type, ReduceOp op, Chain* chain) noexcept {
  const size_t levels = h.levels.size();
  if (levels == 0 || levels > kMaxLevels) return Status::invalid_argument;
  chain->levels = static_cast<int>(levels);
  size_t product = 1;
  for (size_t k = 0; k < levels; ++k) {
    const MPI_Comm comm = k == 0 ? h.levels[0].group : h.levels[k - 1].cross;
    STRATA_TRY(make_ctx(comm, type, op, &chain->ctx[k]));
    product *= static_cast<size_t>(chain->ctx[k].size);
  }
  int size = 0;
  STRATA_MPI_TRY(real().MPI_Comm_size(h.comm, &size));
  if (product != static_cast<size_t>(size)) {
    STRATA_LOG(error, kColl, "hierarchy marked uniform, but its shard steps cover %zu ranks of %d", product, size);
    return Status::invalid_argument;
  }
  return Status::ok;
}

// order[x] = the mixed-radix position of rank x: where its block sits in the
// order the shard steps produce. Sets *identity when order[x] == x for all.
Status shard_order(const Hierarchy& h, const Chain& chain, Scratch* mem, int** order, bool* identity) noexcept {
  int mine = 0;
  for (int k = 0; k < chain.levels; ++k) mine = mine * chain.ctx[k].size + chain.ctx[k].rank;
  int size = 0;
  STRATA_MPI_TRY(real().MPI_Comm_size(h.comm, &size));
  STRATA_TRY(mem->allocate(sizeof(int) * static_cast<size_t>(size)));
  int* o = reinterpret_cast<int*>(mem->data());
  STRATA_MPI_TRY(real().MPI_Allgather(&mine, 1, MPI_INT, o, 1, MPI_INT, h.comm));
  *identity = true;
  for (int x = 0; x < size; ++x) *identity = *identity && o[x] == x;
  *order = o;
  return Status::ok;
}

Status shard_allreduce(const void* in, void* out, size_t n, const Chain& chain, const Flat& red,
                       const Flat& move) noexcept {
  const int top = chain.levels - 1;
  const size_t element = chain.ctx[0].element;
  Split splits[kMaxLevels];
  char* bases[kMaxLevels];
  const char* src = static_cast<const char*>(in);
  char* base = static_cast<char*>(out);
  size_t len = n;
  for (int k = 0; k < top; ++k) {
    const Ctx& c = chain.ctx[k];
    splits[k] = Split{len, c.size};
    bases[k] = base;
    char* mine = base + element * splits[k].displ(c.rank);
    STRATA_TRY(red.reduce_scatter(src, mine, splits[k], c));  // in place from level 1 on
    src = base = mine;
    len = splits[k].count(c.rank);
  }
  STRATA_TRY(red.allreduce(src, base, len, chain.ctx[top]));
  for (int k = top - 1; k >= 0; --k) STRATA_TRY(move.allgather(nullptr, bases[k], splits[k], chain.ctx[k]));
  return Status::ok;
}

Status shard_reduce_scatter(const void* in, void* out, size_t recv_count, const Hierarchy& h, const Chain& chain,
                            const Flat& red) noexcept {
  const Ctx& c0 = chain.ctx[0];
  const size_t block = c0.bytes(recv_count);
  Scratch order_mem, work_mem;
  int* order = nullptr;
  bool identity = false;
  STRATA_TRY(shard_order(h, chain, &order_mem, &order, &identity));
  int size = 0;
  STRATA_MPI_TRY(real().MPI_Comm_size(h.comm, &size));
  const size_t n = recv_count * static_cast<size_t>(size);
  STRATA_TRY(work_mem.allocate(c0.bytes(n)));
  char* work = work_mem.data();
  const char* src = static_cast<const char*>(in);
  if (!identity) {
    for (int x = 0; x < size; ++x) std::memcpy(work + block * order[x], src + block * x, block);
    src = work;
  }
  char* base = work;
  size_t len = n;
  for (int k = 0; k < chain.levels; ++k) {
    const Ctx& c = chain.ctx[k];
    const Split s{len, c.size};
    char* mine = base + c.bytes(s.displ(c.rank));
    STRATA_TRY(red.reduce_scatter(src, mine, s, c));
    src = base = mine;
    len = s.count(c.rank);
  }
  std::memcpy(out, base, block);
  return Status::ok;
}

Status shard_allgather(const void* mine, void* out, size_t send_count, const Hierarchy& h, const Chain& chain,
                       const Flat& move) noexcept {
  const Ctx& c0 = chain.ctx[0];
  const size_t block = c0.bytes(send_count);
  Scratch order_mem, work_mem;
  int* order = nullptr;
  bool identity = false;
  STRATA_TRY(shard_order(h, chain, &order_mem, &order, &identity));
  int size = 0, rank = 0;
  STRATA_MPI_TRY(real().MPI_Comm_size(h.comm, &size));
  STRATA_MPI_TRY(real().MPI_Comm_rank(h.comm, &rank));
  const size_t n = send_count * static_cast<size_t>(size);
  char* work = static_cast<char*>(out);
  if (!identity) {
    STRATA_TRY(work_mem.allocate(c0.bytes(n)));
    work = work_mem.data();
  }
  char* own = work + block * order[rank];
  if (mine != own) std::memcpy(own, mine, block);
  // My region at each level: offsets[k] (elements) of length lengths[k].
  size_t offsets[kMaxLevels], lengths[kMaxLevels];
  offsets[0] = 0;
  lengths[0] = n;
  for (int k = 0; k + 1 < chain.levels; ++k) {
    const Split s{lengths[k], chain.ctx[k].size};
    offsets[k + 1] = offsets[k] + s.displ(chain.ctx[k].rank);
    lengths[k + 1] = s.count(chain.ctx[k].rank);
  }
  for (int k = chain.levels - 1; k >= 0; --k) {
    const Ctx& c = chain.ctx[k];
    STRATA_TRY(move.allgather(nullptr, work + c.bytes(offsets[k]), Split{lengths[k], c.size}, c));
  }
  if (!identity) {
    for (int x = 0; x < size; ++x) std::memcpy(static_cast<char*>(out) + block * x, work + block * order[x], block);
  }
  return Status::ok;
}

}  // namespace

Status hier_allreduce(const void* in, void* out, size_t n, DataType type, ReduceOp op, const Hierarchy& h,
                      const Flat& inner) noexcept {
  if (!h.uniform) return leaders_allreduce(in, out, n, type, op, h, inner);
  Chain chain;
  STRATA_TRY(shard_chain(h, type, op, &chain));
  return shard_allreduce(in, out, n, chain, reducing(inner, type), inner);
}

Status hier_reduce_scatter(const void* in, void* out, size_t recv_count, DataType type, ReduceOp op, const Hierarchy& h,
                           const Flat& inner) noexcept {
  if (!h.uniform) return leaders_reduce_scatter(in, out, recv_count, type, op, h, inner);
  Chain chain;
  STRATA_TRY(shard_chain(h, type, op, &chain));
  return shard_reduce_scatter(in, out, recv_count, h, chain, reducing(inner, type));
}

Status hier_allgather(const void* mine, void* out, size_t send_count, DataType type, const Hierarchy& h,
                      const Flat& inner) noexcept {
  if (!h.uniform) return leaders_allgather(mine, out, send_count, type, h, inner);
  Chain chain;
  STRATA_TRY(shard_chain(h, type, ReduceOp::sum, &chain));
  return shard_allgather(mine, out, send_count, h, chain, inner);
}

}  // namespace strata::coll::host::detail
