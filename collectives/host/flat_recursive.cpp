// Flat recursive algorithms (log p steps):
//
//   allreduce       small vectors: recursive doubling on the whole vector;
//                   larger: Rabenseifner (recursive-halving reduce-scatter,
//                   then recursive-doubling all-gather)
//   reduce_scatter  recursive halving
//   allgather       recursive doubling
//   broadcast       binomial tree
//   reduce          binomial tree
//
// Any rank count: with p2 the largest power of two <= p and rem = p - p2,
// the even ranks below 2*rem first hand their data to the odd rank above
// them and sit out ("fold"); the p2 remaining ranks run the power-of-two
// algorithm (new rank v), and the result is handed back at the end
// ("unfold"). The blocks of the split are grouped into p2 super-blocks, one
// per active rank: the blocks of both ranks of a folded pair.
//
// Pairwise reductions are always combine(lower, higher), so in recursive
// doubling, where both partners compute the same sum, they compute it with
// the same operand order and all ranks end bit-identical.
#include "collectives/host/internal.hpp"

#include <cstring>

namespace strata::coll::host::detail {
namespace {

// Vectors up to this size take recursive doubling (latency bound: log p
// messages of the whole vector beat 2 log p messages of halves).
constexpr size_t kDoublingMaxBytes = 8192;

struct Fold {
  int p2 = 1;
  int rem = 0;
  int v = 0;           // my rank among the active ranks; -1 when folded away
  bool extra = false;  // I hand my data to rank + 1 and sit out

  static Fold of(int rank, int size) noexcept {
    Fold f;
    while (f.p2 * 2 <= size) f.p2 *= 2;
    f.rem = size - f.p2;
    if (rank < 2 * f.rem) {
      f.extra = rank % 2 == 0;
      f.v = f.extra ? -1 : rank / 2;
    } else {
      f.v = rank - f.rem;
    }
    return f;
  }
  int rank_of(int v_other) const noexcept { return v_other < rem ? 2 * v_other + 1 : v_other + rem; }
  int first_block(int v_other) const noexcept { return v_other < rem ? 2 * v_other : v_other + rem; }
};

// Super-block i of a split into p blocks (grouped by the fold), or block i of
// a split into p2 blocks (grouped = false).
struct Blocks {
  Split split;
  Fold fold;
  bool grouped = true;
  size_t displ(int i) const noexcept {
    if (!grouped) return split.displ(i);
    return i == fold.p2 ? split.n : split.displ(fold.first_block(i));
  }
  size_t count(int i) const noexcept { return displ(i + 1) - displ(i); }
  size_t span(int lo, int hi) const noexcept { return displ(hi) - displ(lo); }  // super-blocks [lo, hi)
};

// Recursive halving among the active ranks. Reads `in`, leaves the reduced
// super-block v at work + displ(v) (work may be in). Folded-away ranks send
// `in` and return. tmp holds at least half the vector.
Status halving(const void* in, char* work, char* tmp, const Blocks& b, const Ctx& c) noexcept {
  const Fold& f = b.fold;
  const size_t n = b.split.n;
  if (f.extra) return send(in, c.bytes(n), c.rank + 1, c);
  const char* src = static_cast<const char*>(in);
  if (c.rank < 2 * f.rem) {  // take in my even neighbour's vector: op(its, mine)
    STRATA_TRY(recv(tmp, c.bytes(n), c.rank - 1, c));
    c.combine(tmp, src, work, n);
    src = work;
  }
  int lo = 0, hi = f.p2;
  for (int mask = f.p2 / 2; mask >= 1; mask /= 2) {
    const int partner_v = f.v ^ mask;
    const int mid = lo + (hi - lo) / 2;
    const bool lower = (f.v & mask) == 0;
    const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
    const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
    const size_t keep = b.span(keep_lo, keep_hi);
    STRATA_TRY(sendrecv(src + c.bytes(b.displ(give_lo)), c.bytes(b.span(give_lo, give_hi)), f.rank_of(partner_v), tmp,
                        c.bytes(keep), f.rank_of(partner_v), c));
    const char* mine = src + c.bytes(b.displ(keep_lo));
    char* dst = work + c.bytes(b.displ(keep_lo));
    if (lower) {
      c.combine(mine, tmp, dst, keep);
    } else {
      c.combine(tmp, mine, dst, keep);
    }
    src = work;
    lo = keep_lo;
    hi = keep_hi;
  }
  return Status::ok;
}

// Recursive doubling among the active ranks: active rank v holds super-block
// v of buf, afterwards all of it; then the folded-away ranks get the whole
// vector from their odd neighbour.
Status doubling(char* buf, const Blocks& b, const Ctx& c) noexcept {
  const Fold& f = b.fold;
  const size_t n = b.split.n;
  if (f.extra) return recv(buf, c.bytes(n), c.rank + 1, c);
  for (int mask = 1; mask < f.p2; mask *= 2) {
    const int partner_v = f.v ^ mask;
    const int mine = f.v & ~(mask - 1), theirs = partner_v & ~(mask - 1);
    STRATA_TRY(sendrecv(buf + c.bytes(b.displ(mine)), c.bytes(b.span(mine, mine + mask)), f.rank_of(partner_v),
                        buf + c.bytes(b.displ(theirs)), c.bytes(b.span(theirs, theirs + mask)), f.rank_of(partner_v),
                        c));
  }
  if (c.rank < 2 * f.rem) return send(buf, c.bytes(n), c.rank - 1, c);
  return Status::ok;
}

// Recursive doubling on the whole vector (small vectors).
Status allreduce_doubling(const void* in, void* out, size_t n, const Ctx& c) noexcept {
  const Fold f = Fold::of(c.rank, c.size);
  Scratch tmp_mem;
  STRATA_TRY(tmp_mem.allocate(c.bytes(n)));
  char* tmp = tmp_mem.data();
  char* acc = static_cast<char*>(out);
  if (f.extra) {
    STRATA_TRY(send(in, c.bytes(n), c.rank + 1, c));
    return recv(acc, c.bytes(n), c.rank + 1, c);
  }
  if (c.rank < 2 * f.rem) {
    STRATA_TRY(recv(tmp, c.bytes(n), c.rank - 1, c));
    c.combine(tmp, in, acc, n);
  } else if (in != out) {
    std::memcpy(acc, in, c.bytes(n));
  }
  for (int mask = 1; mask < f.p2; mask *= 2) {
    const int partner_v = f.v ^ mask;
    const int partner = f.rank_of(partner_v);
    STRATA_TRY(sendrecv(acc, c.bytes(n), partner, tmp, c.bytes(n), partner, c));
    if (f.v < partner_v) {
      c.combine(acc, tmp, acc, n);
    } else {
      c.combine(tmp, acc, acc, n);
    }
  }
  if (c.rank < 2 * f.rem) return send(acc, c.bytes(n), c.rank - 1, c);
  return Status::ok;
}

Status allreduce(const void* in, void* out, size_t n, const Ctx& c) noexcept {
  if (c.size == 1) {
    if (in != out) std::memcpy(out, in, c.bytes(n));
    return Status::ok;
  }
  const Fold f = Fold::of(c.rank, c.size);
  if (c.bytes(n) <= kDoublingMaxBytes || n < static_cast<size_t>(f.p2)) return allreduce_doubling(in, out, n, c);
  // Rabenseifner on n split into p2 blocks, in out.
  const Blocks b{Split{n, f.p2}, f, false};
  Scratch tmp;
  STRATA_TRY(tmp.allocate(c.bytes(n)));
  STRATA_TRY(halving(in, static_cast<char*>(out), tmp.data(), b, c));
  return doubling(static_cast<char*>(out), b, c);
}

Status reduce_scatter(const void* in, void* out, const Split& s, const Ctx& c) noexcept {
  if (c.size == 1) {
    if (in != out) std::memmove(out, in, c.bytes(s.n));
    return Status::ok;
  }
  const Fold f = Fold::of(c.rank, c.size);
  const Blocks b{s, f, true};
  const size_t mine = c.bytes(s.count(c.rank));
  if (f.extra) {  // my block comes back from my odd neighbour
    STRATA_TRY(send(in, c.bytes(s.n), c.rank + 1, c));
    return recv(out, mine, c.rank + 1, c);
  }
  // Work in place when the caller lets us (out inside in), else in scratch.
  const bool writable = out >= in && static_cast<const char*>(out) < at(in, c.bytes(s.n));
  Scratch work_mem, tmp_mem;
  if (!writable) STRATA_TRY(work_mem.allocate(c.bytes(s.n)));
  STRATA_TRY(tmp_mem.allocate(c.bytes(s.n)));
  char* work = writable ? static_cast<char*>(out) - (static_cast<const char*>(out) - static_cast<const char*>(in))
                        : work_mem.data();
  STRATA_TRY(halving(in, work, tmp_mem.data(), b, c));
  if (c.rank < 2 * f.rem) {  // my super-block holds my neighbour's block too
    STRATA_TRY(send(work + c.bytes(s.displ(c.rank - 1)), c.bytes(s.count(c.rank - 1)), c.rank - 1, c));
  }
  std::memmove(out, work + c.bytes(s.displ(c.rank)), mine);
  return Status::ok;
}

Status allgather(const void* mine, void* buf, const Split& s, const Ctx& c) noexcept {
  char* base = static_cast<char*>(buf);
  char* own = base + c.bytes(s.displ(c.rank));
  if (mine != nullptr && mine != own) std::memcpy(own, mine, c.bytes(s.count(c.rank)));
  if (c.size == 1) return Status::ok;
  const Fold f = Fold::of(c.rank, c.size);
  if (f.extra) {
    STRATA_TRY(send(own, c.bytes(s.count(c.rank)), c.rank + 1, c));
  } else if (c.rank < 2 * f.rem) {
    STRATA_TRY(recv(base + c.bytes(s.displ(c.rank - 1)), c.bytes(s.count(c.rank - 1)), c.rank - 1, c));
  }
  return doubling(base, Blocks{s, f, true}, c);
}

Status broadcast(void* buf, size_t n, int root, const Ctx& c) noexcept {
  const int p = c.size;
  const int v = (c.rank - root + p) % p;
  int mask = 1;
  while (mask < p) {
    if (v & mask) {
      STRATA_TRY(recv(buf, c.bytes(n), (v - mask + root) % p, c));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask < p) STRATA_TRY(send(buf, c.bytes(n), (v + mask + root) % p, c));
  }
  return Status::ok;
}

Status reduce(const void* in, void* out, size_t n, int root, const Ctx& c) noexcept {
  const int p = c.size;
  const int v = (c.rank - root + p) % p;
  const char* acc = static_cast<const char*>(in);
  Scratch acc_mem, tmp_mem;
  char* dst = nullptr;  // where my partial result goes once I have children
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) return send(acc, c.bytes(n), (v - mask + root) % p, c);
    if (v + mask >= p) continue;
    if (dst == nullptr) {
      STRATA_TRY(tmp_mem.allocate(c.bytes(n)));
      if (c.rank == root) {
        dst = static_cast<char*>(out);
      } else {
        STRATA_TRY(acc_mem.allocate(c.bytes(n)));
        dst = acc_mem.data();
      }
    }
    STRATA_TRY(recv(tmp_mem.data(), c.bytes(n), (v + mask + root) % p, c));
    c.combine(acc, tmp_mem.data(), dst, n);  // my subtree has the lower ranks
    acc = dst;
  }
  if (acc != out) std::memcpy(out, acc, c.bytes(n));  // root only: p == 1
  return Status::ok;
}

}  // namespace

const Flat kRecursive = {&allreduce, &reduce_scatter, &allgather, &broadcast, &reduce};

}  // namespace strata::coll::host::detail
