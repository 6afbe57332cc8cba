#include "collectives/model/zero_step.hpp"

namespace strata::coll::model {
namespace {

// One call of `a` (or choose()'s pick for `chosen`), two_level falling back
// to flat where it does not apply (one node).
Result<double> call_us(Collective c, Algorithm a, double bytes, const Machine& m, bool chosen) {
  if (chosen) a = choose(c, bytes, m.device, m);
  Result<double> t = predict_us(c, a, bytes, m);
  if (t.status() == Status::not_supported && a == Algorithm::two_level) t = predict_us(c, Algorithm::library, bytes, m);
  return t;
}

struct Plan {
  Algorithm forward;   // gather over all ranks
  Algorithm backward;  // gather from the secondary partition within the node (or, zero3, over all ranks)
  Algorithm gradients;
  bool secondary;  // the backward gather runs within the node
};

Plan plan_of(ZeroScheme scheme) {
  switch (scheme) {
    case ZeroScheme::zero3: return {Algorithm::library, Algorithm::library, Algorithm::library, false};
    case ZeroScheme::zeropp: return {Algorithm::library, Algorithm::library, Algorithm::library, true};
    case ZeroScheme::two_level: return {Algorithm::two_level, Algorithm::library, Algorithm::two_level, true};
    case ZeroScheme::three_level:
    case ZeroScheme::chosen: return {Algorithm::hierarchical, Algorithm::hierarchical, Algorithm::hierarchical, true};
  }
  return {Algorithm::library, Algorithm::library, Algorithm::library, false};
}

}  // namespace

const char* to_string(ZeroScheme scheme) {
  switch (scheme) {
    case ZeroScheme::zero3: return "ZeRO-3 flat";
    case ZeroScheme::zeropp: return "ZeRO++ hpZ";
    case ZeroScheme::two_level: return "2-level";
    case ZeroScheme::three_level: return "3-level";
    case ZeroScheme::chosen: return "model's choice";
  }
  return "?";
}

Result<ZeroStepTimes> predict_zero_step(const ZeroModel& model, ZeroScheme scheme, const Machine& machine) {
  if (!(model.params > 0) || !(model.param_bytes > 0) || !(model.grad_bytes > 0) || model.layers < 1) {
    return Status::invalid_argument;
  }
  const Plan plan = plan_of(scheme);
  const bool chosen = scheme == ZeroScheme::chosen;
  const double layer_params = model.params / model.layers;
  const Machine node = plan.secondary ? node_part(machine) : machine;
  Result<double> fwd = call_us(Collective::allgather, plan.forward, layer_params * model.param_bytes, machine, chosen);
  Result<double> bwd = call_us(Collective::allgather, plan.backward, layer_params * model.param_bytes, node, chosen);
  Result<double> rs =
      call_us(Collective::reduce_scatter, plan.gradients, layer_params * model.grad_bytes, machine, chosen);
  for (const Result<double>* r : {&fwd, &bwd, &rs}) {
    if (!*r) return r->status();
  }
  ZeroStepTimes out;
  out.forward_gather_us = model.layers * fwd.value();
  out.backward_gather_us = model.layers * bwd.value();
  out.reduce_scatter_us = model.layers * rs.value();
  return out;
}

}  // namespace strata::coll::model
