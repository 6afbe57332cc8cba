// Flat ring algorithms: one reduce-scatter ring and one all-gather ring over
// an arbitrary block split, composed into every collective.
//
//   reduce_scatter  the ring reduce-scatter (p-1 steps of one block)
//   allgather       the ring all-gather
//   allreduce       reduce-scatter + all-gather over n split into p blocks
//                   (uneven when p does not divide n)
//   broadcast       the root scatters the p blocks, then the all-gather ring
//   reduce          reduce-scatter, then every rank sends its block to the root
//
// Block b is reduced once, along the ring from rank b+1 to rank b, so every
// rank ends with the same bits: the all-gather only copies.
#include "collectives/host/internal.hpp"

#include <cstring>

namespace strata::coll::host::detail {
namespace {

int mod(int a, int p) { return ((a % p) + p) % p; }

// Rank r ends with block r of the reduction, written to out (which may alias
// in: every read of `in` happens before out is written).
Status ring_reduce_scatter(const void* in, void* out, const Split& s, const Ctx& c) noexcept {
  const int p = c.size, r = c.rank;
  if (p == 1) {
    if (out != in) std::memmove(out, in, c.bytes(s.count(0)));
    return Status::ok;
  }
  Scratch acc_mem, tmp_mem;
  STRATA_TRY(acc_mem.allocate(c.bytes(s.largest())));
  STRATA_TRY(tmp_mem.allocate(c.bytes(s.largest())));
  char* acc = acc_mem.data();
  char* tmp = tmp_mem.data();
  const int next = mod(r + 1, p), prev = mod(r - 1, p);
  // Step k: send the partial of block r-1-k, receive that of block r-2-k and
  // add my own contribution. Step 0 sends my own input block.
  const char* sending = at(in, c.bytes(s.displ(mod(r - 1, p))));
  size_t sending_count = s.count(mod(r - 1, p));
  for (int k = 0; k < p - 1; ++k) {
    const int b = mod(r - 2 - k, p);
    STRATA_TRY(sendrecv(sending, c.bytes(sending_count), next, tmp, c.bytes(s.count(b)), prev, c));
    c.combine(tmp, at(in, c.bytes(s.displ(b))), tmp, s.count(b));  // op(partial of the others, mine)
    std::swap(acc, tmp);
    sending = acc;
    sending_count = s.count(b);
  }
  std::memmove(out, acc, c.bytes(s.count(r)));  // the last block received was block r
  return Status::ok;
}

// Rank r holds block (r - shift) mod p of buf; afterwards it holds all.
Status ring_allgather(void* buf, const Split& s, int shift, const Ctx& c) noexcept {
  const int p = c.size;
  const int v = mod(c.rank - shift, p);
  const int next = mod(c.rank + 1, p), prev = mod(c.rank - 1, p);
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(v - k, p), rb = mod(v - k - 1, p);
    STRATA_TRY(sendrecv(at(buf, c.bytes(s.displ(sb))), c.bytes(s.count(sb)), next, at(buf, c.bytes(s.displ(rb))),
                        c.bytes(s.count(rb)), prev, c));
  }
  return Status::ok;
}

Status reduce_scatter(const void* in, void* out, const Split& s, const Ctx& c) noexcept {
  return ring_reduce_scatter(in, out, s, c);
}

Status allgather(const void* mine, void* buf, const Split& s, const Ctx& c) noexcept {
  char* own = at(buf, c.bytes(s.displ(c.rank)));
  if (mine != nullptr && mine != own) std::memcpy(own, mine, c.bytes(s.count(c.rank)));
  return ring_allgather(buf, s, 0, c);
}

Status allreduce(const void* in, void* out, size_t n, const Ctx& c) noexcept {
  const Split s{n, c.size};
  STRATA_TRY(ring_reduce_scatter(in, at(out, c.bytes(s.displ(c.rank))), s, c));
  return ring_allgather(out, s, 0, c);
}

Status broadcast(void* buf, size_t n, int root, const Ctx& c) noexcept {
  const Split s{n, c.size};
  const int v = mod(c.rank - root, c.size);  // block index of this rank
  if (c.rank == root) {
    for (int x = 0; x < c.size; ++x) {
      if (x == root) continue;
      const int bx = mod(x - root, c.size);
      STRATA_TRY(send(at(buf, c.bytes(s.displ(bx))), c.bytes(s.count(bx)), x, c));
    }
  } else {
    STRATA_TRY(recv(at(buf, c.bytes(s.displ(v))), c.bytes(s.count(v)), root, c));
  }
  return ring_allgather(buf, s, root, c);
}

Status reduce(const void* in, void* out, size_t n, int root, const Ctx& c) noexcept {
  const Split s{n, c.size};
  Scratch mine;
  char* block = nullptr;
  if (c.rank == root) {
    block = at(out, c.bytes(s.displ(c.rank)));
  } else {
    STRATA_TRY(mine.allocate(c.bytes(s.count(c.rank))));
    block = mine.data();
  }
  STRATA_TRY(ring_reduce_scatter(in, block, s, c));
  if (c.rank != root) return send(block, c.bytes(s.count(c.rank)), root, c);
  for (int x = 0; x < c.size; ++x) {
    if (x != root) STRATA_TRY(recv(at(out, c.bytes(s.displ(x))), c.bytes(s.count(x)), x, c));
  }
  return Status::ok;
}

}  // namespace

const Flat kRing = {&allreduce, &reduce_scatter, &allgather, &broadcast, &reduce};

}  // namespace strata::coll::host::detail
