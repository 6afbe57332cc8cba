#include "topology/hwloc/hwloc_probe.hpp"

#include "base/log.hpp"

#include <hwloc.h>

#include <cstdio>

namespace strata::topo::hw {
namespace {

// The machine's tree with the important I/O devices, loaded once.
class Machine {
 public:
  static hwloc_topology_t tree() {
    static Machine machine;
    return machine.topology_;
  }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

 private:
  Machine() {
    if (hwloc_topology_init(&topology_) != 0) {
      topology_ = nullptr;
      STRATA_LOG(info, kTopo, "hwloc_topology_init failed: no NUMA or NIC information");
      return;
    }
    hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topology_) != 0) {
      hwloc_topology_destroy(topology_);
      topology_ = nullptr;
      STRATA_LOG(info, kTopo, "hwloc_topology_load failed: no NUMA or NIC information");
    }
  }
  ~Machine() {
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
  }
  hwloc_topology_t topology_ = nullptr;
};

// The one NUMA node whose cores intersect `set`; -1 when none or several.
int single_numa(hwloc_topology_t t, hwloc_const_bitmap_t set) {
  int found = -1;
  int count = 0;
  for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, nullptr); numa != nullptr;
       numa = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, numa)) {
    if (numa->cpuset != nullptr && hwloc_bitmap_intersects(set, numa->cpuset)) {
      found = static_cast<int>(numa->os_index);
      ++count;
    }
  }
  return count == 1 ? found : -1;
}

// The binding decides when it lies within one NUMA node; an unbound rank gets
// the node of the core its thread last ran on (a snapshot).
int numa_of_process(hwloc_topology_t t) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) return -1;
  int numa = -1;
  if (hwloc_get_cpubind(t, set, 0) == 0) numa = single_numa(t, set);
  if (numa < 0 && hwloc_get_last_cpu_location(t, set, HWLOC_CPUBIND_THREAD) == 0) numa = single_numa(t, set);
  hwloc_bitmap_free(set);
  return numa;
}

// The osdev type became a set of flags in hwloc 3; a template takes either.
template <class Type>
bool osdev_is(hwloc_obj_t obj, Type type) {
#if HWLOC_API_VERSION >= 0x00030000
  return (obj->attr->osdev.types & type) != 0;
#else
  return obj->attr->osdev.type == type;
#endif
}

bool is_below(hwloc_obj_t obj, hwloc_obj_t ancestor) {
  for (; obj != nullptr; obj = obj->parent) {
    if (obj == ancestor) return true;
  }
  return false;
}

// The first OS device of `type` in the subtree of `root`.
template <class Type>
hwloc_obj_t osdev_below(hwloc_topology_t t, hwloc_obj_t root, Type type) {
  for (hwloc_obj_t dev = hwloc_get_next_osdev(t, nullptr); dev != nullptr; dev = hwloc_get_next_osdev(t, dev)) {
    if (dev->name != nullptr && osdev_is(dev, type) && is_below(dev, root)) return dev;
  }
  return nullptr;
}

// Walks up from `start` and answers the first network device found below
// the current ancestor: the one sharing the lowest common ancestor.
std::string nearest_nic(hwloc_topology_t t, hwloc_obj_t start) {
  for (hwloc_obj_t a = start; a != nullptr; a = a->parent) {
    hwloc_obj_t dev = osdev_below(t, a, HWLOC_OBJ_OSDEV_OPENFABRICS);
    if (dev == nullptr) dev = osdev_below(t, a, HWLOC_OBJ_OSDEV_NETWORK);
    if (dev != nullptr) return dev->name;
  }
  return "";
}

std::string busid(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", domain, bus, dev, func);
  return text;
}

// The topmost PCI-to-PCI bridge above `pci` (the root port): GPUs below one
// share a switch.
std::string top_bridge(hwloc_obj_t pci) {
  std::string key;
  for (hwloc_obj_t a = pci->parent; a != nullptr && a->type == HWLOC_OBJ_BRIDGE; a = a->parent) {
    const auto& b = a->attr->bridge;
    if (b.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
      key = busid(b.upstream.pci.domain, b.upstream.pci.bus, b.upstream.pci.dev, b.upstream.pci.func);
    }
  }
  return key;
}

// Where the rank's cores are: the parent of its NUMA node, else the root.
hwloc_obj_t cpu_side(hwloc_topology_t t, int numa) {
  hwloc_obj_t node = numa >= 0 ? hwloc_get_numanode_obj_by_os_index(t, static_cast<unsigned>(numa)) : nullptr;
  return node != nullptr && node->parent != nullptr ? node->parent : hwloc_get_root_obj(t);
}

}  // namespace

bool available() noexcept { return true; }

Facts probe(const PciAddress* gpu) noexcept {
  Facts facts;
  try {
    hwloc_topology_t t = Machine::tree();
    if (t == nullptr) return facts;
    facts.numa = numa_of_process(t);
    hwloc_obj_t pci = nullptr;
    if (gpu != nullptr) {
      pci = hwloc_get_pcidev_by_busid(t, static_cast<unsigned>(gpu->domain), static_cast<unsigned>(gpu->bus),
                                      static_cast<unsigned>(gpu->device), 0);
    }
    if (pci != nullptr) facts.gpu_bridge = top_bridge(pci);
    facts.nic = nearest_nic(t, pci != nullptr ? pci : cpu_side(t, facts.numa));
  } catch (...) {
    // std::string allocation only; what was found so far stands.
  }
  return facts;
}

}  // namespace strata::topo::hw
