// The time of one call of each algorithm, in µs, on a validated machine
// (fanouts >= 1, bandwidths > 0); `bytes` as in predict_us. Formulas and
// assumptions: docs/scaling.md, "The model".
#pragma once

#include "collectives/model/cost_model.hpp"

namespace strata::coll::model::detail {

// Flat ring over all ranks in rank order (ranks of a node contiguous).
double ring_us(Collective c, double bytes, const Machine& m);
// Flat recursive halving/doubling (Rabenseifner) and binomial trees.
double recursive_us(Collective c, double bytes, const Machine& m);
// NCCL/RCCL over all ranks: ring; allreduce the better of ring and tree;
// broadcast and reduce a pipelined chain.
double nccl_us(Collective c, double bytes, const Machine& m);
// `library`: nccl_us on device, the better of ring and recursive on host.
double library_us(Collective c, double bytes, const Machine& m);
// Every level, fastest first, the library on each level's communicator.
double hierarchical_us(Collective c, double bytes, const Machine& m);

}  // namespace strata::coll::model::detail
