// A context's NCCL state: one NCCL communicator per (device, MPI level
// communicator), the position vectors of the hierarchical layouts, and a
// device scratch buffer for the hierarchical reduce-scatter and all-gather.
#pragma once

#include "collectives/context.hpp"
#include "collectives/nccl/nccl_library.hpp"

#include <map>
#include <utility>
#include <vector>

namespace strata::coll::device {

// Where each rank sits in a hierarchy's steps: step 0 runs on
// levels[0].group, step k on levels[k-1].cross (host_collectives.hpp).
struct StepLayout {
  std::vector<MPI_Comm> steps;  // the communicator of each step
  std::vector<int> fanout;      // its size (the same on every rank: uniform)
  std::vector<int> order;       // order[d] = the rank whose position vector has mixed-radix index d
  int my_index = 0;             // my position vector's index
};

struct State {
  std::map<std::pair<int, MPI_Comm>, ncclComm_t> comms;  // (device, MPI communicator)
  std::map<Algorithm, StepLayout> layouts;
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  int scratch_device = -1;
};

// The NCCL communicator over `mpi_comm` for the current device; collective
// over `mpi_comm` the first time.
Result<ncclComm_t> comm_for(Context& context, MPI_Comm mpi_comm) noexcept;
// The step layout of a hierarchical algorithm; collective over the context's
// communicator the first time. not_supported when the levels are uneven.
Result<const StepLayout*> layout_for(Context& context, Algorithm algorithm) noexcept;
// Device scratch of at least `bytes` on the current device.
Result<void*> scratch(Context& context, size_t bytes) noexcept;

}  // namespace strata::coll::device
