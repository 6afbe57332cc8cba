#include "topology/topo_oracle.hpp"

#include <algorithm>
#include <cstdio>

namespace topo_oracle {
namespace {

// Do ranks a and b share a group of the level named `name`?
bool same_group(const std::string& name, const Coord& a, const Coord& b) {
  if (name == "gcd") return a.node == b.node && a.package == b.package;
  if (name == "package") return a.node == b.node;
  return true;  // node: everyone
}

// Are a and b the same unit below that level (die, package, node)?
bool same_unit(const std::string& name, const Coord& a, const Coord& b) {
  if (name == "gcd") return a.node == b.node && a.package == b.package && a.gcd == b.gcd;
  if (name == "package") return a.node == b.node && a.package == b.package;
  return a.node == b.node;
}

bool kept(const std::string& name, const std::vector<Coord>& c) {
  for (size_t a = 0; a < c.size(); ++a) {
    for (size_t b = 0; b < c.size(); ++b) {
      if (same_group(name, c[a], c[b]) && !same_unit(name, c[a], c[b])) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<OracleLevel> levels_of(const std::vector<Coord>& c) {
  const int n = static_cast<int>(c.size());
  std::vector<OracleLevel> levels;
  for (const char* name : {"gcd", "package", "node"}) {
    if (!kept(name, c)) continue;
    OracleLevel l;
    l.name = name;
    l.group.resize(c.size());
    for (int r = 0; r < n; ++r) {
      for (int s = 0; s < n; ++s) {
        if (same_group(name, c[r], c[s])) l.group[r].push_back(s);
      }
    }
    l.min_size = n;
    for (int r = 0; r < n; ++r) {
      const int size = static_cast<int>(l.group[r].size());
      l.min_size = std::min(l.min_size, size);
      l.max_size = std::max(l.max_size, size);
      if (l.group[r].front() == r) ++l.groups;
    }
    levels.push_back(std::move(l));
  }
  // Position vectors: p_0 = index in group(0); p_i = index in cross(i-1);
  // cross(i) = the ranks of group(i+1) (everyone above the top) with the
  // same p_0..p_i.
  std::vector<std::vector<int>> vec(c.size());
  for (size_t i = 0; i < levels.size(); ++i) {
    OracleLevel& l = levels[i];
    for (int r = 0; r < n; ++r) {
      const std::vector<int>& within = i == 0 ? l.group[r] : levels[i - 1].cross[r];
      vec[r].push_back(static_cast<int>(std::find(within.begin(), within.end(), r) - within.begin()));
    }
    l.cross.resize(c.size());
    l.leaders.resize(c.size());
    for (int r = 0; r < n; ++r) {
      for (int s = 0; s < n; ++s) {
        const bool same_parent = i + 1 == levels.size() || same_group(levels[i + 1].name, c[r], c[s]);
        if (same_parent && vec[s] == vec[r]) l.cross[r].push_back(s);
        const bool s_first = l.group[s].front() == s;
        if (l.group[r].front() == r && same_parent && s_first) l.leaders[r].push_back(s);
      }
    }
  }
  return levels;
}

std::vector<Coord> coords_of_spec(const std::string& spec, int ranks) {
  std::vector<Coord> out;
  int n = 0, p = 0, g = 0;
  char tail = 0;
  if (spec.find('.') == std::string::npos && std::sscanf(spec.c_str(), "%dx%dx%d%c", &n, &p, &g, &tail) == 3) {
    for (int r = 0; r < ranks; ++r) out.push_back({r / (p * g), (r / g) % p, r % g});
    return out;
  }
  size_t at = 0;
  while (at < spec.size()) {
    Coord c;
    int used = 0;
    if (std::sscanf(spec.c_str() + at, "%d.%d.%d%n", &c.node, &c.package, &c.gcd, &used) != 3) return {};
    out.push_back(c);
    at += static_cast<size_t>(used) + 1;  // the comma
  }
  return out;
}

}  // namespace topo_oracle
