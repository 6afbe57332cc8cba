// strata::kokkos::Request: MPI completion of a transfer's pieces, then what
// the transfer does after it (request_state.hpp).
#include "portability/kokkos/mpi_path.hpp"
#include "portability/kokkos/request_state.hpp"

#include "base/log.hpp"

#include <exception>
#include <new>
#include <utility>
#include <vector>

namespace strata::kokkos {
namespace detail {

Status complete_state(RequestState* state, const MPI_Status* statuses) noexcept {
  Status result = Status::ok;
  if (state->receive) {
    for (size_t i = 0; i < state->requests.size(); ++i) {
      int count = 0;
      MPI_Status st = statuses[i];
      if (PMPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count != state->expected[i]) {
        STRATA_LOG(error, kP2p, "kokkos: receive from %d tag %d: piece %zu brought %d bytes, the View needs %lld",
                   state->peer, state->tag, i, count, static_cast<long long>(state->expected[i]));
        result = Status::invalid_argument;
      }
    }
  }
  if (result == Status::ok && state->finish) {
    try {
      result = state->finish();
    } catch (const std::bad_alloc&) {
      STRATA_LOG(error, kP2p, "kokkos: out of memory completing a receive");
      result = Status::out_of_memory;
    } catch (const std::exception& e) {
      STRATA_LOG(error, kP2p, "kokkos: completing a receive failed: %s", e.what());
      result = Status::device_error;
    }
  }
  state->complete = true;
  state->requests.clear();
  state->finish = nullptr;
  state->keep.clear();  // the View and the temporaries go now
  return result;
}

namespace {

Status complete_one(RequestState* state, bool blocking, bool* done) noexcept {
  *done = false;
  if (state->complete) {
    *done = true;
    return Status::ok;
  }
  std::vector<MPI_Status> statuses;
  try {
    statuses.resize(state->requests.size());
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  }
  const int n = static_cast<int>(state->requests.size());
  if (n > 0) {
    if (blocking) {
      const Status s = mpi_check(PMPI_Waitall(n, state->requests.data(), statuses.data()), "MPI_Waitall");
      if (s != Status::ok) {
        state->complete = true;
        state->keep.clear();
        return s;
      }
    } else {
      int flag = 0;
      const Status s = mpi_check(PMPI_Testall(n, state->requests.data(), &flag, statuses.data()), "MPI_Testall");
      if (s != Status::ok) {
        state->complete = true;
        state->keep.clear();
        return s;
      }
      if (!flag) return Status::ok;
    }
  }
  *done = true;
  return complete_state(state, statuses.data());
}

}  // namespace
}  // namespace detail

Request::Request() noexcept = default;
Request::Request(std::shared_ptr<detail::RequestState> state) noexcept : state_(std::move(state)) {}
Request::Request(Request&&) noexcept = default;

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    if (active()) (void)wait();
    state_ = std::move(other.state_);
  }
  return *this;
}

Request::~Request() {
  if (active()) {
    const Status s = wait();
    if (s != Status::ok) {
      STRATA_LOG(warn, kP2p, "kokkos: a request destroyed while active completed with %s", to_string(s));
    }
  }
}

bool Request::active() const noexcept { return state_ != nullptr && !state_->complete; }

Status Request::wait() noexcept {
  if (!state_) return Status::ok;
  bool done = false;
  return detail::complete_one(state_.get(), true, &done);
}

Status Request::test(bool* done) noexcept {
  if (done == nullptr) return Status::invalid_argument;
  if (!state_) {
    *done = true;
    return Status::ok;
  }
  return detail::complete_one(state_.get(), false, done);
}

Status wait_all(Request* requests, size_t count) noexcept {
  if (count > 0 && requests == nullptr) return Status::invalid_argument;
  Status first = Status::ok;
  for (size_t i = 0; i < count; ++i) {
    const Status s = requests[i].wait();
    if (first == Status::ok) first = s;
  }
  return first;
}

}  // namespace strata::kokkos
