#include "collectives/model/levels.hpp"

#include <algorithm>
#include <cmath>

namespace strata::coll::model {

int Machine::ranks() const {
  int n = 1;
  for (const LevelShape& l : levels) n *= std::max(1, l.fanout);
  return n;
}

namespace detail {

double ranks_below(const Machine& m, size_t i) {
  double below = 1;
  for (size_t j = 0; j < i && j < m.levels.size(); ++j) below *= std::max(1, m.levels[j].fanout);
  return below;
}

int network_level(const Machine& m) {
  for (size_t i = 0; i < m.levels.size(); ++i) {
    if (m.levels[i].link.per_node && m.levels[i].fanout > 1) return static_cast<int>(i);
  }
  return -1;
}

double ranks_per_node(const Machine& m) {
  const int net = network_level(m);
  return net < 0 ? static_cast<double>(m.ranks()) : ranks_below(m, static_cast<size_t>(net));
}

double rank_gbps(const LevelShape& level, double crossers) {
  return level.link.per_node ? level.link.gbps / std::max(1.0, crossers) : level.link.gbps;
}

LinkFigures ring_link(const Machine& m) {
  LinkFigures out;
  bool any = false;
  for (const LevelShape& l : m.levels) {
    if (l.fanout <= 1) continue;
    const double gbps = rank_gbps(l, 1);
    out.gbps = any ? std::min(out.gbps, gbps) : gbps;
    out.alpha_us = std::max(out.alpha_us, l.link.alpha_us);
    out.call_us = std::max(out.call_us, l.link.call_us);
    any = true;
  }
  return out;
}

Machine active_levels(const Machine& m) {
  Machine out;
  out.device = m.device;
  for (const LevelShape& l : m.levels) {
    if (l.fanout > 1) out.levels.push_back(l);
  }
  return out;
}

int ceil_log2(double n) { return n <= 1 ? 0 : static_cast<int>(std::ceil(std::log2(n) - 1e-9)); }

}  // namespace detail

Result<Machine> merge_within_node(const Machine& machine) {
  const int net = detail::network_level(machine);
  if (net < 1 || net != static_cast<int>(machine.levels.size()) - 1) return Status::not_supported;
  Machine inner = node_part(machine);
  LevelShape merged;
  merged.name = "node-internal";
  merged.fanout = inner.ranks();
  merged.link = detail::ring_link(inner);
  Machine out;
  out.device = machine.device;
  if (merged.fanout > 1) out.levels.push_back(merged);
  out.levels.push_back(machine.levels.back());
  if (out.levels.size() < 2) return Status::not_supported;
  return out;
}

Machine node_part(const Machine& machine) {
  Machine out;
  out.device = machine.device;
  const int net = detail::network_level(machine);
  const size_t end = net < 0 ? machine.levels.size() : static_cast<size_t>(net);
  for (size_t i = 0; i < end; ++i) {
    if (machine.levels[i].fanout > 1) out.levels.push_back(machine.levels[i]);
  }
  return out;
}

}  // namespace strata::coll::model
