// Device point-to-point on the collectives' NCCL communicators: ncclSend /
// ncclRecv of raw bytes (ncclInt8, so that both ends match whatever type
// they were given), one NCCL group per call of p2p_post. The communicator is
// looked up (or created) with the op's device current, as comm_for keys it.
#include "collectives/nccl/device_state.hpp"
#include "collectives/p2p_backend.hpp"

#include "base/log.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::coll::device {
namespace {

// NCCL 2.7.0: ncclSend / ncclRecv. Versions before 2.9 encode as
// major*1000 + minor*100 + patch, later ones as major*10000 + minor*100 +
// patch; both orders put 2.7.0 at 2700 and everything later above it.
constexpr int kFirstP2pVersion = 2700;

}  // namespace

bool p2p_available() noexcept {
  const nccl::Library* lib = nccl::library();
  if (lib == nullptr) return false;
  const bool ok = lib->Send != nullptr && lib->Recv != nullptr && lib->version >= kFirstP2pVersion;
  if (!ok) {
    STRATA_LOG_ONCE(warn, kColl,
                    "NCCL %d has no ncclSend/ncclRecv (2.7 or later needed): device send/receive "
                    "is not supported",
                    lib->version);
  }
  return ok;
}

Status p2p_prepare(const P2pOp& op) noexcept {
  if (op.context == nullptr) return Status::internal;
  gpu::ScopedDevice on(op.device);
  Result<ncclComm_t> comm = comm_for(*op.context, op.context->comm());
  return comm.status();
}

Status p2p_post(const P2pOp* ops, size_t count) noexcept {
  if (count == 0) return Status::ok;
  if (!p2p_available()) return Status::not_supported;
  const nccl::Library* lib = nccl::library();
  // The communicators first: comm_for may create one (collective, blocking),
  // which must not happen inside the NCCL group.
  for (size_t i = 0; i < count; ++i) STRATA_TRY(p2p_prepare(ops[i]));
  STRATA_TRY(nccl::check(lib->GroupStart(), "ncclGroupStart"));
  Status first = Status::ok;
  for (size_t i = 0; i < count && first == Status::ok; ++i) {
    const P2pOp& op = ops[i];
    gpu::ScopedDevice on(op.device);
    Result<ncclComm_t> comm = comm_for(*op.context, op.context->comm());
    if (!comm) {
      first = comm.status();
      break;
    }
    const auto stream = static_cast<cudaStream_t>(op.stream);
    first = op.send ? nccl::check(lib->Send(op.buffer, op.bytes, ncclInt8, op.peer, comm.value(), stream), "ncclSend")
                    : nccl::check(lib->Recv(op.buffer, op.bytes, ncclInt8, op.peer, comm.value(), stream), "ncclRecv");
  }
  // The group is closed whatever happened: NCCL's group state is per thread.
  const Status end = nccl::check(lib->GroupEnd(), "ncclGroupEnd");
  return first != Status::ok ? first : end;
}

}  // namespace strata::coll::device
