// One ZeRO-3 training step's collectives, predicted by the cost model:
// the parameters gathered before each layer's forward and again before its
// backward, the gradients reduce-scattered after its backward (no compute,
// no overlap: communication time only). docs/scaling.md is its output for
// Frontier and a 20B-parameter model.
#pragma once

#include "collectives/model/cost_model.hpp"

namespace strata::coll::model {

struct ZeroModel {
  double params = 20e9;    // parameters
  double param_bytes = 2;  // bytes of a gathered parameter (bf16; fp32 master weights stay sharded)
  double grad_bytes = 2;   // bytes of a reduced gradient (bf16)
  int layers = 44;         // one gather (forward), one gather (backward), one reduce-scatter per layer
};

enum class ZeroScheme {
  zero3,        // every collective flat (NCCL over all ranks)
  zeropp,       // ZeRO++ hpZ without quantization: forward gather and gradients flat, backward
                // gather from the secondary partition within the node (flat there)
  two_level,    // forward gather and gradients two_level (node, then nodes); backward gather
                // from the secondary partition within the node (flat there: one merged level)
  three_level,  // forward gather and gradients hierarchical over gcd, package, node; backward
                // gather from the secondary partition, hierarchical within the node
  chosen,       // the secondary partition within the node, each call what choose() picks
};
const char* to_string(ZeroScheme scheme);

struct ZeroStepTimes {
  double forward_gather_us = 0;   // all layers
  double backward_gather_us = 0;  // all layers
  double reduce_scatter_us = 0;   // all layers
  double total_us() const { return forward_gather_us + backward_gather_us + reduce_scatter_us; }
};

// invalid_argument for a malformed model or machine.
Result<ZeroStepTimes> predict_zero_step(const ZeroModel& model, ZeroScheme scheme, const Machine& machine);

}  // namespace strata::coll::model
