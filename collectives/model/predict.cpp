// predict_us: checks the machine, drops one-member levels, dispatches.
#include "collectives/model/algorithms.hpp"
#include "collectives/model/levels.hpp"

#include "base/log.hpp"

#include <cmath>

namespace strata::coll::model {
namespace {

bool finite_at_least(double v, double lo) { return std::isfinite(v) && v >= lo; }

bool valid_figures(const Protocol& p) {
  return p.gbps > 0 && std::isfinite(p.gbps) && finite_at_least(p.alpha_us, 0) && finite_at_least(p.call_us, 0);
}

bool valid(const Machine& m, double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) return false;
  for (const LevelShape& l : m.levels) {
    const LinkFigures& f = l.link;
    if (l.fanout < 1 || !valid_figures(f.bulk())) return false;
    if (f.small.gbps != 0 && !valid_figures(f.small)) return false;
    for (const LinkFigures::ForCollective& c : f.by_collective) {
      if (c.set && !valid_figures(c.bulk)) return false;
      if (c.set && c.small.gbps != 0 && !valid_figures(c.small)) return false;
      if (c.set && !finite_at_least(c.small_below_bytes, 0)) return false;
    }
  }
  return true;
}

// The machine as one collective sees it: each level's figures fitted to
// that collective where it has them.
Machine for_collective(const Machine& m, Collective collective) {
  Machine out = m;
  for (LevelShape& l : out.levels) {
    const LinkFigures::ForCollective& c = l.link.by_collective[static_cast<size_t>(collective)];
    if (!c.set) continue;
    l.link.set_bulk(c.bulk);
    l.link.small = c.small;
  }
  return out;
}

// The size below which the collective's calls run in the small regime, as
// measured on the first level that knows it (calibration fits one level);
// 0: none measured.
double measured_switch(const Machine& m, Collective collective) {
  for (const LevelShape& l : m.levels) {
    const LinkFigures::ForCollective& c = l.link.by_collective[static_cast<size_t>(collective)];
    if (c.set && c.small_below_bytes > 0) return c.small_below_bytes;
  }
  return 0;
}

// The machine in its low-latency regime: each level's small-protocol
// figures where it has them (its bulk figures where not); false when no
// level has any.
bool small_regime(const Machine& m, Machine* out) {
  *out = m;
  bool any = false;
  for (LevelShape& l : out->levels) {
    if (l.link.small.gbps <= 0) continue;
    l.link.set_bulk(l.link.small);
    any = true;
  }
  return any;
}

Result<double> dispatch(Collective collective, Algorithm algorithm, double bytes, const Machine& m) {
  switch (algorithm) {
    case Algorithm::automatic:  // resolved by the caller
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
  if (!m.device) return dispatch(collective, algorithm, bytes, m);
  const Machine mc = for_collective(m, collective);
  Result<double> bulk = dispatch(collective, algorithm, bytes, mc);
  Machine small;
  if (!bulk || !small_regime(mc, &small)) return bulk;
  Result<double> low = dispatch(collective, algorithm, bytes, small);
  if (!low) return bulk;
  if (const double below = measured_switch(m, collective); below > 0) return bytes < below ? low : bulk;
  return low.value() < bulk.value() ? low : bulk;
}

}  // namespace strata::coll::model
