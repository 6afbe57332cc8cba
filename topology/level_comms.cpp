#include "topology/level_comms.hpp"

#include "mpi/real_mpi.hpp"
#include "topology/mpi_check.hpp"

namespace strata::topo::detail {

using mpi::real;

Status build_level_comms(MPI_Comm comm, int rank, const LevelPlan& plan, LevelComms* out) noexcept {
  const size_t r = static_cast<size_t>(rank);
  STRATA_TOPO_MPI(real().MPI_Comm_split(comm, plan.group[r], rank, &out->group));
  STRATA_TOPO_MPI(real().MPI_Comm_split(comm, plan.cross[r], rank, &out->cross));
  // Non-leaders pass MPI_UNDEFINED and get MPI_COMM_NULL.
  int color = plan.leader[r] != 0 ? plan.parent[r] : MPI_UNDEFINED;
  STRATA_TOPO_MPI(real().MPI_Comm_split(comm, color, rank, &out->leaders));
  return Status::ok;
}

void free_level_comms(LevelComms* comms) noexcept {
  for (MPI_Comm* c : {&comms->group, &comms->cross, &comms->leaders}) {
    if (*c != MPI_COMM_NULL) {
      (void)mpi_check(real().MPI_Comm_free(c), "MPI_Comm_free(level)");
      *c = MPI_COMM_NULL;
    }
  }
}

}  // namespace strata::topo::detail
