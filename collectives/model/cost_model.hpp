// The alpha-beta cost model of the collectives: per level, a latency alpha
// (µs per message step) and a bandwidth beta (GB/s per direction of one
// rank's link at that level); per algorithm, the steps and bytes each level
// carries. It picks Algorithm::automatic's algorithm and predicts times for
// benchmarks (measured next to predicted) and for docs/scaling.md (machines
// we do not have, from their link figures).
//
// Independent of MPI: a machine is a list of level shapes.
#pragma once

#include <strata/collectives.hpp>
#include <strata/status.hpp>

#include <string>
#include <vector>

namespace strata::coll::model {

struct LinkFigures {
  double alpha_us = 0;   // per message step
  double gbps = 0;       // per direction, per rank (1e9 bytes/s)
};

struct LevelShape {
  std::string name;      // "gcd", "package", "node"
  int fanout = 1;        // members of one group at this level (the largest group)
  LinkFigures link;
};

// Levels fastest first; the product of the fanouts is the rank count.
struct Machine {
  std::vector<LevelShape> levels;
  int ranks() const;
};

// Link figures for a level from STRATA_COLL_LINKS ("name:GBps:us,..."), else
// the measured model file (strata-measure's "links" section), else defaults
// by link class name (die, gpu, pcie, shm, network), in that order.
LinkFigures link_figures(const std::string& level_name, const std::string& link_class, bool device);

// Predicted time in µs of one call moving `bytes` (the per-rank buffer of the
// collective: allreduce/broadcast/reduce count*size, reduce_scatter the full
// input, allgather the full output) with `algorithm` on `machine`.
// not_supported when the algorithm does not apply (e.g. two_level on one node).
Result<double> predict_us(Collective collective, Algorithm algorithm, double bytes, const Machine& machine);

// The cheapest applicable algorithm; `device`: only library (flat NCCL),
// hierarchical and two_level are candidates.
Algorithm choose(Collective collective, double bytes, bool device, const Machine& machine);

}  // namespace strata::coll::model
