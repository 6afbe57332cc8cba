// strata::topo::hw without hwloc: nothing is known.
#include "topology/hwloc/hwloc_probe.hpp"

namespace strata::topo::hw {

bool available() noexcept { return false; }

Facts probe(const PciAddress*) noexcept { return Facts{}; }

}  // namespace strata::topo::hw
