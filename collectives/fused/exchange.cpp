// Helpers of the exchanges: the collective agreement on each set-up step,
// the 16-byte access test, the wait limit.
#include "collectives/fused/exchange.hpp"

#include "base/config.hpp"
#include "mpi/real_mpi.hpp"

#include <cstdint>
#include <vector>

namespace strata::fused {

using mpi::real;

namespace {

config::IntParam g_timeout_ms{"STRATA_FUSED_TIMEOUT_MS", 10000,
                              "Longest wait of the fused AllReduce-RMSNorm for a peer (milliseconds); past it the "
                              "call ends with an error naming the peer that did not arrive",
                              1, int64_t{24} * 3600 * 1000};

// 64 MiB: on 2 x H100 the row-behind Lamport kernel was the fastest kind at
// every size measured, up to 128 MiB (bench/results/fused-h100x2.md); the
// limit is its memory (3 x ranks x this much a rank), and 64 MiB covers a
// layer of 4096 tokens x 8192 bf16.
config::IntParam g_lamport_max{"STRATA_FUSED_LAMPORT_MAX",
                               int64_t{64} << 20,
                               "Largest call (tokens x hidden x element bytes) of the fused AllReduce-RMSNorm's "
                               "barrier-free Lamport one-shot; each rank sets aside 3 x ranks x this much (or the "
                               "largest message, if smaller), and a larger message runs as several calls of whole rows "
                               "that fit (measured on 2 x H200 at 128 MiB: 92-95% of the peer rate against the "
                               "one-shot's 75%, docs/fused.md); 0: never Lamport",
                               0,
                               int64_t{1} << 34,
                               true};

// One row: on 2 x H100 (bf16, rows of 8 and 16 KiB, 4-64 MiB) no lag
// measured worse at every size, and 2 or 4 rows worse than one
// (bench/results/fused-h100x2.md, "How far ahead").
config::IntParam g_lamport_lag{"STRATA_FUSED_LAMPORT_LAG_ROWS", 1,
                               "How many rows ahead of the row it reduces each block of the fused Lamport kernel posts "
                               "its rows to the peers (0: each row is taken right after it is posted): the NVLink "
                               "stores of the rows ahead overlap the reduction of the row taken",
                               0, 64};

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

Tensors rows_of(const Tensors& t, size_t begin, size_t count, size_t row_bytes) noexcept {
  auto shift = [&](auto* p) {
    return p == nullptr ? p : reinterpret_cast<decltype(p)>(reinterpret_cast<uintptr_t>(p) + begin * row_bytes);
  };
  Tensors r = t;
  r.x = shift(t.x);
  r.residual = shift(t.residual);
  r.out = shift(t.out);
  r.tokens = count;
  return r;
}

int64_t timeout_ms() noexcept { return g_timeout_ms.get(); }
size_t lamport_max_bytes() noexcept { return static_cast<size_t>(g_lamport_max.get()); }

int lamport_lag_rows() noexcept { return static_cast<int>(g_lamport_lag.get()); }

bool vector_aligned(const Tensors& t, size_t hidden, size_t element) noexcept {
  return (hidden * element) % 16 == 0 && aligned16(t.x) && aligned16(t.residual) && aligned16(t.weight) &&
         aligned16(t.out);
}

bool agree(MPI_Comm comm, bool ok, const std::string& reason, const char* what, std::string* why) noexcept {
  int rank = 0, size = 0;
  if (real().MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    *why = std::string(what) + ": the communicator cannot be queried";
    return false;
  }
  int mine = ok ? size : rank, first = size;
  if (real().MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
    *why = std::string(what) + ": MPI_Allreduce failed";
    return false;
  }
  if (first == size) return true;
  // The failing rank's reason, for every rank's message.
  int length = rank == first ? static_cast<int>(reason.size()) : 0;
  std::vector<char> text;
  if (real().MPI_Bcast(&length, 1, MPI_INT, first, comm) == MPI_SUCCESS && length > 0) {
    text.assign(reason.begin(), reason.end());
    text.resize(static_cast<size_t>(length));
    if (real().MPI_Bcast(text.data(), length, MPI_CHAR, first, comm) != MPI_SUCCESS) text.clear();
  }
  *why = std::string(what) + " failed on rank " + std::to_string(first);
  if (!text.empty()) *why += ": " + std::string(text.begin(), text.end());
  return false;
}

Status all_on_one_node(MPI_Comm comm, const char* reach, std::string* why) noexcept {
  int rank = 0, size = 0, node_size = 0;
  MPI_Comm node = MPI_COMM_NULL;
  if (real().MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS ||
      real().MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
      real().MPI_Comm_size(node, &node_size) != MPI_SUCCESS) {
    *why = "MPI_Comm_split_type failed";
    return Status::mpi_error;
  }
  real().MPI_Comm_free(&node);
  const std::string what = std::string("one node for all ranks (") + reach + ")";
  return agree(comm, node_size == size, "its node holds " + std::to_string(node_size) + " of the ranks", what.c_str(),
               why)
             ? Status::ok
             : Status::not_supported;
}

}  // namespace strata::fused
