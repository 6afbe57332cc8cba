#include "tools/coll_model/machine_spec.hpp"

#include <cstdlib>
#include <sstream>

namespace strata::tools {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

bool to_double(const std::string& s, double* out) {
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

}  // namespace

std::string link_class_of(const std::string& name) {
  if (name == "gcd") return "die";
  if (name == "package") return "gpu";
  if (name == "node") return "network";
  return name;  // a class name, or an unknown name (then the network's defaults: the slowest)
}

Result<MachineSpec> parse_levels(const std::string& text) {
  MachineSpec spec;
  spec.description = "levels " + text;
  for (const std::string& item : split(text, ',')) {
    const std::vector<std::string> f = split(item, ':');
    if (f.size() != 2 && f.size() != 4 && f.size() != 5) return Status::invalid_argument;
    LevelSpec l;
    l.name = f[0];
    if (l.name.empty()) return Status::invalid_argument;
    double fanout = 0;
    if (f[1] != "N" && (!to_double(f[1], &fanout) || fanout < 1 || fanout != static_cast<int>(fanout))) {
      return Status::invalid_argument;
    }
    l.fanout = static_cast<int>(fanout);
    if (f.size() > 2) {
      l.has_figures = true;
      if (!to_double(f[2], &l.link.gbps) || !(l.link.gbps > 0) || !to_double(f[3], &l.link.alpha_us) ||
          l.link.alpha_us < 0) {
        return Status::invalid_argument;
      }
      l.link.call_us = coll::model::default_link_figures(link_class_of(l.name), true).call_us;
      if (f.size() == 5 && (!to_double(f[4], &l.link.call_us) || l.link.call_us < 0)) return Status::invalid_argument;
      l.link.per_node = link_class_of(l.name) == "network";
    }
    spec.levels.push_back(l);
  }
  int open = 0;
  for (const LevelSpec& l : spec.levels) open += l.fanout == 0 ? 1 : 0;
  if (spec.levels.empty() || open > 1) return Status::invalid_argument;
  return spec;
}

Result<MachineSpec> preset(const std::string& name) {
  // Frontier (OLCF user guide): two GCDs of an MI250X at 200 GB/s, GCDs of
  // different packages at 50-100 GB/s (we take one link: 50), four 25 GB/s
  // Slingshot NICs per node (100 GB/s per node). Latencies and call costs
  // are our assumptions (docs/scaling.md).
  if (name == "frontier") {
    Result<MachineSpec> s = parse_levels("gcd:2:200:2:5,package:4:50:3:5,node:N:100:5:5");
    if (!s) return s;
    s.value().description = "Frontier: 2 GCDs x 4 MI250X per node, 4 x 25 GB/s NICs per node";
    // GPU links say nothing of host buffers (those take link_figures()); the NICs serve both.
    s.value().levels[0].device_figures = true;
    s.value().levels[1].device_figures = true;
    return s;
  }
  // The lent H200 nodes: four GPUs fully connected by NVLink (NV18); more
  // ranks than four add nodes with the default network figure.
  if (name == "h200x4") {
    Result<MachineSpec> s = parse_levels("package:4,node:N");
    if (s) s.value().description = "H200 x4 (NV18) per node; figures from link_figures()";
    return s;
  }
  return Status::invalid_argument;
}

Result<coll::model::Machine> build(const MachineSpec& spec, int ranks, bool device) {
  if (ranks < 1) return Status::invalid_argument;
  coll::model::Machine m;
  m.device = device;
  int left = ranks;
  for (const LevelSpec& s : spec.levels) {
    coll::model::LevelShape l;
    l.name = s.name;
    const bool given = s.has_figures && (device || !s.device_figures);
    l.link = given ? s.link : coll::model::link_figures(s.name, link_class_of(s.name), device);
    l.fanout = 1;
    if (s.fanout > 0 && left >= s.fanout) {
      if (left % s.fanout != 0) return Status::invalid_argument;
      l.fanout = s.fanout;
    } else if (s.fanout > 0) {
      l.fanout = left;  // fewer ranks than one group: a partial level
    }
    left /= l.fanout;
    m.levels.push_back(l);
  }
  // The open level (N) takes what the fixed ones left.
  for (size_t i = 0; i < spec.levels.size() && left > 1; ++i) {
    if (spec.levels[i].fanout == 0) {
      m.levels[i].fanout = left;
      left = 1;
    }
  }
  if (left != 1) return Status::invalid_argument;
  return m;
}

}  // namespace strata::tools
