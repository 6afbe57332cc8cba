// `count` elements of a datatype as contiguous bytes, for Strata's
// collective routes: the user's buffer itself when the datatype is
// contiguous (no holes, lower bound 0), else a host buffer the data is packed
// into (MPI_Pack; from a host copy of the span for a device buffer) and,
// when the call writes it, unpacked from after (MPI_Unpack; a device
// buffer's span copied back).
#pragma once

#include "portability/mover/staging.hpp"

#include <mpi.h>

#include <cstdint>

namespace strata::interposer {

class ContiguousView {
 public:
  // `read`: the call reads the data (fill the packed bytes). Returns
  // MPI_SUCCESS or an MPI error class.
  int open(void* user, int64_t count, MPI_Datatype type, bool read);
  void* data() const { return packed_ ? static_cast<void*>(packed_.data()) : user_; }
  int64_t bytes() const { return bytes_; }
  // The call wrote data(): unpack it into the user's buffer.
  int flush();

 private:
  void* user_ = nullptr;
  int64_t count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int64_t bytes_ = 0;
  mover::Staging packed_;  // empty when the datatype is contiguous
  mover::Staging span_;    // device buffers: the host copy of the span
  int64_t span_lo_ = 0;
};

}  // namespace strata::interposer
