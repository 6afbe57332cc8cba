// The plumbing every algorithm shares: MPI error checks, the message size
// limit, scratch memory, the call context, and point-to-point messages of any
// size split into pieces MPI can count with an int.
#include "collectives/host/internal.hpp"

#include "base/log.hpp"
#include "mpi/check.hpp"
#include "mpi/real_mpi.hpp"

#include <atomic>
#include <climits>

namespace strata::coll::host::detail {

using mpi::real;

namespace {

// 1 GiB: a power of two below INT_MAX, so a piece is a whole number of
// elements of every type and its byte count fits an int.
constexpr size_t kDefaultMaxMessage = size_t{1} << 30;
std::atomic<size_t> g_max_message{kDefaultMaxMessage};

// One tag for all of them: the algorithms' messages on a communicator are
// matched in the order they are posted (MPI's non-overtaking rule), and the
// communicators are Strata's own duplicates.
constexpr int kTag = 0x5c01;

}  // namespace

Status mpi_check(int rc, const char* what) noexcept { return mpi::check(rc, log::kColl, what); }

size_t max_message_bytes() noexcept { return g_max_message.load(std::memory_order_relaxed); }

void set_max_message_bytes(size_t bytes) noexcept {
  if (bytes == 0 || bytes > kDefaultMaxMessage) bytes = kDefaultMaxMessage;
  g_max_message.store(bytes, std::memory_order_relaxed);
}

Status Scratch::allocate(size_t bytes) noexcept {
  data_.reset(new (std::nothrow) char[bytes == 0 ? 1 : bytes]);
  if (!data_) {
    STRATA_LOG(error, kColl, "cannot allocate %zu bytes of scratch memory", bytes);
    return Status::out_of_memory;
  }
  return Status::ok;
}

Status make_ctx(MPI_Comm comm, DataType type, ReduceOp op, Ctx* out) noexcept {
  if (comm == MPI_COMM_NULL) {
    STRATA_LOG(error, kColl, "host collective called on MPI_COMM_NULL");
    return Status::invalid_argument;
  }
  Ctx c;
  c.comm = comm;
  STRATA_MPI_TRY(real().MPI_Comm_rank(comm, &c.rank));
  STRATA_MPI_TRY(real().MPI_Comm_size(comm, &c.size));
  c.type = type;
  c.op = op;
  c.element = element_size(type);
  *out = c;
  return Status::ok;
}

Status sendrecv(const void* send, size_t send_bytes, int dest, void* recv, size_t recv_bytes, int source,
                const Ctx& c) noexcept {
  // Piece i of the send goes with piece i of the receive; when one side has
  // more pieces the other direction simply has nothing in that round. Any
  // pattern in which every message's two ends agree on its size completes:
  // the ranks at the lowest round can always progress.
  const size_t piece = max_message_bytes();
  for (size_t off = 0; off < send_bytes || off < recv_bytes; off += piece) {
    MPI_Request req[2];
    int n = 0;
    if (off < recv_bytes) {
      const int len = static_cast<int>(std::min(piece, recv_bytes - off));
      STRATA_MPI_TRY(real().MPI_Irecv(at(recv, off), len, MPI_BYTE, source, kTag, c.comm, &req[n]));
      ++n;
    }
    if (off < send_bytes) {
      const int len = static_cast<int>(std::min(piece, send_bytes - off));
      STRATA_MPI_TRY(real().MPI_Isend(at(send, off), len, MPI_BYTE, dest, kTag, c.comm, &req[n]));
      ++n;
    }
    STRATA_MPI_TRY(real().MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
  }
  return Status::ok;
}

Status send(const void* buf, size_t bytes, int dest, const Ctx& c) noexcept {
  const size_t piece = max_message_bytes();
  for (size_t off = 0; off < bytes; off += piece) {
    const int len = static_cast<int>(std::min(piece, bytes - off));
    STRATA_MPI_TRY(real().MPI_Send(at(buf, off), len, MPI_BYTE, dest, kTag, c.comm));
  }
  return Status::ok;
}

Status recv(void* buf, size_t bytes, int source, const Ctx& c) noexcept {
  const size_t piece = max_message_bytes();
  for (size_t off = 0; off < bytes; off += piece) {
    const int len = static_cast<int>(std::min(piece, bytes - off));
    STRATA_MPI_TRY(real().MPI_Recv(at(buf, off), len, MPI_BYTE, source, kTag, c.comm, MPI_STATUS_IGNORE));
  }
  return Status::ok;
}

const Flat* flat_of(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::library: return &kLibrary;
    case Algorithm::ring: return &kRing;
    case Algorithm::recursive: return &kRecursive;
    default: return nullptr;
  }
}

const Flat& reducing(const Flat& inner, DataType type) noexcept {
  MPI_Datatype t;
  if (&inner == &kLibrary && !mpi_type_of(type, &t)) return kRing;
  return inner;
}

}  // namespace strata::coll::host::detail
