// Discovery: where the ranks of a communicator run, from MPI (nodes), the
// GPU runtime (device, PCI address, board) and hwloc (NUMA node, NIC).
#pragma once

#include <strata/topology.hpp>

#include <vector>

namespace strata::topo::detail {

// Collective over `comm`: one place per rank, in rank order, on every rank.
// `all_gpus`: every rank has a current GPU device.
Status discover_places(MPI_Comm comm, int rank, int size, std::vector<Place>* places, bool* all_gpus) noexcept;

}  // namespace strata::topo::detail
