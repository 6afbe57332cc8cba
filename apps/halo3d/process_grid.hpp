// The periodic 3D process grid (an MPI Cartesian communicator).
#pragma once

#include <mpi.h>

#include <array>
#include <string>

namespace halo3d {

// Fills the zero entries of `procs` (MPI_Dims_create) so that the product is
// `ranks`. Returns an empty string on success, else a usage message; `procs`
// is written only on success.
std::string choose_process_grid(int ranks, std::array<int, 3>& procs);

struct ProcessGrid {
  MPI_Comm comm = MPI_COMM_NULL;  // periodic in x, y and z; not reordered
  std::array<int, 3> procs{};
  std::array<int, 3> coords{};  // of this rank
  int rank = 0;                 // in comm
};

// Creates the Cartesian communicator over MPI_COMM_WORLD. False on an MPI error.
bool create_process_grid(const std::array<int, 3>& procs, ProcessGrid& grid);

// The rank of the neighbour at coords + offset, wrapping periodically.
bool neighbour_rank(const ProcessGrid& grid, const std::array<int, 3>& offset, int& rank);

bool free_process_grid(ProcessGrid& grid);

}  // namespace halo3d
