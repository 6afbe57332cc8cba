// The public collectives: argument checks, then the route every rank agrees
// on (routing.hpp: NCCL where every rank's buffers are in device memory and
// NCCL runs on every rank, else the host algorithms or the library on host
// memory, device buffers staged) and its run (run.hpp).
#include <strata/collectives.hpp>

#include "base/config.hpp"
#include "base/log.hpp"
#include "collectives/context.hpp"
#include "collectives/device_backend.hpp"
#include "collectives/on_host.hpp"
#include "collectives/routing.hpp"
#include "collectives/run.hpp"
#include "collectives/settings.hpp"
#include "fault/hooks.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::coll {

using mpi::real;

namespace {

bool valid(DataType t) { return static_cast<unsigned>(t) <= static_cast<unsigned>(DataType::bfloat16); }
bool valid(ReduceOp op) { return static_cast<unsigned>(op) <= static_cast<unsigned>(ReduceOp::max); }

::strata::device::Pointer where(const void* p) {
  if (p == nullptr || p == MPI_IN_PLACE) return {};
  return gpu::classify(p);
}

Result<Decision> plan(Collective collective, std::initializer_list<const void*> buffers, size_t bytes, MPI_Comm comm,
                      const Options& options) {
  Result<Decision> d = decide(collective, comm, bytes, true, on_current_device(buffers), options.algorithm, true);
  if (!d) return d.status();
  if (d.value().context == nullptr) return Status::internal;  // decide makes one when required
  return d;
}

Status checked_root(int root, MPI_Comm comm) {
  int size = 0;
  if (comm == MPI_COMM_NULL || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) return Status::invalid_argument;
  return root >= 0 && root < size ? Status::ok : Status::invalid_argument;
}

}  // namespace

Status allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, MPI_Comm comm,
                 const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::allreduce, comm, count * size_of(type), -1, options.stream);
  if (!valid(type) || !valid(op) || ((recv == nullptr || send == nullptr) && count > 0)) {
    return Status::invalid_argument;  // null buffers are legal for no elements, as in MPI
  }
  Result<Decision> d = plan(Collective::allreduce, {send, recv}, count * size_of(type), comm, options);
  if (!d) return d.status();
  return run_allreduce(d.value(), send, recv, count, type, op, options.stream);
}

Status reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op, MPI_Comm comm,
                      const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::reduce_scatter, comm, recv_count * size_of(type), -1, options.stream);
  if (!valid(type) || !valid(op) || ((recv == nullptr || send == nullptr) && recv_count > 0)) {
    return Status::invalid_argument;
  }
  int size = 0;
  if (comm == MPI_COMM_NULL || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) return Status::invalid_argument;
  Result<Decision> d = plan(Collective::reduce_scatter, {send, recv},
                            recv_count * size_of(type) * static_cast<size_t>(size), comm, options);
  if (!d) return d.status();
  return run_reduce_scatter(d.value(), send, recv, recv_count, type, op, options.stream);
}

Status allgather(const void* send, void* recv, size_t send_count, DataType type, MPI_Comm comm,
                 const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::allgather, comm, send_count * size_of(type), -1, options.stream);
  if (!valid(type) || ((recv == nullptr || send == nullptr) && send_count > 0)) return Status::invalid_argument;
  int size = 0;
  if (comm == MPI_COMM_NULL || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) return Status::invalid_argument;
  Result<Decision> d =
      plan(Collective::allgather, {send, recv}, send_count * size_of(type) * static_cast<size_t>(size), comm, options);
  if (!d) return d.status();
  return run_allgather(d.value(), send, recv, send_count, type, options.stream);
}

Status broadcast(void* buffer, size_t count, DataType type, int root, MPI_Comm comm, const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::bcast, comm, count * size_of(type), root, options.stream);
  if (!valid(type) || (buffer == nullptr && count > 0)) return Status::invalid_argument;
  STRATA_TRY(checked_root(root, comm));
  Result<Decision> d = plan(Collective::broadcast, {buffer}, count * size_of(type), comm, options);
  if (!d) return d.status();
  return run_broadcast(d.value(), buffer, count, type, root, options.stream);
}

Status reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root, MPI_Comm comm,
              const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::reduce, comm, count * size_of(type), root, options.stream);
  if (!valid(type) || !valid(op) || (send == nullptr && count > 0)) return Status::invalid_argument;
  STRATA_TRY(checked_root(root, comm));
  int rank = 0;
  if (real().MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return Status::invalid_argument;
  if (rank == root && recv == nullptr && count > 0) return Status::invalid_argument;
  if (send == MPI_IN_PLACE && rank != root) return Status::invalid_argument;  // as MPI: in place at the root only
  Result<Decision> d =
      plan(Collective::reduce, {send, rank == root ? recv : nullptr}, count * size_of(type), comm, options);
  if (!d) return d.status();
  return run_reduce(d.value(), send, recv, count, type, op, root, options.stream);
}

// hpZ: host algorithms; device buffers are staged (no NCCL form yet).
Status build_secondary_partition(const void* primary, size_t shard_count, void* secondary, DataType type, int level,
                                 MPI_Comm comm, const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::secondary_partition, comm, shard_count * size_of(type), -1, options.stream);
  if (!valid(type) || ((primary == nullptr || secondary == nullptr) && shard_count > 0))
    return Status::invalid_argument;
  Result<Context*> c = Context::of(comm);
  if (!c) return c.status();
  gpu::ScopedDevice on(where(primary).device);
  return on_host::build_secondary_partition(*c.value(), primary, shard_count, secondary, type, level, options.stream);
}

Status gather_from_secondary(const void* secondary, size_t shard_count, void* full, DataType type, int level,
                             MPI_Comm comm, const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::secondary_partition, comm, shard_count * size_of(type), -1, options.stream);
  if (!valid(type) || ((secondary == nullptr || full == nullptr) && shard_count > 0)) return Status::invalid_argument;
  Result<Context*> c = Context::of(comm);
  if (!c) return c.status();
  gpu::ScopedDevice on(where(full).device);
  return on_host::gather_from_secondary(*c.value(), secondary, shard_count, full, type, level, options.stream);
}

Result<Algorithm> chosen_algorithm(Collective collective, size_t bytes, bool device, MPI_Comm comm) noexcept {
  Result<Context*> context = Context::of(comm);
  if (!context) return context.status();
  const Algorithm forced = forced_algorithm();
  const Algorithm a = forced != Algorithm::automatic ? forced : context.value()->choose(collective, bytes, device);
  return device && context.value()->nccl_capable() ? device::usable(a, *context.value()) : a;
}

}  // namespace strata::coll
