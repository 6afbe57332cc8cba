// The halo exchange: one committed MPI subarray datatype per direction for the
// send box and one for the ghost box; an exchange is MPI_Irecv from all 26
// neighbours, MPI_Isend to all 26, MPI_Waitall.
#pragma once

#include "halo_grid.hpp"
#include "process_grid.hpp"

#include <mpi.h>

#include <array>

namespace halo3d {

class HaloExchange {
 public:
  HaloExchange() = default;
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  // Finds the 26 neighbours and creates and commits the 52 datatypes.
  // False on an MPI error (types made so far are freed by release()).
  bool setup(const ProcessGrid& processes, const LocalGrid& grid, MPI_Datatype element);

  // One exchange on `field`, the padded local array (element_count() values).
  bool exchange(void* field);

  // Bytes this rank sends in one exchange (sum of the send types' sizes).
  long long bytes_sent() const { return bytes_sent_; }

  // Frees the datatypes; call before MPI_Finalize.
  bool release();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::array<int, kNeighbourCount> neighbours_{};
  std::array<MPI_Datatype, kNeighbourCount> send_types_{};
  std::array<MPI_Datatype, kNeighbourCount> ghost_types_{};
  std::array<MPI_Request, size_t{2} * kNeighbourCount> requests_{};
  long long bytes_sent_ = 0;
};

}  // namespace halo3d
