#include "halo_exchange.hpp"

#include "mpi_check.hpp"

namespace halo3d {

namespace {

// A committed subarray type for `box` of the padded array. The quantity axis
// is innermost (AoS) or outermost (SoA); with one quantity it is left out, so
// that the type is the 3D subarray an ordinary code would write.
bool make_box_type(const LocalGrid& grid, const Box& box, MPI_Datatype element, MPI_Datatype& type) {
  int sizes[4];
  int subsizes[4];
  int starts[4];
  int n = 0;
  auto add_axis = [&](int size, int subsize, int start) {
    sizes[n] = size;
    subsizes[n] = subsize;
    starts[n] = start;
    ++n;
  };
  const bool with_quantities = grid.quantities > 1;
  if (with_quantities && grid.layout == Layout::SoA) {
    add_axis(grid.quantities, grid.quantities, 0);
  }
  for (int a = 2; a >= 0; --a) {  // C order: z slowest, x fastest
    add_axis(grid.padded(a), box.size[a], box.start[a]);
  }
  if (with_quantities && grid.layout == Layout::AoS) {
    add_axis(grid.quantities, grid.quantities, 0);
  }
  MPI_Datatype made = MPI_DATATYPE_NULL;
  HALO_MPI_CHECK(MPI_Type_create_subarray(n, sizes, subsizes, starts, MPI_ORDER_C, element, &made));
  if (!mpi_ok(MPI_Type_commit(&made), "MPI_Type_commit")) {
    mpi_ok(MPI_Type_free(&made), "MPI_Type_free");
    return false;
  }
  type = made;
  return true;
}

}  // namespace

bool HaloExchange::setup(const ProcessGrid& processes, const LocalGrid& grid, MPI_Datatype element) {
  comm_ = processes.comm;
  send_types_.fill(MPI_DATATYPE_NULL);
  ghost_types_.fill(MPI_DATATYPE_NULL);
  requests_.fill(MPI_REQUEST_NULL);
  bytes_sent_ = 0;
  const auto& directions = neighbour_directions();
  for (int i = 0; i < kNeighbourCount; ++i) {
    const Direction d = directions[i];
    if (!neighbour_rank(processes, {d.dx, d.dy, d.dz}, neighbours_[i]) ||
        !make_box_type(grid, grid.send_box(d), element, send_types_[i]) ||
        !make_box_type(grid, grid.ghost_box(d), element, ghost_types_[i])) {
      return false;
    }
    MPI_Count size = 0;
    HALO_MPI_CHECK(MPI_Type_size_x(send_types_[i], &size));
    bytes_sent_ += static_cast<long long>(size);
  }
  return true;
}

bool HaloExchange::exchange(void* field) {
  const auto& directions = neighbour_directions();
  // The ghost box in direction d is filled by the neighbour there, which sent
  // towards opposite(d).
  for (int i = 0; i < kNeighbourCount; ++i) {
    HALO_MPI_CHECK(
        MPI_Irecv(field, 1, ghost_types_[i], neighbours_[i], tag_of(opposite(directions[i])), comm_, &requests_[i]));
  }
  for (int i = 0; i < kNeighbourCount; ++i) {
    HALO_MPI_CHECK(MPI_Isend(field, 1, send_types_[i], neighbours_[i], tag_of(directions[i]), comm_,
                             &requests_[kNeighbourCount + i]));
  }
  HALO_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
  return true;
}

bool HaloExchange::release() {
  bool ok = true;
  for (auto* types : {&send_types_, &ghost_types_}) {
    for (MPI_Datatype& type : *types) {
      if (type != MPI_DATATYPE_NULL) {
        ok = mpi_ok(MPI_Type_free(&type), "MPI_Type_free") && ok;
        type = MPI_DATATYPE_NULL;
      }
    }
  }
  return ok;
}

}  // namespace halo3d
