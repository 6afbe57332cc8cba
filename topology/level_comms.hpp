// The communicators of one level (group, cross, leaders), split from the
// topology's communicator with colors taken from the level plan.
#pragma once

#include "topology/levels.hpp"

#include <mpi.h>

namespace strata::topo::detail {

struct LevelComms {
  MPI_Comm group = MPI_COMM_NULL;
  MPI_Comm cross = MPI_COMM_NULL;
  MPI_Comm leaders = MPI_COMM_NULL;  // stays null on ranks that are not leaders
};

// Collective over `comm`. Every communicator is ordered by rank. On failure
// the ones already made are left in `out` for free_level_comms.
Status build_level_comms(MPI_Comm comm, int rank, const LevelPlan& plan, LevelComms* out) noexcept;

// Frees what build_level_comms made (nulls are skipped); logs failures.
void free_level_comms(LevelComms* comms) noexcept;

}  // namespace strata::topo::detail
