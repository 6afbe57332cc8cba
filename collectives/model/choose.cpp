// choose: the cheapest flat algorithm, unless a hierarchical one is
// predicted at least kHierarchyMargin faster (ties and near ties stay flat:
// the hierarchy costs more calls and the model's error must not flip them).
#include "collectives/model/cost_model.hpp"

#include <initializer_list>
#include <limits>

namespace strata::coll::model {
namespace {

struct Best {
  Algorithm algorithm = Algorithm::library;
  double us = std::numeric_limits<double>::infinity();
  void consider(Collective c, Algorithm a, double bytes, const Machine& m) {
    Result<double> t = predict_us(c, a, bytes, m);
    if (t && t.value() < us) {  // strictly: earlier candidates win ties
      us = t.value();
      algorithm = a;
    }
  }
};

}  // namespace

Algorithm choose(Collective collective, double bytes, bool device, const Machine& machine, bool library_ok) {
  Machine m = machine;
  m.device = device;
  Best flat;
  if (library_ok || device) flat.consider(collective, Algorithm::library, bytes, m);  // NCCL takes every type
  if (!device) {
    for (Algorithm a : {Algorithm::ring, Algorithm::recursive}) flat.consider(collective, a, bytes, m);
  }
  // Without any flat prediction (an invalid machine) take the safest flat one.
  if (flat.us == std::numeric_limits<double>::infinity())
    return library_ok || device ? Algorithm::library : Algorithm::ring;
  Best hier;
  for (Algorithm a : {Algorithm::hierarchical, Algorithm::two_level}) hier.consider(collective, a, bytes, m);
  return hier.us <= (1.0 - kHierarchyMargin) * flat.us ? hier.algorithm : flat.algorithm;
}

Algorithm choose(Collective collective, double bytes, bool device, const Machine& machine) {
  return choose(collective, bytes, device, machine, true);
}

}  // namespace strata::coll::model
