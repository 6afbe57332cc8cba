// strata::kokkos::Request: MPI completion of a transfer's pieces, or the
// poll of a transfer ordered on an execution space (Request::on_space, for
// strata/kokkos_nccl.hpp), then what the transfer does after it
// (request_state.hpp).
#include "portability/kokkos/mpi_path.hpp"
#include "portability/kokkos/request_state.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"

#include <exception>
#include <mutex>
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
      if (mpi::real().MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count != state->expected[i]) {
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
      const Status s =
          mpi_check(mpi::real().MPI_Waitall(n, state->requests.data(), statuses.data()), "kokkos: MPI_Waitall");
      if (s != Status::ok) {
        state->complete = true;
        state->keep.clear();
        return s;
      }
    } else {
      int flag = 0;
      const Status s =
          mpi_check(mpi::real().MPI_Testall(n, state->requests.data(), &flag, statuses.data()), "kokkos: MPI_Testall");
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

// An on_space request's poll (detail::OnSpace); its failures are logged here.
Status poll_once(const std::function<Status(bool, bool*)>& poll, bool blocking, bool* finished) noexcept {
  *finished = true;
  Status s = Status::ok;
  try {
    s = poll(blocking, finished);
  } catch (const std::exception& e) {
    STRATA_LOG(error, kP2p, "kokkos: polling a request failed: %s", e.what());
    return Status::internal;
  }
  if (s != Status::ok) {
    STRATA_LOG(error, kP2p,
               "kokkos: a request cannot complete (%s; one posted in a group completes after its "
               "group_end)",
               to_string(s));
  }
  return s;
}

// Requests that could not complete when destroyed: their transfers may
// still use the temporaries, so these stay alive to the end of the process.
void keep_for_good(std::shared_ptr<RequestState> state) noexcept {
  // Never destroyed (at exit Kokkos may be finalized already); reachable, so
  // not a leak to LeakSanitizer.
  static std::mutex mutex;
  static auto* kept = new (std::nothrow) std::vector<std::shared_ptr<RequestState>>();
  try {
    std::lock_guard<std::mutex> lock(mutex);
    if (kept != nullptr) kept->push_back(std::move(state));
  } catch (...) {
    // Out of memory: the state goes; nothing better is possible.
  }
}

}  // namespace
}  // namespace detail

Request::Request() noexcept = default;
Request::Request(std::shared_ptr<detail::RequestState> state) noexcept : state_(std::move(state)) {}
Request::Request(Request&&) noexcept = default;

Result<Request> Request::on_space(detail::OnSpace completion) noexcept {
  try {
    auto st = std::make_shared<detail::RequestState>();
    st->finish = std::move(completion.finish);
    st->keep = std::move(completion.keep);
    Request r(std::move(st));
    r.poll_ = std::move(completion.poll);
    return Result<Request>(std::move(r));
  } catch (const std::bad_alloc&) {
    STRATA_LOG(error, kP2p, "kokkos: out of memory for a request");
    return Status::out_of_memory;
  }
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
    poll_ = std::move(other.poll_);
  }
  return *this;
}

Request::~Request() { release(); }

void Request::release() noexcept {
  if (!active()) return;
  const Status s = wait();
  if (active()) {
    STRATA_LOG(error, kP2p,
               "kokkos: a request destroyed before it could complete: its View and temporaries are "
               "kept to the end of the process");
    detail::keep_for_good(std::move(state_));
  } else if (s != Status::ok) {
    STRATA_LOG(warn, kP2p, "kokkos: a request destroyed while active completed with %s", to_string(s));
  }
  state_.reset();
  poll_ = nullptr;
}

bool Request::active() const noexcept { return state_ != nullptr && !state_->complete; }

Status Request::wait() noexcept {
  if (!state_) return Status::ok;
  if (poll_ && !state_->complete) {
    bool finished = true;
    STRATA_TRY(detail::poll_once(poll_, true, &finished));
  }
  bool done = false;
  return detail::complete_one(state_.get(), true, &done);
}

Status Request::test(bool* done) noexcept {
  if (done == nullptr) return Status::invalid_argument;
  if (!state_) {
    *done = true;
    return Status::ok;
  }
  if (poll_ && !state_->complete) {
    bool finished = true;
    STRATA_TRY(detail::poll_once(poll_, false, &finished));
    if (!finished) {
      *done = false;
      return Status::ok;
    }
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
