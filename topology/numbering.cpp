#include "topology/numbering.hpp"

#include <map>
#include <utility>

namespace strata::topo::detail {
namespace {

// Numbers labels by first appearance, separately under each parent number.
class FirstAppearance {
 public:
  int number(int parent, const std::string& label) {
    auto found = ids_.find({parent, label});
    if (found != ids_.end()) {
      return found->second;
    }
    int id = next_[parent]++;
    ids_.emplace(std::make_pair(parent, label), id);
    return id;
  }

 private:
  std::map<std::pair<int, std::string>, int> ids_;
  std::map<int, int> next_;
};

}  // namespace

void number_places(const std::vector<PlaceKey>& keys, std::vector<Place>* places) {
  places->resize(keys.size());
  FirstAppearance nodes;
  FirstAppearance packages;  // parent: node
  FirstAppearance gcds;      // parent: the package's global index
  FirstAppearance global_packages;
  for (size_t r = 0; r < keys.size(); ++r) {
    Place& p = (*places)[r];
    p.rank = static_cast<int>(r);
    p.node = nodes.number(0, keys[r].node);
    p.package = packages.number(p.node, keys[r].package);
    // One number per (node, package) pair, so dies are counted per package.
    int package_id = global_packages.number(0, std::to_string(p.node) + '/' + std::to_string(p.package));
    p.gcd = gcds.number(package_id, keys[r].gcd);
  }
}

}  // namespace strata::topo::detail
