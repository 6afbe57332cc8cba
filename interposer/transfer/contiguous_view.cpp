#include "interposer/transfer/contiguous_view.hpp"

#include <strata/datatype.hpp>

#include "interposer/transfer/exact_write.hpp"
#include "interposer/transfer/sides.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/copies.hpp"

#include <climits>

namespace strata::interposer {
namespace {

bool contiguous(const TypeLayout& t) {
  return t.lb == 0 && t.true_lb == 0 && t.extent == t.size && t.true_extent == t.size;
}

bool on_device(const void* p) {
  const device::Pointer w = gpu::classify(p);
  return w.kind == device::MemoryKind::device || w.kind == device::MemoryKind::managed;
}

}  // namespace

int ContiguousView::open(void* user, int64_t count, MPI_Datatype type, bool read) {
  user_ = user;
  count_ = count;
  type_ = type;
  Result<TypeLayout> t = measure_datatype(type);
  if (!t) return MPI_ERR_TYPE;
  bytes_ = t.value().size * count;
  if (contiguous(t.value()) || count <= 0 || bytes_ == 0) return MPI_SUCCESS;
  if (bytes_ > INT_MAX || count > INT_MAX) return MPI_ERR_COUNT;  // MPI_Pack's int positions
  packed_ = mover::Staging::host(bytes_);
  if (!packed_) return MPI_ERR_NO_MEM;
  const Span s = span_of(t.value(), count);
  char* host_user = static_cast<char*>(user);
  if (on_device(static_cast<char*>(user) + s.lo)) {
    span_lo_ = s.lo;
    span_ = mover::Staging::acquire(mover::pinned_pool(), s.hi - s.lo);
    if (!span_) return MPI_ERR_NO_MEM;
    const Status copied = mover::copy_bytes(span_.data(), static_cast<char*>(user) + s.lo, s.hi - s.lo);
    if (copied != Status::ok) return mpi::error_class(copied);
    host_user = span_.data() - s.lo;
  }
  if (!read) return MPI_SUCCESS;
  int position = 0;
  return mpi::real().MPI_Pack(host_user, static_cast<int>(count), type, packed_.data(), static_cast<int>(bytes_),
                              &position, MPI_COMM_SELF);
}

int ContiguousView::flush() {
  if (!packed_) return MPI_SUCCESS;
  char* host_user = span_ ? span_.data() - span_lo_ : static_cast<char*>(user_);
  int position = 0;
  const int rc = mpi::real().MPI_Unpack(packed_.data(), static_cast<int>(bytes_), &position, host_user,
                                        static_cast<int>(count_), type_, MPI_COMM_SELF);
  if (rc != MPI_SUCCESS || !span_) return rc;
  // Only the bytes the datatype covers: another operation in flight may be
  // writing between its blocks (exact_write.hpp).
  const Status s = write_exactly(static_cast<char*>(user_), host_user, count_, type_);
  return s == Status::ok ? MPI_SUCCESS : mpi::error_class(s);
}

}  // namespace strata::interposer
