#include "process_grid.hpp"

#include "mpi_check.hpp"

namespace halo3d {

std::string choose_process_grid(int ranks, std::array<int, 3>& procs) {
  long long fixed = 1;
  bool any_free = false;
  for (int p : procs) {
    if (p == 0) {
      any_free = true;
    } else {
      fixed *= p;
    }
  }
  const std::string asked =
      "--procs " + std::to_string(procs[0]) + " " + std::to_string(procs[1]) + " " + std::to_string(procs[2]);
  if (!any_free && fixed != ranks) {
    return asked + " needs " + std::to_string(fixed) + " ranks, but the job has " + std::to_string(ranks);
  }
  if (any_free && ranks % fixed != 0) {
    return asked + ": " + std::to_string(ranks) + " ranks are not a multiple of " + std::to_string(fixed);
  }
  std::array<int, 3> chosen = procs;
  if (any_free && MPI_Dims_create(ranks, 3, chosen.data()) != MPI_SUCCESS) {
    return asked + ": MPI_Dims_create cannot complete this process grid for " + std::to_string(ranks) + " ranks";
  }
  procs = chosen;
  return {};
}

bool create_process_grid(const std::array<int, 3>& procs, ProcessGrid& grid) {
  const int periodic[3] = {1, 1, 1};
  MPI_Comm comm = MPI_COMM_NULL;
  HALO_MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 3, procs.data(), periodic, 0, &comm));
  int rank = 0;
  std::array<int, 3> coords{};
  HALO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  HALO_MPI_CHECK(MPI_Cart_coords(comm, rank, 3, coords.data()));
  grid.comm = comm;
  grid.procs = procs;
  grid.coords = coords;
  grid.rank = rank;
  return true;
}

bool neighbour_rank(const ProcessGrid& grid, const std::array<int, 3>& offset, int& rank) {
  std::array<int, 3> coords{};
  for (int a = 0; a < 3; ++a) {
    const int p = grid.procs[a];
    coords[a] = ((grid.coords[a] + offset[a]) % p + p) % p;
  }
  HALO_MPI_CHECK(MPI_Cart_rank(grid.comm, coords.data(), &rank));
  return true;
}

bool free_process_grid(ProcessGrid& grid) {
  if (grid.comm != MPI_COMM_NULL) {
    HALO_MPI_CHECK(MPI_Comm_free(&grid.comm));
  }
  return true;
}

}  // namespace halo3d
