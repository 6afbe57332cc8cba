// How the Kokkos layer hands bytes to MPI: the library's GPU support, MPI
// error checks, and messages of any size posted as pieces MPI can count.
#pragma once

#include <strata/kokkos.hpp>

#include "portability/kokkos/compat.hpp"
#include "portability/kokkos/request_state.hpp"

#include <cstdint>

namespace strata::kokkos::detail {

// May memory of runtime `rt` be handed to the MPI library? Host memory
// always; CUDA and HIP memory as the one detection says (mpi/gpu_awareness:
// STRATA_MPI_GPU_AWARE=yes|no, else the library's own answer, asked once);
// another space's memory never.
bool library_takes_device_memory(Runtime rt) noexcept;

// Whether a transfer may give MPI memory of this kind in place.
template <class ExecSpace>
bool mpi_reads_in_place(bool host_memory, const CommOptions& options) noexcept {
  if (options.device_path == DevicePath::staged) return false;
  if (host_memory) return true;
  if (options.device_path == DevicePath::device) return true;
  return library_takes_device_memory(runtime_of<ExecSpace>());
}

// Status::ok for MPI_SUCCESS; otherwise logs `what` with the library's text.
Status mpi_check(int rc, const char* what) noexcept;

// Fails (logged) unless MPI is initialized and not finalized.
Status require_mpi(const char* what) noexcept;

// Largest piece of one message (a whole number of every element type).
constexpr int64_t kMaxPieceBytes = int64_t{1} << 30;

// Posts `bytes` at `buffer` to or from `peer` as pieces of at most
// kMaxPieceBytes (max_piece_bytes(), testing.hpp) into state->requests (receives also record each piece's
// expected length). On failure nothing stays posted.
Status post_pieces(bool send, char* buffer, int64_t bytes, int peer, int tag, MPI_Comm comm,
                   RequestState* state) noexcept;

}  // namespace strata::kokkos::detail
