#include "collectives/on_host.hpp"

#include "mpi/real_mpi.hpp"
#include "portability/mover/host_mirror.hpp"

#include <algorithm>

namespace strata::coll::on_host {
namespace {

// The algorithm host code can run for this call: a hierarchy of fewer than
// two levels is flat; the library has no float16/bfloat16 reductions.
Algorithm host_algorithm(const Context& c, Algorithm a, DataType type, bool reduces) {
  if ((a == Algorithm::hierarchical || a == Algorithm::two_level) && c.hierarchy(a).levels.size() < 2) {
    a = Algorithm::library;
  }
  const bool library_ok = !reduces || (type != DataType::float16 && type != DataType::bfloat16);
  if (a == Algorithm::library && !library_ok) return Algorithm::ring;
  return a;
}

void* writable(const void* p) { return const_cast<void*>(p); }

}  // namespace

Status allreduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                 Algorithm algorithm, void* stream) noexcept {
  const size_t bytes = count * size_of(type);
  mover::HostMirror in, out;
  const bool in_place = send == MPI_IN_PLACE;
  if (!in_place) STRATA_TRY(in.open(writable(send), bytes, true, stream));
  STRATA_TRY(out.open(recv, bytes, in_place, stream));
  STRATA_TRY(host::allreduce(in_place ? MPI_IN_PLACE : in.data(), out.data(), count, type, op,
                             host_algorithm(c, algorithm, type, true), c.hierarchy(algorithm)));
  return out.flush(stream);
}

Status reduce_scatter(Context& c, const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op,
                      Algorithm algorithm, void* stream) noexcept {
  const size_t bytes = recv_count * size_of(type);
  const size_t full = bytes * static_cast<size_t>(c.size());
  mover::HostMirror in, out;
  const bool in_place = send == MPI_IN_PLACE;
  if (!in_place) STRATA_TRY(in.open(writable(send), full, true, stream));
  STRATA_TRY(out.open(recv, in_place ? full : bytes, in_place, stream));
  STRATA_TRY(host::reduce_scatter(in_place ? MPI_IN_PLACE : in.data(), out.data(), recv_count, type, op,
                                  host_algorithm(c, algorithm, type, true), c.hierarchy(algorithm)));
  return out.flush(stream);
}

Status allgather(Context& c, const void* send, void* recv, size_t send_count, DataType type, Algorithm algorithm,
                 void* stream) noexcept {
  const size_t bytes = send_count * size_of(type);
  mover::HostMirror in, out;
  const bool in_place = send == MPI_IN_PLACE;
  if (!in_place) STRATA_TRY(in.open(writable(send), bytes, true, stream));
  STRATA_TRY(out.open(recv, bytes * static_cast<size_t>(c.size()), in_place, stream));
  STRATA_TRY(host::allgather(in_place ? MPI_IN_PLACE : in.data(), out.data(), send_count, type,
                             host_algorithm(c, algorithm, type, false), c.hierarchy(algorithm)));
  return out.flush(stream);
}

Status broadcast(Context& c, void* buffer, size_t count, DataType type, int root, Algorithm algorithm,
                 void* stream) noexcept {
  mover::HostMirror view;
  STRATA_TRY(view.open(buffer, count * size_of(type), c.rank() == root, stream));
  STRATA_TRY(host::broadcast(view.data(), count, type, root, host_algorithm(c, algorithm, type, false),
                             c.hierarchy(algorithm)));
  return view.flush(stream);
}

Status reduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root,
              Algorithm algorithm, void* stream) noexcept {
  const size_t bytes = count * size_of(type);
  const bool root_rank = c.rank() == root;
  const bool in_place = send == MPI_IN_PLACE;
  mover::HostMirror in, out;
  if (!in_place) STRATA_TRY(in.open(writable(send), bytes, true, stream));
  if (root_rank) STRATA_TRY(out.open(recv, bytes, in_place, stream));
  STRATA_TRY(host::reduce(in_place ? MPI_IN_PLACE : in.data(), root_rank ? out.data() : nullptr, count, type, op, root,
                          host_algorithm(c, algorithm, type, true), c.hierarchy(algorithm)));
  return root_rank ? out.flush(stream) : Status::ok;
}

Status build_secondary_partition(Context& c, const void* primary, size_t shard_count, void* secondary, DataType type,
                                 int level, void* stream) noexcept {
  const host::Hierarchy& h = c.hierarchy(Algorithm::hierarchical);
  if (level < 0 || static_cast<size_t>(level) >= h.levels.size()) return Status::invalid_argument;
  int group_size = 0;
  if (mpi::real().MPI_Comm_size(h.levels[static_cast<size_t>(level)].group, &group_size) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  const size_t element = size_of(type);
  const size_t secondary_count = shard_count * static_cast<size_t>(c.size() / std::max(1, group_size));
  mover::HostMirror in, out;
  STRATA_TRY(in.open(writable(primary), shard_count * element, true, stream));
  STRATA_TRY(out.open(secondary, secondary_count * element, false, stream));
  STRATA_TRY(host::build_secondary_partition(in.data(), shard_count, out.data(), type, level, h));
  return out.flush(stream);
}

Status gather_from_secondary(Context& c, const void* secondary, size_t shard_count, void* full, DataType type,
                             int level, void* stream) noexcept {
  const host::Hierarchy& h = c.hierarchy(Algorithm::hierarchical);
  if (level < 0 || static_cast<size_t>(level) >= h.levels.size()) return Status::invalid_argument;
  int group_size = 0;
  if (mpi::real().MPI_Comm_size(h.levels[static_cast<size_t>(level)].group, &group_size) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  const size_t element = size_of(type);
  const size_t secondary_count = shard_count * static_cast<size_t>(c.size() / std::max(1, group_size));
  mover::HostMirror in, out;
  STRATA_TRY(in.open(writable(secondary), secondary_count * element, true, stream));
  STRATA_TRY(out.open(full, shard_count * static_cast<size_t>(c.size()) * element, false, stream));
  STRATA_TRY(host::gather_from_secondary(in.data(), shard_count, out.data(), type, level, h));
  return out.flush(stream);
}

}  // namespace strata::coll::on_host
