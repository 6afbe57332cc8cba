// Shapes derived from a Machine that every algorithm needs: ranks below a
// level, ranks of a node, the bandwidth one rank gets at a level, and the
// effective link of a flat ring or tree over several levels.
#pragma once

#include "collectives/model/cost_model.hpp"

namespace strata::coll::model::detail {

// The product of the fanouts of levels 0..i-1 (1 for level 0): the ranks of
// one level-(i-1) group, i.e. how many shards a hierarchical step at level i
// has already split the buffer into.
double ranks_below(const Machine& m, size_t i);

// Ranks of one node: the product of the fanouts below the first per_node
// level (every rank when there is none).
double ranks_per_node(const Machine& m);

// Index of the first per_node level whose fanout is above 1; -1 when the
// machine is one node.
int network_level(const Machine& m);

// The bandwidth one rank gets at `level` when `crossers` ranks of its node
// send across that level at the same time, each its own data: the per-rank
// figure, or the node's injection bandwidth divided among the crossers.
double rank_gbps(const LevelShape& level, double crossers);

// The link a flat ring (or chain, or tree) over all ranks sees: every step
// waits for its slowest edge, so the largest alpha, the smallest bandwidth
// and the largest call cost of the levels with more than one member. A
// per_node level counts with one crosser per node: the ring leaves and
// enters each node once (NCCL splits that edge over channels and NICs).
LinkFigures ring_link(const Machine& m);

// The machine without its one-member levels (they move nothing).
Machine active_levels(const Machine& m);

// ceil(log2(n)) for n >= 1.
int ceil_log2(double n);

}  // namespace strata::coll::model::detail
