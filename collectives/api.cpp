// The public collectives: argument checks, the communicator's context, the
// algorithm (the caller's, STRATA_COLL_ALGO, or the cost model's), and the
// path: NCCL for device buffers where it is loaded, the host algorithms
// otherwise (device buffers staged through host memory).
#include <strata/collectives.hpp>

#include "base/config.hpp"
#include "base/log.hpp"
#include "collectives/context.hpp"
#include "collectives/device_backend.hpp"
#include "collectives/on_host.hpp"
#include "fault/hooks.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::coll {
namespace {

config::ChoiceParam<Algorithm> g_algorithm{
    "STRATA_COLL_ALGO",
    Algorithm::automatic,
    {{"auto", Algorithm::automatic},
     {"library", Algorithm::library},
     {"ring", Algorithm::ring},
     {"recursive", Algorithm::recursive},
     {"hierarchical", Algorithm::hierarchical},
     {"two_level", Algorithm::two_level}},
    "Collectives' algorithm where the caller asks for automatic: auto (the cost model), library (the MPI library on "
    "host, flat NCCL on device), ring, recursive (host only), hierarchical (every topology level), two_level (within "
    "nodes, then across)"};

bool valid(DataType t) { return static_cast<unsigned>(t) <= static_cast<unsigned>(DataType::bfloat16); }
bool valid(ReduceOp op) { return static_cast<unsigned>(op) <= static_cast<unsigned>(ReduceOp::max); }

::strata::device::Pointer where(const void* p) {
  if (p == nullptr || p == MPI_IN_PLACE) return {};
  return gpu::classify(p);
}
bool is_device(const ::strata::device::Pointer& p) {
  return p.kind == ::strata::device::MemoryKind::device || p.kind == ::strata::device::MemoryKind::managed;
}

// One call's context, algorithm and path.
struct Plan {
  Context* context = nullptr;
  Algorithm algorithm = Algorithm::library;
  bool nccl = false;  // every buffer on one device, and NCCL loaded
  int device = -1;
};

Result<Plan> plan(Collective collective, std::initializer_list<const void*> buffers, size_t bytes, MPI_Comm comm,
                  const Options& options) {
  Result<Context*> context = Context::of(comm);
  if (!context) return context.status();
  Plan p;
  p.context = context.value();
  int devices = 0, hosts = 0;
  for (const void* b : buffers) {
    const ::strata::device::Pointer w = where(b);
    if (b == nullptr || b == MPI_IN_PLACE) continue;
    if (is_device(w)) {
      if (p.device >= 0 && w.device != p.device) ++hosts;  // two devices: not one NCCL call
      p.device = w.device;
      ++devices;
    } else {
      ++hosts;
    }
  }
  const bool device_call = devices > 0;
  p.nccl = device_call && hosts == 0 && !p.context->ranks_share_a_gpu() && device::nccl_available();
  Algorithm a = options.algorithm;
  if (a == Algorithm::automatic) a = g_algorithm.get();
  if (a == Algorithm::automatic) a = p.context->choose(collective, bytes, device_call);
  if (p.nccl) {
    const Algorithm usable = device::usable(a, *p.context);
    if (usable != a && options.algorithm != Algorithm::automatic) {
      STRATA_LOG_ONCE(info, kColl, "%s on device buffers: %s does not apply here, flat NCCL instead",
                      to_string(collective), to_string(a));
    }
    a = usable;
  }
  p.algorithm = a;
  STRATA_LOG(debug, kColl, "%s %zu bytes: %s, %s", to_string(collective), bytes, to_string(a),
             p.nccl ? "NCCL" : (device_call ? "staged through host memory" : "host"));
  return p;
}

Status checked_root(int root, MPI_Comm comm) {
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return Status::invalid_argument;
  return root >= 0 && root < size ? Status::ok : Status::invalid_argument;
}

}  // namespace

Status allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, MPI_Comm comm,
                 const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::allreduce, comm, count * size_of(type), -1, options.stream);
  if (!valid(type) || !valid(op) || ((recv == nullptr || send == nullptr) && count > 0)) {
    return Status::invalid_argument;  // null buffers are legal for no elements, as in MPI
  }
  Result<Plan> p = plan(Collective::allreduce, {send, recv}, count * size_of(type), comm, options);
  if (!p) return p.status();
  gpu::ScopedDevice on(p.value().device);
  Context& c = *p.value().context;
  if (p.value().nccl) return device::allreduce(c, send, recv, count, type, op, p.value().algorithm, options.stream);
  return on_host::allreduce(c, send, recv, count, type, op, p.value().algorithm, options.stream);
}

Status reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op, MPI_Comm comm,
                      const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::reduce_scatter, comm, recv_count * size_of(type), -1, options.stream);
  if (!valid(type) || !valid(op) || ((recv == nullptr || send == nullptr) && recv_count > 0)) {
    return Status::invalid_argument;
  }
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return Status::invalid_argument;
  Result<Plan> p = plan(Collective::reduce_scatter, {send, recv},
                        recv_count * size_of(type) * static_cast<size_t>(size), comm, options);
  if (!p) return p.status();
  gpu::ScopedDevice on(p.value().device);
  Context& c = *p.value().context;
  if (p.value().nccl) {
    return device::reduce_scatter(c, send, recv, recv_count, type, op, p.value().algorithm, options.stream);
  }
  return on_host::reduce_scatter(c, send, recv, recv_count, type, op, p.value().algorithm, options.stream);
}

Status allgather(const void* send, void* recv, size_t send_count, DataType type, MPI_Comm comm,
                 const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::allgather, comm, send_count * size_of(type), -1, options.stream);
  if (!valid(type) || ((recv == nullptr || send == nullptr) && send_count > 0)) return Status::invalid_argument;
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return Status::invalid_argument;
  Result<Plan> p =
      plan(Collective::allgather, {send, recv}, send_count * size_of(type) * static_cast<size_t>(size), comm, options);
  if (!p) return p.status();
  gpu::ScopedDevice on(p.value().device);
  Context& c = *p.value().context;
  if (p.value().nccl) return device::allgather(c, send, recv, send_count, type, p.value().algorithm, options.stream);
  return on_host::allgather(c, send, recv, send_count, type, p.value().algorithm, options.stream);
}

Status broadcast(void* buffer, size_t count, DataType type, int root, MPI_Comm comm, const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::bcast, comm, count * size_of(type), root, options.stream);
  if (!valid(type) || (buffer == nullptr && count > 0)) return Status::invalid_argument;
  STRATA_TRY(checked_root(root, comm));
  Result<Plan> p = plan(Collective::broadcast, {buffer}, count * size_of(type), comm, options);
  if (!p) return p.status();
  gpu::ScopedDevice on(p.value().device);
  Context& c = *p.value().context;
  if (p.value().nccl) return device::broadcast(c, buffer, count, type, root, p.value().algorithm, options.stream);
  return on_host::broadcast(c, buffer, count, type, root, p.value().algorithm, options.stream);
}

Status reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root, MPI_Comm comm,
              const Options& options) noexcept {
  fault::CollScope rec(fault::OpKind::reduce, comm, count * size_of(type), root, options.stream);
  if (!valid(type) || !valid(op) || (send == nullptr && count > 0)) return Status::invalid_argument;
  STRATA_TRY(checked_root(root, comm));
  int rank = 0;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return Status::invalid_argument;
  if (rank == root && recv == nullptr && count > 0) return Status::invalid_argument;
  if (send == MPI_IN_PLACE && rank != root) return Status::invalid_argument;  // as MPI: in place at the root only
  Result<Plan> p =
      plan(Collective::reduce, {send, rank == root ? recv : nullptr}, count * size_of(type), comm, options);
  if (!p) return p.status();
  gpu::ScopedDevice on(p.value().device);
  Context& c = *p.value().context;
  if (p.value().nccl) return device::reduce(c, send, recv, count, type, op, root, p.value().algorithm, options.stream);
  return on_host::reduce(c, send, recv, count, type, op, root, p.value().algorithm, options.stream);
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
  const Algorithm forced = g_algorithm.get();
  const Algorithm a = forced != Algorithm::automatic ? forced : context.value()->choose(collective, bytes, device);
  return device && device::nccl_available() ? device::usable(a, *context.value()) : a;
}

}  // namespace strata::coll
