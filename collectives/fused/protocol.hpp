// The fused AllReduce-RMSNorm protocol over memory every rank can address:
// the peers' GPU memory through CUDA/HIP IPC (kernels.cu), or an MPI
// shared-memory window on the host (shared_path.cpp). Written once; a
// platform P supplies threads, blocks and atomics:
//
//   int thread() const, threads() const     this thread in its block, block size
//   void sync()                              block barrier
//   bool sync_and(bool)                      block barrier that ANDs a value
//   Accumulator                              type of the row's sum of squares
//   Accumulator block_sum(Accumulator, float* smem)  sum over the block (all threads get it)
//   void store_release(uint32_t*, uint32_t)  system scope
//   uint32_t load_acquire(const uint32_t*)   system scope
//   uint32_t load_relaxed(const uint32_t*), void store_relaxed(uint32_t*, uint32_t)
//   uint32_t fetch_add(uint32_t*, uint32_t)  device scope
//   void report(uint64_t* claim, uint64_t* host_word, uint64_t w)
//                                            first report wins the claim and is
//                                            published to the host-visible word
//   void fence_system()
//   uint64_t now() const                     ticks of the timeout clock
//   void pause()                             between polls of a flag
//
// A call is one launch of G blocks on every rank (G the same everywhere, a
// function of the call's shape). Block b handles the rows whose index
// within their owner's share is b modulo G (one-shot: a single owner, all
// rows), in every phase: so block b only ever reads what block b of the
// other ranks wrote, and every wait is between blocks of one number.
//
//   one-shot   stage my x rows into my region; barrier "start"; each row:
//              sum every rank's staged row in rank order + residual ->
//              residual, RMSNorm -> out.
//   two-shot   stage; barrier "start"; my own rows: sum + residual -> my
//              region's result rows; barrier "mid"; every row: copy the
//              owner's result row -> residual, RMSNorm -> out.
//
// Flags are counters: the call number (1, 2, ...) is written to the peer's
// slot [phase][block][my rank] and a waiter accepts any value at least its
// own call number (a fast peer may already be a call ahead). The call
// number lives in device memory (Control), advanced by the last block to
// finish, so a call captured in a graph and replayed counts correctly.
// Staging and results alternate between two sets by call parity, so no
// barrier is needed at the end: a rank can only reuse a set two calls later,
// after every rank has started the call in between, i.e. finished reading.
// Every wait gives up after `timeout` ticks: the first failure is recorded
// (the error word: the peer that did not arrive, the phase, the call), the
// block skips its remaining work, and the call ends.
#pragma once

#include "collectives/fused/row_math.hpp"
#include "portability/setup/host_device.hpp"

#include <cstddef>
#include <cstdint>

namespace strata::fused::proto {

constexpr int kMaxRanks = 8;
constexpr int kMaxBlocks = 256;
constexpr int64_t kMaxHidden = 16384;

enum Phase : uint32_t { kStart = 0, kMid = 1, kData = 2 };

// What one launch runs.
enum class Kind : uint8_t { one_shot, two_shot, lamport };
constexpr int kLamportSets = 3;
constexpr unsigned kSpinPolls = 512;  // Lamport polls before the first pause

struct Flags {
  uint32_t slot[2][kMaxBlocks][kMaxRanks];  // [phase][block][writer rank]
};

// Local bookkeeping, never touched by peers.
struct Control {
  uint32_t seq;    // calls completed
  uint32_t done;   // blocks of the running call that have finished
  uint64_t claim;  // the first error (pack_error), claimed here before it is published
};

// The first failure, packed in one word so that a reader sees all of it:
// bits 0-7 code (1: timeout), 8-15 phase, 16-23 peer, 24-31 block (low 8
// bits), 32-63 call number.
constexpr uint64_t pack_error(uint32_t code, uint32_t phase, uint32_t peer, uint32_t block, uint32_t seq) {
  return (uint64_t{code} & 0xff) | ((uint64_t{phase} & 0xff) << 8) | ((uint64_t{peer} & 0xff) << 16) |
         ((uint64_t{block} & 0xff) << 24) | (uint64_t{seq} << 32);
}
struct ErrorFields {
  uint32_t code, phase, peer, block, seq;
};
constexpr ErrorFields unpack_error(uint64_t w) {
  return {static_cast<uint32_t>(w & 0xff), static_cast<uint32_t>((w >> 8) & 0xff),
          static_cast<uint32_t>((w >> 16) & 0xff), static_cast<uint32_t>((w >> 24) & 0xff),
          static_cast<uint32_t>(w >> 32)};
}

// Byte layout of one rank's region (the same on every rank).
struct Layout {
  size_t flags = 0;       // Flags
  size_t control = 0;     // Control
  size_t probe = 0;       // kMaxRanks words for the set-up transfer test
  size_t data = 0;        // set 0, then set 1
  size_t tensor = 0;      // one [max_tokens][hidden] tensor, rounded up to 256 bytes
  size_t lamport = 0;     // kLamportSets x nranks slots of slot_bytes (after the sets)
  size_t slot_bytes = 0;  // one rank's posted rows: the largest Lamport message, rounded up to 256 bytes
  int ranks = 0;          // slots per Lamport set
  size_t total = 0;

  // `lamport_max`: the largest message (bytes) the Lamport kind takes (0:
  // no Lamport area); the area is kLamportSets x nranks x that.
  static Layout of(size_t max_tokens, size_t hidden, size_t element, int nranks = 0, size_t lamport_max = 0) {
    auto up = [](size_t v) { return (v + 255) / 256 * 256; };
    Layout l;
    l.flags = 0;
    l.control = up(sizeof(Flags));
    l.probe = l.control + 256;
    l.data = l.probe + 256;
    l.tensor = up(max_tokens * hidden * element);
    l.lamport = l.data + 4 * l.tensor;  // two sets of (staged input, results)
    const size_t largest = max_tokens * hidden * element;
    l.slot_bytes = nranks > 0 ? up(largest < lamport_max ? largest : lamport_max) : 0;
    l.ranks = l.slot_bytes > 0 ? nranks : 0;
    l.total = l.lamport + static_cast<size_t>(kLamportSets) * static_cast<size_t>(l.ranks) * l.slot_bytes;
    return l;
  }
  STRATA_HOST_DEVICE size_t staged(uint32_t set) const { return data + static_cast<size_t>(set) * 2 * tensor; }
  STRATA_HOST_DEVICE size_t results(uint32_t set) const { return staged(set) + tensor; }
  // Where `writer` posts its rows for Lamport set `set` (in the reader's region).
  STRATA_HOST_DEVICE size_t slot(uint32_t set, int writer) const {
    return lamport + (static_cast<size_t>(set) * static_cast<size_t>(ranks) + static_cast<size_t>(writer)) * slot_bytes;
  }
  // Whether a Lamport call of `bytes` fits.
  STRATA_HOST_DEVICE bool lamport_fits(size_t bytes) const { return ranks > 0 && bytes <= slot_bytes; }
};

// The 32-bit word that fills an empty Lamport area: negative zero in every
// element of `element` bytes (2 or 4).
constexpr uint32_t empty_word(size_t element) {
  return element == 4 ? math::empty_bits(4) : (math::empty_bits(2) << 16) | math::empty_bits(2);
}

template <class T>
struct Args {
  char* region[kMaxRanks];  // every rank's region as this rank addresses it
  int rank;
  int nranks;
  Layout layout;
  const T* x;
  T* residual;
  const T* weight;
  T* out;
  int64_t tokens;
  int64_t hidden;
  float epsilon;
  uint64_t timeout;  // ticks of P::now()
  uint64_t* error;   // the error word (pack_error), host-visible
  int lag;           // Lamport: rows a block posts ahead of the one it takes
  int post_slices;   // Lamport, rows one block holds: blocks that post each row (0 or 1: the reducing block alone)
};

// Blocks that post each row group of a Lamport call: Args::post_slices, at
// least 1 (0 and 1 both mean the reducing block alone).
template <class T>
STRATA_HOST_DEVICE STRATA_INLINE int slices_of(const Args<T>& a) {
  return a.post_slices > 1 ? a.post_slices : 1;
}

template <class T>
STRATA_HOST_DEVICE STRATA_INLINE Control* control_of(const Args<T>& a) {
  return reinterpret_cast<Control*>(a.region[a.rank] + a.layout.control);
}

// Rows [lo, hi) owned by `owner` when `tokens` rows are shared by `n` ranks
// (the first ranks get one fewer when it does not divide).
STRATA_HOST_DEVICE STRATA_INLINE int64_t owner_begin(int64_t tokens, int owner, int n) { return tokens * owner / n; }

// Blocks of a call: the same on every rank for the same shape.
STRATA_HOST_DEVICE STRATA_INLINE int blocks_for(Kind kind, int64_t tokens, int nranks, int budget) {
  const int64_t rows = kind == Kind::two_shot ? (tokens + nranks - 1) / nranks : tokens;
  int64_t g = budget < rows ? budget : rows;
  if (g > kMaxBlocks) g = kMaxBlocks;
  return g < 1 ? 1 : static_cast<int>(g);
}

// Blocks that share each row of a Lamport call (a thread block cluster,
// CUDA on compute capability 9.0 and later; the platform makes the cluster
// look like one block). Only rows longer than `held_bytes` (what one block
// holds in registers, take_row_held) are shared: then by the fewest blocks,
// a power of two up to `largest`, whose share of a row is at most
// `block_row_bytes`, as long as `blocks` such groups fit the budget. 1: a
// block per row (other kinds, shorter rows, no clusters, `block_row_bytes`
// 0). Measured on 2 x H200 (docs/fused.md "Small calls"): one row of 16384
// bf16 10.4 -> 7.2 us in clusters of 8; rows that one block holds were
// slower shared (8192 bf16: 6.6 -> 7.1 us in clusters of 2), the cluster's
// barriers costing more than the halved bytes save.
inline int cluster_for(Kind kind, int64_t row_bytes, int blocks, int budget, int largest, int64_t held_bytes,
                       int64_t block_row_bytes) {
  int k = 1;
  if (kind != Kind::lamport || block_row_bytes <= 0 || row_bytes <= held_bytes) return k;
  while (k * 2 <= largest && row_bytes > block_row_bytes * k && static_cast<int64_t>(blocks) * 2 * k <= budget) k *= 2;
  return k;
}

// Blocks that post each row group of a Lamport call (Args::post_slices):
// `wanted` where the rows are ones a block holds (`row_bytes` <= `held`)
// and not shared by a cluster, fewer where `blocks` groups of them would
// not fit the budget; 1 otherwise, and for a call whose output is its
// input (`in_place`: the reducing block would overwrite x while another
// block may still be reading it to post).
inline int post_slices_for(Kind kind, int64_t row_bytes, int64_t held, int cluster, int blocks, int budget, int wanted,
                           bool in_place) {
  if (kind != Kind::lamport || cluster > 1 || row_bytes > held || wanted <= 1 || blocks < 1 || in_place) return 1;
  const int fit = budget / blocks;
  return fit < wanted ? (fit < 1 ? 1 : fit) : wanted;
}

template <class P>
STRATA_HOST_DEVICE STRATA_INLINE uint32_t* flag_at(char* region, const Layout& l, Phase phase, int block, int writer) {
  return &reinterpret_cast<Flags*>(region + l.flags)->slot[phase][block][writer];
}

// Signals call `seq` to every peer for (phase, block) and waits until every
// peer signalled it. False (on every thread) when a wait timed out.
STRATA_HD_TEMPLATE
template <class P, class T>
STRATA_HOST_DEVICE bool barrier(P& p, const Args<T>& a, Phase phase, int block, uint32_t seq) {
  p.sync();  // this block's writes before the signal
  bool ok = true;
  for (int q = p.thread(); q < a.nranks; q += p.threads()) {
    if (q == a.rank) continue;
    p.fence_system();
    p.store_release(flag_at<P>(a.region[q], a.layout, phase, block, a.rank), seq);
  }
  for (int q = p.thread(); q < a.nranks; q += p.threads()) {
    if (q == a.rank) continue;
    const uint32_t* mine = flag_at<P>(a.region[a.rank], a.layout, phase, block, q);
    const uint64_t t0 = p.now();
    while (static_cast<int32_t>(p.load_acquire(mine) - seq) < 0) {
      if (p.now() - t0 > a.timeout) {
        p.report(&control_of(a)->claim, a.error,
                 pack_error(1, phase, static_cast<uint32_t>(q), static_cast<uint32_t>(block), seq));
        ok = false;
        break;
      }
      p.pause();
    }
  }
  return p.sync_and(ok);
}

// The call number of the running call (every block reads it at entry; the
// previous call on this stream has finished, so no block has advanced it).
template <class P, class T>
STRATA_HOST_DEVICE STRATA_INLINE uint32_t call_number(P& p, const Args<T>& a) {
  return p.load_relaxed(&control_of(a)->seq) + 1;
}

// The last block to finish advances the call number (a call of one block
// needs no count). No fence: Control is read only by the next kernel on
// this GPU's stream, and a kernel's end (or a dependent launch's wait,
// kernels.cu) makes every write of the kernel visible to the next. The
// device-scope fence this had cost a small call about 1 µs (measured on
// 2 x H100: 6.0 -> 5.1 µs at 1 x 4096 bf16; it waits for the block's
// outstanding stores, NVLink ones included).
STRATA_HD_TEMPLATE
template <class P, class T>
STRATA_HOST_DEVICE void finish(P& p, const Args<T>& a, int blocks, uint32_t seq) {
  p.sync();
  if (p.thread() != 0) return;
  Control* c = control_of(a);
  if (blocks == 1) {
    p.store_relaxed(&c->seq, seq);
  } else if (p.fetch_add(&c->done, 1u) == static_cast<uint32_t>(blocks - 1)) {
    p.store_relaxed(&c->done, 0u);
    p.store_relaxed(&c->seq, seq);
  }
}

template <class T>
STRATA_HOST_DEVICE STRATA_INLINE T* tensor_at(char* region, size_t offset, int64_t row, int64_t hidden) {
  return reinterpret_cast<T*>(region + offset) + row * hidden;
}

// Copies this block's rows of x into my staging set (rows of every owner
// whose index within the owner's share is b mod G).
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void stage(P& p, const Args<T>& a, int owners, int block, int blocks, uint32_t set) {
  for (int o = 0; o < owners; ++o) {
    const int64_t lo = owner_begin(a.tokens, o, owners), hi = owner_begin(a.tokens, o + 1, owners);
    for (int64_t r = lo + block; r < hi; r += blocks) {
      const T* src = a.x + r * a.hidden;
      T* dst = tensor_at<T>(a.region[a.rank], a.layout.staged(set), r, a.hidden);
      for (int64_t i = static_cast<int64_t>(p.thread()) * V; i < a.hidden; i += static_cast<int64_t>(p.threads()) * V) {
        math::store<T, V>(dst + i, math::load<T, V>(src + i));
      }
    }
  }
}

// One block of a one-shot call.
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void one_shot(P& p, const Args<T>& a, int block, int blocks, float* smem) {
  const uint32_t seq = call_number(p, a);
  const uint32_t set = seq & 1u;
  stage<V>(p, a, 1, block, blocks, set);
  if (barrier(p, a, kStart, block, seq)) {
    const T* src[kMaxRanks];
    for (int64_t r = block; r < a.tokens; r += blocks) {
      for (int q = 0; q < a.nranks; ++q) src[q] = tensor_at<T>(a.region[q], a.layout.staged(set), r, a.hidden);
      T* res = a.residual + r * a.hidden;
      math::norm_row<V>(p, src, a.nranks, res, res, a.weight, a.out + r * a.hidden, a.hidden, a.epsilon, smem);
    }
  }
  finish(p, a, blocks, seq);
}

// One block of a two-shot call.
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void two_shot(P& p, const Args<T>& a, int block, int blocks, float* smem) {
  const uint32_t seq = call_number(p, a);
  const uint32_t set = seq & 1u;
  const int n = a.nranks;
  stage<V>(p, a, n, block, blocks, set);
  bool ok = barrier(p, a, kStart, block, seq);
  if (ok) {
    // My rows: every rank's staged row + residual -> my results.
    const T* src[kMaxRanks];
    const int64_t hi = owner_begin(a.tokens, a.rank + 1, n);
    for (int64_t r = owner_begin(a.tokens, a.rank, n) + block; r < hi; r += blocks) {
      for (int q = 0; q < n; ++q) src[q] = tensor_at<T>(a.region[q], a.layout.staged(set), r, a.hidden);
      T* res = a.residual + r * a.hidden;
      math::sum_row<V>(p, src, n, res, tensor_at<T>(a.region[a.rank], a.layout.results(set), r, a.hidden), a.hidden);
    }
    ok = barrier(p, a, kMid, block, seq);
  }
  if (ok) {
    // Every row from its owner's results: -> residual, RMSNorm -> out.
    for (int o = 0; o < n; ++o) {
      const int64_t lo = owner_begin(a.tokens, o, n), hi = owner_begin(a.tokens, o + 1, n);
      for (int64_t r = lo + block; r < hi; r += blocks) {
        const T* src[1] = {tensor_at<T>(a.region[o], a.layout.results(set), r, a.hidden)};
        math::norm_row<V>(p, src, 1, static_cast<const T*>(nullptr), a.residual + r * a.hidden, a.weight,
                          a.out + r * a.hidden, a.hidden, a.epsilon, smem);
      }
    }
  }
  finish(p, a, blocks, seq);
}

// Posts slice `slice` of `slices` of row r of x (whole vectors; the whole
// row by default) into my slot of every peer's region (each element made
// canonical: -0 goes as +0, so no posted value reads as empty).
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void post_row(P& p, const Args<T>& a, int64_t r, uint32_t set, int slice = 0, int slices = 1) {
  const size_t mine = a.layout.slot(set, a.rank);
  const T* src = a.x + r * a.hidden;
  const int64_t vectors = (a.hidden + V - 1) / V, share = (vectors + slices - 1) / slices;
  const int64_t lo = slice * share * V, end = (slice + 1) * share * V, hi = end < a.hidden ? end : a.hidden;
  for (int64_t i = lo + static_cast<int64_t>(p.thread()) * V; i < hi; i += static_cast<int64_t>(p.threads()) * V) {
    const math::Vec<T, V> v = math::canonical_vector(math::load<T, V>(src + i));
    for (int q = 0; q < a.nranks; ++q) {
      if (q != a.rank) p.template store_posted<T, V>(tensor_at<T>(a.region[q], mine, r, a.hidden) + i, v);
    }
  }
}

// Row r as `writer` posts it into my region (Lamport set `set`).
template <class T>
STRATA_HOST_DEVICE STRATA_INLINE T* posted_row(const Args<T>& a, uint32_t set, int writer, int64_t r) {
  return tensor_at<T>(a.region[a.rank], a.layout.slot(set, writer), r, a.hidden);
}

// Polls one vector a peer posts into my region until none of its elements
// reads as empty, and gives it back in `got`. False when the wait timed out
// (reported: `peer` did not arrive with its data).
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE bool poll_posted(P& p, const Args<T>& a, const T* at, int peer, int block, uint32_t seq,
                                    math::Vec<T, V>* got) {
  // A small message's rows arrive within a microsecond or two: spin without
  // pausing (a pause is tens of nanoseconds or more) or reading the clock.
  uint64_t t0 = 0;
  for (unsigned polls = 0;; ++polls) {
    const math::Vec<T, V> v = p.template load_posted<T, V>(at);
    if (!math::any_empty(v)) {
      *got = v;
      return true;
    }
    if (polls < kSpinPolls) continue;
    if (polls == kSpinPolls) {
      t0 = p.now();
    } else if (p.now() - t0 > a.timeout) {
      p.report(&control_of(a)->claim, a.error,
               pack_error(1, kData, static_cast<uint32_t>(peer), static_cast<uint32_t>(block), seq));
      return false;
    }
    p.pause();
  }
}

// Waits until this thread's elements of row r are posted by every peer
// (none reads as empty). False when a wait timed out (reported).
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE bool wait_posted(P& p, const Args<T>& a, const T* const* src, int block, uint32_t seq) {
  math::Vec<T, V> v;
  for (int q = 0; q < a.nranks; ++q) {
    if (q == a.rank) continue;
    for (int64_t i = static_cast<int64_t>(p.thread()) * V; i < a.hidden; i += static_cast<int64_t>(p.threads()) * V) {
      if (!poll_posted<V>(p, a, src[q] + i, q, block, seq, &v)) return false;
    }
  }
  return true;
}

// Marks the vector at element i of every peer's posted row r empty again.
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void empty_vector(P& p, const Args<T>& a, uint32_t set, int64_t r, int64_t i) {
  math::Vec<T, V> empty;
  for (int k = 0; k < V; ++k) empty.e[k] = math::empty_value<T>();
  for (int q = 0; q < a.nranks; ++q) {
    if (q != a.rank) p.template store_posted<T, V>(posted_row(a, set, q, r) + i, empty);
  }
}

// Marks this thread's elements of every peer's posted row r empty again.
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void empty_row(P& p, const Args<T>& a, uint32_t set, int64_t r) {
  for (int64_t i = static_cast<int64_t>(p.thread()) * V; i < a.hidden; i += static_cast<int64_t>(p.threads()) * V) {
    empty_vector<V>(p, a, set, r, i);
  }
}

// Row r of a Lamport call, once every peer posted it: `arrived()` (the
// caller posts its next row there, so the link carries it while this one is
// reduced), sum + residual -> residual, RMSNorm -> out, the peers' slots
// emptied. False when a wait timed out (reported).
STRATA_HD_TEMPLATE
template <int V, class P, class T, class Arrived>
STRATA_HOST_DEVICE bool take_row(P& p, const Args<T>& a, int64_t r, uint32_t set, int block, uint32_t seq, float* smem,
                                 Arrived&& arrived) {
  const T* src[kMaxRanks];
  for (int q = 0; q < a.nranks; ++q) {
    src[q] = q == a.rank ? a.x + r * a.hidden : posted_row(a, set, q, r);
  }
  if (!p.sync_and(wait_posted<V>(p, a, src, block, seq))) return false;
  arrived();
  T* res = a.residual + r * a.hidden;
  math::norm_row<V>(p, src, a.nranks, res, res, a.weight, a.out + r * a.hidden, a.hidden, a.epsilon, smem);
  empty_row<V>(p, a, set, r);
  return true;
}

// Row r of a Lamport call where every thread holds at most one vector of
// the row (hidden <= threads x V: up to 8192 bf16 elements at 1024
// threads): the same arithmetic as take_row (`arrived()` included), in registers. The residual and
// this rank's x are loaded before the peers' vectors are awaited, the
// polled vectors are the ones summed (in rank order, as sum_row does), and
// `w` is the weight this thread loaded once for the call: no load waits
// after the data arrives (a small call's time is those waits).
STRATA_HD_TEMPLATE
template <int V, class P, class T, class Arrived>
STRATA_HOST_DEVICE bool take_row_held(P& p, const Args<T>& a, int64_t r, uint32_t set, int block, uint32_t seq,
                                      const math::Vec<T, V>& w, float* smem, Arrived&& arrived) {
  const int64_t i = static_cast<int64_t>(p.thread()) * V;
  const bool mine = i < a.hidden;  // threads past the row only take part in the block's sum
  T* const res = mine ? a.residual + r * a.hidden + i : nullptr;
  math::Vec<T, V> add{}, own{};
  if (mine) {
    add = math::load<T, V>(res);
    own = math::load<T, V>(a.x + r * a.hidden + i);
  }
  float acc[V] = {};
  bool ok = true;
  for (int q = 0; q < a.nranks && mine && ok; ++q) {
    math::Vec<T, V> v = own;
    if (q != a.rank) ok = poll_posted<V>(p, a, posted_row(a, set, q, r) + i, q, block, seq, &v);
    for (int k = 0; k < V; ++k) acc[k] = q == 0 ? math::to_float(v.e[k]) : acc[k] + math::to_float(v.e[k]);
  }
  if (!p.sync_and(ok)) return false;
  arrived();
  typename P::Accumulator squares = 0;
  math::Vec<T, V> sum;
  for (int k = 0; k < V; ++k) {
    sum.e[k] = math::Round<T>::from(acc[k] + math::to_float(add.e[k]));
    const typename P::Accumulator e = math::to_float(sum.e[k]);
    squares += e * e;
  }
  if (mine) math::store<T, V>(res, sum);
  const float scale = math::rms_scale(p.block_sum(squares, smem), a.hidden, a.epsilon);
  if (!mine) return true;
  math::Vec<T, V> y;
  for (int k = 0; k < V; ++k) {
    y.e[k] = math::Round<T>::from(math::to_float(sum.e[k]) * scale * math::to_float(w.e[k]));
  }
  math::store<T, V>(a.out + r * a.hidden + i, y);
  empty_vector<V>(p, a, set, r, i);
  return true;
}

// One block of a Lamport call. Row by row: post row j if not yet posted,
// wait until every peer's row j arrived, post the rows up to j+lag, then
// reduce row j. So the NVLink stores of the rows ahead overlap the local
// reads and writes of the one reduced (posting every row first left the
// interconnect idle while the rows were reduced; one row ahead measured
// fastest, docs/fused.md), and the first row goes alone: posting rows 0 and
// 1 together made row 0 arrive only with row 1, the link idle meanwhile
// while nothing was reduced.
//
// With Args::post_slices = S > 1 (rows one block holds, out != x), each row group
// has S blocks: `slice` 0 reduces and posts the first S-th of each row, the
// others only post their S-th of every row of the group and end, so a
// row's NVLink stores leave from S multiprocessors (docs/fused.md, "Small
// calls"). `blocks` counts row groups.
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void lamport(P& p, const Args<T>& a, int block, int blocks, float* smem, int slice = 0) {
  const uint32_t seq = call_number(p, a);
  const uint32_t set = seq % static_cast<uint32_t>(kLamportSets);
  const int slices = slices_of(a);
  if (slice > 0) {
    for (int64_t r = block; r < a.tokens; r += blocks) post_row<V>(p, a, r, set, slice, slices);
    finish(p, a, blocks * slices, seq);
    return;
  }
  const int64_t ahead = static_cast<int64_t>(a.lag) * blocks;
  const bool held = a.hidden <= static_cast<int64_t>(p.threads()) * V;  // a row in registers
  math::Vec<T, V> w{};
  if (held && static_cast<int64_t>(p.thread()) * V < a.hidden) w = math::load<T, V>(a.weight + p.thread() * V);
  int64_t next = block;  // the next row this block posts
  auto post_through = [&](int64_t last) {
    for (; next < a.tokens && next <= last; next += blocks) post_row<V>(p, a, next, set, 0, slices);
  };
  for (int64_t r = block; r < a.tokens; r += blocks) {
    post_through(r);
    auto arrived = [&] { post_through(r + ahead); };
    const bool ok = held ? take_row_held<V>(p, a, r, set, block, seq, w, smem, arrived)
                         : take_row<V>(p, a, r, set, block, seq, smem, arrived);
    if (!ok) break;
  }
  finish(p, a, blocks * slices, seq);
}

// The residual + RMSNorm of rows already reduced (the fallback path, after
// its allreduce into `out`): residual = T(reduced + residual), out = norm.
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE void local_rows(P& p, const T* reduced, T* residual, const T* weight, T* out, int64_t tokens,
                                   int64_t hidden, float epsilon, int block, int blocks, float* smem) {
  for (int64_t r = block; r < tokens; r += blocks) {
    const T* src[1] = {reduced + r * hidden};
    T* res = residual + r * hidden;
    math::norm_row<V>(p, src, 1, res, res, weight, out + r * hidden, hidden, epsilon, smem);
  }
}

}  // namespace strata::fused::proto
