// Device-buffer collectives on NCCL communicators.
//
// Flat (Algorithm::library): one NCCL call on the whole communicator.
// Hierarchical and two-level allreduce: reduce-scatter on each step's
// communicator but the last (step 0 on the fastest level), allreduce of the
// remaining shard on the last, all-gathers back in reverse; all in place in
// the receive buffer, so no scratch. Elements beyond the largest multiple of
// the steps' fan-out product are reduced by one flat allreduce.
// Hierarchical reduce-scatter and all-gather reorder the rank chunks in a
// scratch buffer into the order the steps produce (StepLayout::order).
// Broadcast and reduce are flat: NCCL pipelines them at the link rate, and
// the root's data crosses the slowest level once either way.
#include "collectives/device_backend.hpp"
#include "collectives/nccl/device_state.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::coll::device {
namespace {

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::int32: return ncclInt32;
    case DataType::int64: return ncclInt64;
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
    case DataType::float16: return ncclFloat16;
    case DataType::bfloat16: return ncclBfloat16;
  }
  return ncclInt8;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
  }
  return ncclSum;
}

char* at(void* base, size_t elements, DataType type) { return static_cast<char*>(base) + elements * size_of(type); }
const char* at(const void* base, size_t elements, DataType type) {
  return static_cast<const char*>(base) + elements * size_of(type);
}

struct Call {
  const nccl::Library* lib;
  cudaStream_t stream;
};

Result<Call> call_for(void* stream) {
  const nccl::Library* lib = nccl::library();
  if (lib == nullptr) return Status::not_supported;
  return Call{lib, static_cast<cudaStream_t>(stream)};
}

// MPI_IN_PLACE: the input is already where the output goes.
const void* input_of(const void* send, const void* in_place_source) {
  return send == MPI_IN_PLACE ? in_place_source : send;
}

// Copies chunk d of `from` (d in layout order) to chunk order[d] of `to`, or
// the other way round; runs of consecutive ranks move in one copy.
Status permute(const StepLayout& layout, const char* from, char* to, size_t chunk_bytes, bool to_rank_order,
               void* stream) {
  const size_t n = layout.order.size();
  size_t d = 0;
  while (d < n) {
    size_t run = 1;
    while (d + run < n && layout.order[d + run] == layout.order[d] + static_cast<int>(run)) ++run;
    const size_t r = static_cast<size_t>(layout.order[d]);
    const char* src = to_rank_order ? from + d * chunk_bytes : from + r * chunk_bytes;
    char* dst = to_rank_order ? to + r * chunk_bytes : to + d * chunk_bytes;
    STRATA_TRY(gpu::memcpy_async(dst, src, run * chunk_bytes, stream));
    d += run;
  }
  return Status::ok;
}

Status flat_allreduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                      const Call& call) {
  Result<ncclComm_t> comm = comm_for(c, c.comm());
  if (!comm) return comm.status();
  return nccl::check(
      call.lib->AllReduce(input_of(send, recv), recv, count, nccl_type(type), nccl_op(op), comm.value(), call.stream),
      "ncclAllReduce");
}

// Creates every NCCL communicator a hierarchical call needs before any work
// is queued (creation is collective and blocking).
Status ready(Context& c, const StepLayout& l, bool with_flat) {
  for (MPI_Comm step : l.steps) {
    Result<ncclComm_t> comm = comm_for(c, step);
    if (!comm) return comm.status();
  }
  if (!with_flat) return Status::ok;
  Result<ncclComm_t> flat = comm_for(c, c.comm());
  return flat.status();
}

}  // namespace

bool nccl_available() noexcept { return nccl::library() != nullptr; }

Algorithm usable(Algorithm wanted, const Context& context) noexcept {
  if (wanted != Algorithm::hierarchical && wanted != Algorithm::two_level) return Algorithm::library;
  const host::Hierarchy& h = context.hierarchy(wanted);
  if (!h.uniform || h.levels.size() < 2) return Algorithm::library;
  return wanted;
}

Status allreduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                 Algorithm algorithm, void* stream) noexcept {
  Result<Call> call = call_for(stream);
  if (!call) return call.status();
  if (count == 0) return Status::ok;
  if (usable(algorithm, c) == Algorithm::library) return flat_allreduce(c, send, recv, count, type, op, call.value());
  Result<const StepLayout*> layout = layout_for(c, algorithm);
  if (!layout) return layout.status();
  const StepLayout& l = *layout.value();
  STRATA_TRY(ready(c, l, /*with_flat=*/true));
  const size_t steps = l.steps.size();
  size_t split = 1;  // the reduce-scatter steps' fan-out product
  for (size_t k = 0; k + 1 < steps; ++k) split *= static_cast<size_t>(l.fanout[k]);
  const size_t main = count / split * split;
  const Call& k_call = call.value();
  if (main > 0) {
    // Reduce-scatter down: after step k my shard is `shard` elements at `offset`.
    size_t offset = 0, shard = main;
    std::vector<size_t> offsets;
    for (size_t k = 0; k + 1 < steps; ++k) {
      Result<ncclComm_t> comm = comm_for(c, l.steps[k]);
      if (!comm) return comm.status();
      int pos = 0;
      mpi::real().MPI_Comm_rank(l.steps[k], &pos);
      const size_t part = shard / static_cast<size_t>(l.fanout[k]);
      const void* in = k == 0 ? input_of(send, recv) : static_cast<const void*>(at(recv, offset, type));
      offsets.push_back(offset);
      STRATA_TRY(nccl::check(k_call.lib->ReduceScatter(in, at(recv, offset + static_cast<size_t>(pos) * part, type),
                                                       part, nccl_type(type), nccl_op(op), comm.value(), k_call.stream),
                             "ncclReduceScatter"));
      offset += static_cast<size_t>(pos) * part;
      shard = part;
    }
    Result<ncclComm_t> top = comm_for(c, l.steps[steps - 1]);
    if (!top) return top.status();
    STRATA_TRY(nccl::check(k_call.lib->AllReduce(at(recv, offset, type), at(recv, offset, type), shard, nccl_type(type),
                                                 nccl_op(op), top.value(), k_call.stream),
                           "ncclAllReduce"));
    // All-gather back up, in place.
    for (size_t k = steps - 1; k-- > 0;) {
      Result<ncclComm_t> comm = comm_for(c, l.steps[k]);
      if (!comm) return comm.status();
      const size_t base = offsets[k];
      STRATA_TRY(nccl::check(k_call.lib->AllGather(at(recv, offset, type), at(recv, base, type), shard, nccl_type(type),
                                                   comm.value(), k_call.stream),
                             "ncclAllGather"));
      offset = base;
      shard *= static_cast<size_t>(l.fanout[k]);
    }
  }
  if (main < count) {
    const void* tail_in = send == MPI_IN_PLACE ? static_cast<const void*>(at(recv, main, type)) : at(send, main, type);
    return flat_allreduce(c, tail_in, at(recv, main, type), count - main, type, op, k_call);
  }
  return Status::ok;
}

Status reduce_scatter(Context& c, const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op,
                      Algorithm algorithm, void* stream) noexcept {
  Result<Call> call = call_for(stream);
  if (!call) return call.status();
  if (recv_count == 0) return Status::ok;
  const Call& k_call = call.value();
  const size_t n = static_cast<size_t>(c.size());
  // MPI_IN_PLACE: the full input is in recv, my block goes to its start.
  const void* input = input_of(send, recv);
  if (usable(algorithm, c) == Algorithm::library) {
    Result<ncclComm_t> comm = comm_for(c, c.comm());
    if (!comm) return comm.status();
    if (send == MPI_IN_PLACE) {
      // NCCL's in-place form leaves the block at recv + rank*count; MPI's at recv.
      STRATA_TRY(
          nccl::check(k_call.lib->ReduceScatter(recv, at(recv, static_cast<size_t>(c.rank()) * recv_count, type),
                                                recv_count, nccl_type(type), nccl_op(op), comm.value(), k_call.stream),
                      "ncclReduceScatter"));
      if (c.rank() == 0) return Status::ok;
      return gpu::memcpy_async(recv, at(recv, static_cast<size_t>(c.rank()) * recv_count, type),
                               recv_count * size_of(type), stream);
    }
    return nccl::check(
        k_call.lib->ReduceScatter(input, recv, recv_count, nccl_type(type), nccl_op(op), comm.value(), k_call.stream),
        "ncclReduceScatter");
  }
  Result<const StepLayout*> layout = layout_for(c, algorithm);
  if (!layout) return layout.status();
  const StepLayout& l = *layout.value();
  STRATA_TRY(ready(c, l, /*with_flat=*/false));
  const size_t chunk = recv_count * size_of(type);
  Result<void*> space = scratch(c, n * chunk);
  if (!space) return space.status();
  char* work = static_cast<char*>(space.value());
  STRATA_TRY(permute(l, static_cast<const char*>(input), work, chunk, /*to_rank_order=*/false, stream));
  size_t offset = 0, shard = n * recv_count;
  for (size_t k = 0; k < l.steps.size(); ++k) {
    Result<ncclComm_t> comm = comm_for(c, l.steps[k]);
    if (!comm) return comm.status();
    int pos = 0;
    mpi::real().MPI_Comm_rank(l.steps[k], &pos);
    const size_t part = shard / static_cast<size_t>(l.fanout[k]);
    STRATA_TRY(nccl::check(
        k_call.lib->ReduceScatter(at(work, offset, type), at(work, offset + static_cast<size_t>(pos) * part, type),
                                  part, nccl_type(type), nccl_op(op), comm.value(), k_call.stream),
        "ncclReduceScatter"));
    offset += static_cast<size_t>(pos) * part;
    shard = part;
  }
  return gpu::memcpy_async(recv, at(work, offset, type), chunk, stream);
}

Status allgather(Context& c, const void* send, void* recv, size_t send_count, DataType type, Algorithm algorithm,
                 void* stream) noexcept {
  Result<Call> call = call_for(stream);
  if (!call) return call.status();
  if (send_count == 0) return Status::ok;
  const Call& k_call = call.value();
  const size_t n = static_cast<size_t>(c.size());
  const size_t chunk = send_count * size_of(type);
  // MPI_IN_PLACE: my block is already at recv + rank*count (NCCL's in-place form too).
  const void* mine = send == MPI_IN_PLACE
                         ? static_cast<const void*>(at(recv, static_cast<size_t>(c.rank()) * send_count, type))
                         : send;
  if (usable(algorithm, c) == Algorithm::library) {
    Result<ncclComm_t> comm = comm_for(c, c.comm());
    if (!comm) return comm.status();
    return nccl::check(k_call.lib->AllGather(mine, recv, send_count, nccl_type(type), comm.value(), k_call.stream),
                       "ncclAllGather");
  }
  Result<const StepLayout*> layout = layout_for(c, algorithm);
  if (!layout) return layout.status();
  const StepLayout& l = *layout.value();
  STRATA_TRY(ready(c, l, /*with_flat=*/false));
  Result<void*> space = scratch(c, n * chunk);
  if (!space) return space.status();
  char* work = static_cast<char*>(space.value());
  // My chunk at my layout index, then all-gathers from the last step back to
  // step 0, each in place on the region my earlier steps share.
  size_t shard = send_count;
  size_t offset = static_cast<size_t>(l.my_index) * send_count;
  STRATA_TRY(gpu::memcpy_async(at(work, offset, type), mine, chunk, stream));
  for (size_t k = l.steps.size(); k-- > 0;) {
    Result<ncclComm_t> comm = comm_for(c, l.steps[k]);
    if (!comm) return comm.status();
    int pos = 0;
    mpi::real().MPI_Comm_rank(l.steps[k], &pos);
    const size_t base = offset - static_cast<size_t>(pos) * shard;
    STRATA_TRY(nccl::check(k_call.lib->AllGather(at(work, offset, type), at(work, base, type), shard, nccl_type(type),
                                                 comm.value(), k_call.stream),
                           "ncclAllGather"));
    offset = base;
    shard *= static_cast<size_t>(l.fanout[k]);
  }
  return permute(l, work, static_cast<char*>(recv), chunk, /*to_rank_order=*/true, stream);
}

Status broadcast(Context& c, void* buffer, size_t count, DataType type, int root, Algorithm, void* stream) noexcept {
  Result<Call> call = call_for(stream);
  if (!call) return call.status();
  if (count == 0) return Status::ok;
  Result<ncclComm_t> comm = comm_for(c, c.comm());
  if (!comm) return comm.status();
  return nccl::check(
      call.value().lib->Broadcast(buffer, buffer, count, nccl_type(type), root, comm.value(), call.value().stream),
      "ncclBroadcast");
}

Status reduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root, Algorithm,
              void* stream) noexcept {
  Result<Call> call = call_for(stream);
  if (!call) return call.status();
  if (count == 0) return Status::ok;
  Result<ncclComm_t> comm = comm_for(c, c.comm());
  if (!comm) return comm.status();
  // MPI_IN_PLACE at the root: the input is in recv.
  return nccl::check(call.value().lib->Reduce(input_of(send, recv), recv, count, nccl_type(type), nccl_op(op), root,
                                              comm.value(), call.value().stream),
                     "ncclReduce");
}

}  // namespace strata::coll::device
