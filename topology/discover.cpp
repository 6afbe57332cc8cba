// Each rank gathers what it knows about itself (its node's lowest rank, its
// device and PCI address, its NUMA node and NIC, its host name); one
// allgather shares that and every rank numbers the same table alike.
//
// Keys (topology/numbering.hpp):
//   node     the lowest rank of MPI_COMM_TYPE_SHARED (so nodes are numbered
//            by their lowest rank)
//   package  with a GPU: its board (devices reporting one multi-GPU board
//            group are the dies of one package, e.g. MI250X; when the runtime
//            gives no group id, the PCI root port they share), else the GPU
//            itself; without a GPU: the NUMA node of the rank's cores
//   gcd      the GPU's PCI address (ranks sharing a GPU share its die)
#include "topology/discover.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "topology/hwloc/hwloc_probe.hpp"
#include "topology/mpi_check.hpp"
#include "topology/numbering.hpp"

#include <cstdio>
#include <cstring>

namespace strata::topo::detail {

using mpi::real;

namespace {

// What one rank sends to all others (plain bytes, fixed size).
struct LocalFacts {
  int node_leader = 0;
  int device = -1;
  int numa = -1;
  int multi_board = 0;
  int board_group = -1;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  char pci[32] = {};
  char nic[64] = {};
  char bridge[32] = {};
};
constexpr int kBytes = static_cast<int>(sizeof(LocalFacts));

void copy_text(char* dst, size_t size, const std::string& src) { std::snprintf(dst, size, "%s", src.c_str()); }

Status node_leader(MPI_Comm comm, int rank, int* leader) noexcept {
  MPI_Comm shared = MPI_COMM_NULL;
  STRATA_TOPO_MPI(real().MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  Status s = mpi_check(real().MPI_Allreduce(&rank, leader, 1, MPI_INT, MPI_MIN, shared), "MPI_Allreduce(node leader)");
  Status f = mpi_check(real().MPI_Comm_free(&shared), "MPI_Comm_free(node)");
  return s != Status::ok ? s : f;
}

// The current device, its PCI address and board; nothing when there is none
// (a failing runtime query is not an error here: the rank is placed as a
// host rank).
void probe_gpu(LocalFacts* facts, hw::PciAddress* pci, bool* has_gpu) {
  *has_gpu = false;
  int device = -1;
  gpu::DeviceProperties props;
  if (!gpu::available() || gpu::get_device(&device) != Status::ok || gpu::properties(device, &props) != Status::ok) {
    return;
  }
  *has_gpu = true;
  facts->device = device;
  facts->multi_board = props.multi_gpu_board;
  facts->board_group = props.multi_gpu_board_group;
  pci->domain = props.pci_domain;
  pci->bus = props.pci_bus;
  pci->device = props.pci_device;
  std::snprintf(facts->pci, sizeof facts->pci, "%04x:%02x:%02x.0", static_cast<unsigned>(props.pci_domain),
                static_cast<unsigned>(props.pci_bus), static_cast<unsigned>(props.pci_device));
}

Status local_facts(MPI_Comm comm, int rank, LocalFacts* facts) noexcept {
  STRATA_TRY(node_leader(comm, rank, &facts->node_leader));
  int length = 0;
  STRATA_TOPO_MPI(real().MPI_Get_processor_name(facts->host, &length));
  hw::PciAddress pci;
  bool has_gpu = false;
  probe_gpu(facts, &pci, &has_gpu);
  hw::Facts hw_facts = hw::probe(has_gpu ? &pci : nullptr);
  facts->numa = hw_facts.numa;
  copy_text(facts->nic, sizeof facts->nic, hw_facts.nic);
  copy_text(facts->bridge, sizeof facts->bridge, hw_facts.gpu_bridge);
  return Status::ok;
}

PlaceKey key_of(const LocalFacts& f) {
  PlaceKey key;
  key.node = std::to_string(f.node_leader);
  if (f.device >= 0) {
    if (f.multi_board != 0 && f.board_group >= 0) {
      key.package = "board " + std::to_string(f.board_group);
    } else if (f.multi_board != 0 && f.bridge[0] != '\0') {
      key.package = std::string("bridge ") + f.bridge;
    } else {
      key.package = std::string("gpu ") + f.pci;
    }
    key.gcd = f.pci;
  } else if (f.numa >= 0) {
    key.package = "numa " + std::to_string(f.numa);
  }
  return key;
}

}  // namespace

Status discover_places(MPI_Comm comm, int rank, int size, std::vector<Place>* places, bool* all_gpus) noexcept {
  try {
    LocalFacts mine;
    STRATA_TRY(local_facts(comm, rank, &mine));
    std::vector<LocalFacts> all(static_cast<size_t>(size));
    STRATA_TOPO_MPI(real().MPI_Allgather(&mine, kBytes, MPI_BYTE, all.data(), kBytes, MPI_BYTE, comm));
    std::vector<PlaceKey> keys;
    keys.reserve(all.size());
    *all_gpus = true;
    for (LocalFacts& f : all) {
      f.host[sizeof f.host - 1] = f.pci[sizeof f.pci - 1] = f.nic[sizeof f.nic - 1] = '\0';
      f.bridge[sizeof f.bridge - 1] = '\0';
      keys.push_back(key_of(f));
      *all_gpus = *all_gpus && f.device >= 0;
    }
    number_places(keys, places);
    for (size_t r = 0; r < all.size(); ++r) {
      Place& p = (*places)[r];
      p.host = all[r].host;
      p.device = all[r].device;
      p.pci_bus = all[r].pci;
      p.numa = all[r].numa;
      p.nic = all[r].nic;
    }
    return Status::ok;
  } catch (const std::bad_alloc&) {
    STRATA_LOG(error, kTopo, "out of memory while discovering the topology");
    return Status::out_of_memory;
  }
}

}  // namespace strata::topo::detail
