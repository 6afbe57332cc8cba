#include "topology/levels.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace strata::topo::detail {
namespace {

using Key = std::tuple<int, int, int>;  // (node, package, gcd), cut to the level's depth

struct Candidate {
  const char* name;
  LinkClass link;
  int depth;  // coordinates that identify a group: 2 (node, package), 1 (node) or 0 (none)
};

Key cut(const Place& p, int depth) {
  return Key(depth > 0 ? p.node : 0, depth > 1 ? p.package : 0, depth > 2 ? p.gcd : 0);
}

// Does some group (coordinates up to `depth`) hold more than one unit
// (coordinates up to depth + 1)?
bool splits(const std::vector<Place>& places, int depth) {
  std::map<Key, std::set<Key>> units;
  for (const Place& p : places) {
    auto& u = units[cut(p, depth)];
    u.insert(cut(p, depth + 1));
    if (u.size() > 1) return true;
  }
  return false;
}

// Dense ids of `keys` in order of first appearance.
template <class K>
std::vector<int> dense_ids(const std::vector<K>& keys) {
  std::map<K, int> ids;
  std::vector<int> out(keys.size());
  for (size_t r = 0; r < keys.size(); ++r) {
    out[r] = ids.emplace(keys[r], static_cast<int>(ids.size())).first->second;
  }
  return out;
}

// Index of each rank among the ranks with the same id, in rank order.
std::vector<int> index_within(const std::vector<int>& ids) {
  std::map<int, int> seen;
  std::vector<int> out(ids.size());
  for (size_t r = 0; r < ids.size(); ++r) out[r] = seen[ids[r]]++;
  return out;
}

void fill_sizes(Level* level, const std::vector<int>& group) {
  std::map<int, int> sizes;
  for (int g : group) ++sizes[g];
  level->groups = static_cast<int>(sizes.size());
  level->min_group_size = level->max_group_size = sizes.empty() ? 0 : sizes.begin()->second;
  for (const auto& s : sizes) {
    level->min_group_size = std::min(level->min_group_size, s.second);
    level->max_group_size = std::max(level->max_group_size, s.second);
  }
}

}  // namespace

std::vector<LevelPlan> plan_levels(const std::vector<Place>& places, LinkClass package_link) {
  const Candidate candidates[] = {
      {"gcd", LinkClass::die, 2}, {"package", package_link, 1}, {"node", LinkClass::network, 0}};
  std::vector<LevelPlan> plans;
  for (const Candidate& c : candidates) {
    if (!splits(places, c.depth)) continue;
    LevelPlan plan;
    plan.level.name = c.name;
    plan.level.link = c.link;
    std::vector<Key> keys;
    keys.reserve(places.size());
    for (const Place& p : places) keys.push_back(cut(p, c.depth));
    plan.group = dense_ids(keys);
    fill_sizes(&plan.level, plan.group);
    plans.push_back(std::move(plan));
  }
  // Parents, positions and cross sets, from the fastest level up: p_0 is the
  // index in group(0), p_i (i > 0) the index in cross(i-1); cross(i) holds
  // the ranks of one level-(i+1) group with the same p_0..p_i.
  const size_t n = places.size();
  std::vector<std::vector<int>> vectors(n);  // p_0..p_i of each rank
  for (size_t i = 0; i < plans.size(); ++i) {
    LevelPlan& plan = plans[i];
    plan.parent = i + 1 < plans.size() ? plans[i + 1].group : std::vector<int>(n, 0);
    plan.position = index_within(i == 0 ? plan.group : plans[i - 1].cross);
    std::vector<std::pair<int, std::vector<int>>> cross_keys(n);
    for (size_t r = 0; r < n; ++r) {
      vectors[r].push_back(plan.position[r]);
      cross_keys[r] = {plan.parent[r], vectors[r]};
    }
    plan.cross = dense_ids(cross_keys);
    std::vector<int> in_group = index_within(plan.group);
    plan.leader.resize(n);
    for (size_t r = 0; r < n; ++r) plan.leader[r] = in_group[r] == 0 ? 1 : 0;
  }
  return plans;
}

}  // namespace strata::topo::detail
