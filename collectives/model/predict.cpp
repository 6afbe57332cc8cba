// predict_us: checks the machine, drops one-member levels, dispatches.
#include "collectives/model/algorithms.hpp"
#include "collectives/model/levels.hpp"

#include "base/log.hpp"

#include <cmath>

namespace strata::coll::model {
namespace {

bool valid(const Machine& m, double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) return false;
  for (const LevelShape& l : m.levels) {
    const LinkFigures& f = l.link;
    if (l.fanout < 1 || !(f.gbps > 0) || !std::isfinite(f.gbps) || !(f.alpha_us >= 0) || !std::isfinite(f.alpha_us) ||
        !(f.call_us >= 0) || !std::isfinite(f.call_us)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<double> predict_us(Collective collective, Algorithm algorithm, double bytes, const Machine& machine) {
  if (!valid(machine, bytes)) {
    STRATA_LOG(warn, kColl, "cost model: invalid machine or size (%g bytes); no prediction", bytes);
    return Status::invalid_argument;
  }
  const Machine m = detail::active_levels(machine);
  if (algorithm == Algorithm::automatic) algorithm = choose(collective, bytes, m.device, m);
  if (m.device && (algorithm == Algorithm::ring || algorithm == Algorithm::recursive)) return Status::not_supported;
  if (m.ranks() <= 1) return 0.0;
  switch (algorithm) {
    case Algorithm::automatic:  // resolved above
    case Algorithm::library: return detail::library_us(collective, bytes, m);
    case Algorithm::ring: return detail::ring_us(collective, bytes, m);
    case Algorithm::recursive: return detail::recursive_us(collective, bytes, m);
    case Algorithm::hierarchical: return detail::hierarchical_us(collective, bytes, m);
    case Algorithm::two_level: {
      Result<Machine> merged = merge_within_node(m);
      if (!merged) return merged.status();
      return detail::hierarchical_us(collective, bytes, merged.value());
    }
  }
  return Status::invalid_argument;
}

}  // namespace strata::coll::model
