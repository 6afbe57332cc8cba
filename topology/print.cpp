// Topology::to_text and Topology::to_json: the node -> package -> gcd ->
// rank tree and the level table.
#include "topology/impl.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <sstream>

namespace strata::topo {
namespace {

// node -> package -> gcd -> ranks (in rank order).
using Tree = std::map<int, std::map<int, std::map<int, std::vector<int>>>>;

Tree tree_of(const std::vector<Place>& places) {
  Tree tree;
  for (const Place& p : places) tree[p.node][p.package][p.gcd].push_back(p.rank);
  return tree;
}

const char* source_of(const Topology::Impl& impl) {
  if (impl.emulated) return "emulated (STRATA_TOPOLOGY)";
  return impl.hwloc ? "discovered (MPI, GPU runtime, hwloc)" : "discovered (MPI, GPU runtime; no hwloc)";
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
std::string or_dash(int v) { return v < 0 ? "-" : std::to_string(v); }

// One rank of the tree; an emulated place has nothing but its coordinates.
std::string rank_line(const Place& p, bool emulated) {
  char line[512];
  if (emulated) {
    std::snprintf(line, sizeof line, "      rank %d", p.rank);
  } else {
    std::snprintf(line, sizeof line, "      rank %-4d device %-3s pci %-13s numa %-3s nic %s", p.rank,
                  or_dash(p.device).c_str(), or_dash(p.pci_bus).c_str(), or_dash(p.numa).c_str(),
                  or_dash(p.nic).c_str());
  }
  return line;
}

nlohmann::ordered_json rank_json(const Place& p) {
  return {{"rank", p.rank}, {"device", p.device}, {"pci_bus", p.pci_bus}, {"numa", p.numa}, {"nic", p.nic}};
}

nlohmann::ordered_json level_json(int index, const Level& l) {
  return {{"level", index},
          {"name", l.name},
          {"link", to_string(l.link)},
          {"groups", l.groups},
          {"min_group_size", l.min_group_size},
          {"max_group_size", l.max_group_size}};
}

}  // namespace

std::string Topology::to_text() const {
  const Impl& impl = *impl_;
  Tree tree = tree_of(impl.places);
  std::ostringstream out;
  out << "strata topology: " << impl.size << " ranks on " << tree.size() << (tree.size() == 1 ? " node, " : " nodes, ")
      << source_of(impl) << "\n";
  for (const auto& node : tree) {
    const Place& first = impl.places[static_cast<size_t>(node.second.begin()->second.begin()->second.front())];
    out << "node " << node.first << (first.host.empty() ? "" : "  " + first.host) << "\n";
    for (const auto& package : node.second) {
      out << "  package " << package.first << "\n";
      for (const auto& gcd : package.second) {
        out << "    gcd " << gcd.first << "\n";
        for (int r : gcd.second) out << rank_line(impl.places[static_cast<size_t>(r)], impl.emulated) << "\n";
      }
    }
  }
  if (impl.plans.empty()) {
    out << "levels: none (all ranks on one die: collectives run flat)\n";
    return out.str();
  }
  out << "levels (fastest first): " << impl.plans.size() << ", " << (uniform() ? "uniform" : "uneven") << "\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-5s %-8s %-8s %6s %5s %5s\n", "level", "name", "link", "groups", "min", "max");
  out << line;
  for (size_t i = 0; i < impl.plans.size(); ++i) {
    const Level& l = impl.plans[i].level;
    std::snprintf(line, sizeof line, "  %-5zu %-8s %-8s %6d %5d %5d\n", i, l.name.c_str(), to_string(l.link), l.groups,
                  l.min_group_size, l.max_group_size);
    out << line;
  }
  return out.str();
}

std::string Topology::to_json() const {
  const Impl& impl = *impl_;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const auto& node : tree_of(impl.places)) {
    nlohmann::ordered_json packages = nlohmann::ordered_json::array();
    std::string host;
    for (const auto& package : node.second) {
      nlohmann::ordered_json gcds = nlohmann::ordered_json::array();
      for (const auto& gcd : package.second) {
        nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
        for (int r : gcd.second) {
          const Place& p = impl.places[static_cast<size_t>(r)];
          if (host.empty()) host = p.host;
          ranks.push_back(rank_json(p));
        }
        gcds.push_back({{"gcd", gcd.first}, {"ranks", ranks}});
      }
      packages.push_back({{"package", package.first}, {"gcds", gcds}});
    }
    nodes.push_back({{"node", node.first}, {"host", host}, {"packages", packages}});
  }
  nlohmann::ordered_json levels = nlohmann::ordered_json::array();
  for (size_t i = 0; i < impl.plans.size(); ++i) levels.push_back(level_json(static_cast<int>(i), impl.plans[i].level));
  nlohmann::ordered_json out = {{"ranks", impl.size},  {"emulated", impl.emulated},
                                {"hwloc", impl.hwloc}, {"uniform", uniform()},
                                {"nodes", nodes},      {"levels", levels}};
  return out.dump(2);
}

}  // namespace strata::topo
