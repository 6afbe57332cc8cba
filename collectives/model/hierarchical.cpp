// Hierarchical algorithms: one step per level, each the library's collective
// on that level's communicator (NCCL on device, MPI on host).
//
// allreduce       reduce-scatter on levels 0..k-2 (fastest first), allreduce
//                 of the remaining shard on the top level, allgather back
// reduce_scatter  reduce-scatter on every level, fastest first
// allgather       allgather on every level, top first
// broadcast       broadcast among the root's position on the top level, then
//                 down each level; reduce the mirror image
//
// A step on level i moves the buffer already split by the levels below:
// bytes / ranks_below(i). On a per_node level every rank of the node runs
// its own step at once (allreduce, reduce_scatter, allgather), so each gets
// node bandwidth / ranks per node; broadcast and reduce cross with one rank.
#include "collectives/model/algorithms.hpp"
#include "collectives/model/levels.hpp"

#include <algorithm>

namespace strata::coll::model::detail {
namespace {

// Level i alone, with the bandwidth one rank gets there when `crossers`
// ranks of its node run the step at the same time.
Machine step_machine(const Machine& m, size_t i, double crossers) {
  Machine step;
  step.device = m.device;
  LevelShape l = m.levels[i];
  l.link.gbps = rank_gbps(l, crossers);  // per_node stays: NCCL's tree still sees nodes
  step.levels.push_back(l);
  return step;
}

// Every rank of a node crosses at once on a per_node level.
double all_crossers(const Machine& m, size_t i) { return std::min(ranks_below(m, i), ranks_per_node(m)); }

}  // namespace

double hierarchical_us(Collective c, double bytes, const Machine& m) {
  const size_t k = m.levels.size();
  if (k == 0) return 0;
  const size_t top = k - 1;
  double t = 0;
  switch (c) {
    case Collective::allreduce:
    case Collective::reduce_scatter:
    case Collective::allgather: {
      // The split steps below the top: a reduce-scatter (allreduce, reduce_scatter)
      // or an allgather (allgather); allreduce adds the mirrored allgather.
      for (size_t i = 0; i < top; ++i) {
        const Machine step = step_machine(m, i, all_crossers(m, i));
        const double piece = bytes / ranks_below(m, i);
        if (c == Collective::allgather) {
          t += library_us(Collective::allgather, piece, step);
        } else {
          t += library_us(Collective::reduce_scatter, piece, step);
          if (c == Collective::allreduce) t += library_us(Collective::allgather, piece, step);
        }
      }
      return t + library_us(c, bytes / ranks_below(m, top), step_machine(m, top, all_crossers(m, top)));
    }
    case Collective::broadcast:
    case Collective::reduce:
      for (size_t i = 0; i < k; ++i) t += library_us(c, bytes, step_machine(m, i, 1));
      return t;
  }
  return 0;
}

}  // namespace strata::coll::model::detail
