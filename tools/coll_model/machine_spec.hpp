// Machine descriptions for strata-coll-model: presets and --levels specs,
// turned into a cost-model Machine for a given rank count.
#pragma once

#include "collectives/model/cost_model.hpp"

#include <string>
#include <vector>

namespace strata::tools {

// One level as written: "name:fanout[:GBps:alpha_us[:call_us]]". fanout 0
// stands for "N": whatever the rank count leaves for this level. Without
// figures the level takes link_figures(name, class, device). The link class
// comes from the name: gcd -> die, package -> gpu, node -> network, or the
// name itself when it is a class (die, gpu, pcie, shm, network).
struct LevelSpec {
  std::string name;
  int fanout = 0;
  bool has_figures = false;
  bool device_figures = false;  // the figures hold for device buffers only (a preset's GPU links)
  coll::model::LinkFigures link;
};

struct MachineSpec {
  std::string description;  // for the output's header
  std::vector<LevelSpec> levels;
};

// "frontier" or "h200x4"; invalid_argument for another name.
Result<MachineSpec> preset(const std::string& name);
// A --levels value; invalid_argument when malformed.
Result<MachineSpec> parse_levels(const std::string& text);

// The machine for `ranks` ranks: fixed fanouts fill from the fastest level
// (a rank count below a level's fanout makes that level partial and the
// ones above it single), the N level takes the rest. invalid_argument when
// the ranks do not fit.
Result<coll::model::Machine> build(const MachineSpec& spec, int ranks, bool device);

// The level link class for a level name.
std::string link_class_of(const std::string& name);

}  // namespace strata::tools
