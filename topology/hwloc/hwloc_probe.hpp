// What hwloc says about the calling process: the NUMA node of its cores, the
// network interface nearest to its GPU (or its cores), and the PCI bridge its
// GPU hangs from. The only place in Strata that includes hwloc's headers is
// hwloc_probe.cpp; a build without hwloc compiles hwloc_stub.cpp instead.
#pragma once

#include <string>

namespace strata::topo::hw {

struct PciAddress {
  int domain = 0;
  int bus = 0;
  int device = 0;
};

struct Facts {
  int numa = -1;           // OS index of the NUMA node of the rank's cores; -1: unknown
  std::string nic;         // nearest OS network device (an openfabrics one preferred); "" when none
  std::string gpu_bridge;  // PCI address of the topmost non-host bridge above the GPU; "" when none
};

// True when this build has hwloc.
bool available() noexcept;

// Never fails: what cannot be found stays -1 / "". `gpu`: the rank's GPU, or
// null when it has none. The machine's tree is loaded once per process.
Facts probe(const PciAddress* gpu) noexcept;

}  // namespace strata::topo::hw
