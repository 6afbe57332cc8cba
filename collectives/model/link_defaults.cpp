// Built-in link figures by link class, for device and host buffers.
// Sources (docs/scaling.md, "Link figures"):
//   gpu, device   fitted to NCCL 2.28 bf16 allreduce on the lent H200 nodes
//                 (NV18): 2 GPUs 10 µs small, 320 GB/s busbw at 512 MiB;
//                 4 GPUs 20 µs small, 347 GB/s busbw: call 5 + 2(n-1)·2.5 µs
//                 matches both small sizes, 335 GB/s sits between the two.
//   die, device   MI250X GCD pair, 200 GB/s (OLCF Frontier user guide).
//   pcie, device  PCIe 4.0 x16 without a peer link, ~25 GB/s per direction.
//   network       one 200 Gb/s NIC per node (Slingshot-11, HDR/NDR 200):
//                 25 GB/s for the whole node; nodes with more NICs say so
//                 through STRATA_COLL_LINKS or the model file.
//   host (shm)    memcpy 10.3 GB/s on the CI machine (reference host model);
//                 a shared-memory MPI copies twice: ~5 GB/s per rank.
// Latencies are assumptions of the usual order (not measured here) except
// the fitted gpu figures.
#include "collectives/model/cost_model.hpp"

namespace strata::coll::model {
namespace {

struct Default {
  const char* link_class;
  LinkFigures device;
  LinkFigures host;
};

// {alpha_us, gbps, call_us, per_node, small regime (none), per-collective figures (none)}
constexpr LinkFigures kHostShm{1.0, 5.0, 1.0, false, {}, {}};
const Default kDefaults[] = {
    {"die", {2.0, 200.0, 5.0, false, {}, {}}, kHostShm},
    {"gpu", {2.5, 335.0, 5.0, false, {}, {}}, kHostShm},
    {"pcie", {5.0, 25.0, 5.0, false, {}, {}}, kHostShm},
    {"shm", {5.0, 25.0, 5.0, false, {}, {}}, kHostShm},  // device buffers without a peer link: as pcie
    {"network", {5.0, 25.0, 5.0, true, {}, {}}, {2.0, 25.0, 1.0, true, {}, {}}},
};

}  // namespace

LinkFigures default_link_figures(const std::string& link_class, bool device) {
  for (const Default& d : kDefaults) {
    if (link_class == d.link_class) return device ? d.device : d.host;
  }
  const Default& slowest = kDefaults[sizeof(kDefaults) / sizeof(kDefaults[0]) - 1];
  return device ? slowest.device : slowest.host;
}

}  // namespace strata::coll::model
