// The MPI plumbing of the Kokkos layer (mpi_path.hpp).
#include "portability/kokkos/mpi_path.hpp"
#include "portability/kokkos/testing.hpp"

#include "base/log.hpp"
#include "mpi/check.hpp"
#include "mpi/gpu_awareness.hpp"
#include "mpi/helpers.hpp"

#include <algorithm>
#include <atomic>
#include <new>

namespace strata::kokkos::detail {

using mpi::real;

namespace {

std::atomic<int64_t> g_max_piece{kMaxPieceBytes};

}  // namespace

bool library_takes_device_memory(Runtime rt) noexcept {
  switch (rt) {
    case Runtime::host: return true;
    case Runtime::cuda: return mpi::library_is_gpu_aware(mpi::GpuRuntime::cuda);
    case Runtime::hip: return mpi::library_is_gpu_aware(mpi::GpuRuntime::hip);
    case Runtime::other: return false;
  }
  return false;
}

void set_max_piece_bytes(int64_t bytes) noexcept {
  g_max_piece.store(bytes <= 0 || bytes > kMaxPieceBytes ? kMaxPieceBytes : bytes, std::memory_order_relaxed);
}

int64_t max_piece_bytes() noexcept { return g_max_piece.load(std::memory_order_relaxed); }

Status mpi_check(int rc, const char* what) noexcept { return mpi::check(rc, log::kP2p, what); }

Status require_mpi(const char* what) noexcept {
  if (!mpi::running()) {
    STRATA_LOG(error, kP2p, "kokkos: %s outside MPI_Init .. MPI_Finalize", what);
    return Status::invalid_argument;
  }
  return Status::ok;
}

Status post_pieces(bool send, char* buffer, int64_t bytes, int peer, int tag, MPI_Comm comm,
                   RequestState* state) noexcept {
  static char empty = 0;
  if (buffer == nullptr) buffer = &empty;  // a 0-byte message still matches
  const int64_t piece = max_piece_bytes();
  const int64_t pieces = bytes == 0 ? 1 : (bytes + piece - 1) / piece;
  const size_t first = state->requests.size();
  try {
    state->requests.reserve(first + static_cast<size_t>(pieces));
    state->expected.reserve(state->expected.size() + static_cast<size_t>(pieces));
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  }
  for (int64_t k = 0; k < pieces; ++k) {
    const int64_t off = k * piece;
    const int len = static_cast<int>(std::min(piece, bytes - off));
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = send ? real().MPI_Isend(buffer + off, len, MPI_BYTE, peer, tag, comm, &r)
                        : real().MPI_Irecv(buffer + off, len, MPI_BYTE, peer, tag, comm, &r);
    const Status s = mpi_check(rc, send ? "kokkos: MPI_Isend" : "kokkos: MPI_Irecv");
    if (s != Status::ok) {
      // Nothing may stay posted on a buffer the caller will free.
      for (size_t i = first; i < state->requests.size(); ++i) {
        real().MPI_Cancel(&state->requests[i]);
        real().MPI_Wait(&state->requests[i], MPI_STATUS_IGNORE);
      }
      state->requests.resize(first);
      state->expected.resize(first);
      return s;
    }
    state->requests.push_back(r);
    state->expected.push_back(len);
  }
  return Status::ok;
}

}  // namespace strata::kokkos::detail
