// Small machines for the cost-model tests, with round figures so that the
// expected times can be worked out by hand in the tests.
#pragma once

#include "collectives/model/cost_model.hpp"

#include <string>

namespace strata::coll::model::test {

inline LevelShape level(const std::string& name, int fanout, double gbps, double alpha_us = 0, double call_us = 0,
                        bool per_node = false) {
  LevelShape l;
  l.name = name;
  l.fanout = fanout;
  l.link.gbps = gbps;
  l.link.alpha_us = alpha_us;
  l.link.call_us = call_us;
  l.link.per_node = per_node;
  return l;
}

inline Machine machine(std::initializer_list<LevelShape> levels, bool device = true) {
  Machine m;
  m.levels = levels;
  m.device = device;
  return m;
}

// Frontier as docs/scaling.md describes it, `nodes` nodes.
inline Machine frontier(int nodes) {
  return machine({level("gcd", 2, 200, 2, 5), level("package", 4, 50, 3, 5), level("node", nodes, 100, 5, 5, true)});
}

}  // namespace strata::coll::model::test
