// Flat algorithms: every rank in one ring, one recursive pattern or one tree.
#include "collectives/model/algorithms.hpp"
#include "collectives/model/levels.hpp"

#include <algorithm>
#include <cmath>

namespace strata::coll::model::detail {
namespace {

constexpr double kUsPerGB = 1e6 / 1e9;  // bytes / (GB/s) -> µs: bytes * 1e-3 / gbps

double transfer_us(double bytes, double gbps) { return bytes * kUsPerGB / gbps; }

// One step of a ring (or chain) over n ranks: alpha plus the bytes at the
// ring's bandwidth.
struct Ring {
  LinkFigures link;
  double n;
  double steps_us(double steps, double bytes) const { return steps * link.alpha_us + transfer_us(bytes, link.gbps); }
};

// The level a recursive step between ranks `distance` apart crosses (ranks
// of a level group are contiguous): the lowest level whose groups are wider
// than the distance.
size_t level_of_distance(const Machine& m, double distance) {
  for (size_t i = 0; i < m.levels.size(); ++i) {
    if (distance < ranks_below(m, i + 1)) return i;
  }
  return m.levels.size() - 1;
}

// One pairwise exchange of `bytes` between ranks `distance` apart, every
// rank at once (crossers: all ranks of a node) or only the tree's senders
// (one per node: a binomial tree sent farthest first has at most one sender
// per node on a network step).
double pair_step_us(const Machine& m, double distance, double bytes, bool all_ranks) {
  const LevelShape& l = m.levels[level_of_distance(m, distance)];
  const double crossers = all_ranks ? ranks_per_node(m) : 1.0;
  return l.link.alpha_us + transfer_us(bytes, rank_gbps(l, crossers));
}

// Recursive halving (reduce-scatter of `bytes`, nearest partner first so the
// largest halves use the fastest links); recursive doubling of an allgather
// moves the same (distance, bytes) pairs in the mirrored order.
double halving_us(const Machine& m, double p, double bytes) {
  double t = 0;
  for (double d = 1; d < p; d *= 2) t += pair_step_us(m, d, bytes / (2 * d), true);
  return t;
}

// Binomial tree of ceil(log2 n) steps, each moving the whole buffer.
double binomial_us(const Machine& m, double n, double bytes) {
  double t = 0;
  for (double d = 1; d < n; d *= 2) t += pair_step_us(m, d, bytes, false);
  return t;
}

double max_call_us(const Machine& m) { return ring_link(m).call_us; }

}  // namespace

double ring_us(Collective c, double bytes, const Machine& m) {
  const Ring r{ring_link(m), static_cast<double>(m.ranks())};
  const double share = (r.n - 1) / r.n * bytes;  // what each rank sends in one reduce-scatter or allgather pass
  switch (c) {
    case Collective::allreduce: return r.link.call_us + r.steps_us(2 * (r.n - 1), 2 * share);
    case Collective::reduce_scatter:
    case Collective::allgather: return r.link.call_us + r.steps_us(r.n - 1, share);
    case Collective::broadcast:
    case Collective::reduce:
      // van de Geijn: binomial scatter (reduce: gather) of the pieces, then a
      // ring allgather (reduce: a ring reduce-scatter first).
      return r.link.call_us + r.steps_us(ceil_log2(r.n), share) + r.steps_us(r.n - 1, share);
  }
  return 0;
}

double recursive_us(Collective c, double bytes, const Machine& m) {
  const double n = m.ranks();
  const double p = std::exp2(std::floor(std::log2(n)));  // the power of two the pattern runs on
  const bool fold = p < n;  // the extra ranks hand their data to a neighbour first and get the result last
  const double call = max_call_us(m);
  switch (c) {
    case Collective::allreduce:
      return call + 2 * halving_us(m, p, bytes) + (fold ? 2 * pair_step_us(m, 1, bytes, true) : 0);
    case Collective::reduce_scatter:
      return call + halving_us(m, p, bytes) +
             (fold ? pair_step_us(m, 1, bytes, true) + pair_step_us(m, 1, bytes / n, true) : 0);
    case Collective::allgather:
      return call + halving_us(m, p, bytes) +
             (fold ? pair_step_us(m, 1, bytes / n, true) + pair_step_us(m, 1, bytes, true) : 0);
    case Collective::broadcast:
    case Collective::reduce: return call + binomial_us(m, n, bytes);
  }
  return 0;
}

double nccl_us(Collective c, double bytes, const Machine& m) {
  const Ring r{ring_link(m), static_cast<double>(m.ranks())};
  switch (c) {
    case Collective::allreduce: {
      const double ring = ring_us(c, bytes, m);
      const int net = network_level(m);
      if (net < 0) return ring;  // within a node NCCL's tree is a chain: rings win
      // NCCL's tree: a chain through the node's ranks, a (double) binary tree
      // between nodes; reduce up, broadcast down, each rank sending the whole
      // buffer both ways.
      const double ppn = ranks_per_node(m);
      const double nodes = r.n / ppn;
      const LinkFigures inner = ring_link(node_part(m));
      const LevelShape& top = m.levels[static_cast<size_t>(net)];
      const double gbps = ppn > 1 ? std::min(inner.gbps, top.link.gbps) : top.link.gbps;
      const double tree = r.link.call_us + 2 * (ceil_log2(nodes) * top.link.alpha_us + (ppn - 1) * inner.alpha_us) +
                          transfer_us(2 * bytes, gbps);
      return std::min(ring, tree);
    }
    case Collective::reduce_scatter:
    case Collective::allgather: return ring_us(c, bytes, m);
    case Collective::broadcast:
    case Collective::reduce:
      // A pipelined chain: n-1 hops of latency, the buffer once through the
      // slowest edge.
      return r.link.call_us + r.steps_us(r.n - 1, bytes);
  }
  return 0;
}

double library_us(Collective c, double bytes, const Machine& m) {
  if (m.device) return nccl_us(c, bytes, m);
  return std::min(ring_us(c, bytes, m), recursive_us(c, bytes, m));
}

}  // namespace strata::coll::model::detail
