// STRATA_TOPOLOGY: an emulated layout instead of discovery (formats in
// strata/topology.hpp).
#pragma once

#include <strata/topology.hpp>

#include <string>
#include <vector>

namespace strata::topo::detail {

// parse_emulated_topology, saying why a spec is rejected in `why` (may be null).
Result<std::vector<Place>> parse_emulation(const std::string& spec, int ranks, std::string* why);

// Collective over `comm`. True with `places` filled when STRATA_TOPOLOGY
// (as rank 0 sees it, so every rank decides alike) is set and valid for
// MPI_COMM_WORLD's size: the spec places world ranks, and each rank of
// `comm` takes its world rank's place (renumbered densely for `comm`). False
// when it is unset, or invalid (rank 0 warns, once per process): then the
// caller discovers. Status::mpi_error when an MPI call fails.
Result<bool> emulated_places(MPI_Comm comm, int rank, int size, std::vector<Place>* places) noexcept;

// Is STRATA_TOPOLOGY set in this process (without asking the other ranks)?
bool emulation_requested() noexcept;

}  // namespace strata::topo::detail
