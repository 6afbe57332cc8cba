// What a strata::kokkos::Request owns until it completes.
#pragma once

#include <strata/kokkos.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace strata::kokkos::detail {

struct RequestState {
  std::vector<MPI_Request> requests;  // the message's pieces
  std::vector<int64_t> expected;      // receive: bytes each piece must bring
  bool receive = false;
  int peer = 0;
  int tag = 0;
  // After MPI completion (receive: copy in, unpack, fence); may be empty.
  std::function<Status()> finish;
  // The user's View and the temporaries, released at completion.
  std::vector<std::shared_ptr<const void>> keep;
  bool complete = false;
};

// Checks the receive lengths, runs `finish` and releases what the state
// holds; `statuses` are those of state->requests after MPI completed them.
Status complete_state(RequestState* state, const MPI_Status* statuses) noexcept;

}  // namespace strata::kokkos::detail
