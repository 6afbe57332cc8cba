// The public point-to-point calls (strata/collectives.hpp): send, recv,
// groups, exchange. Each call checks its arguments and chooses a path for
// its buffer:
//
//   host memory                                  -> MPI on the caller's communicator
//   device memory, NCCL loaded, no shared GPU    -> ncclSend / ncclRecv (p2p_backend.hpp)
//   device memory otherwise                      -> staged through host memory, then MPI
//
// A call outside a group runs at once; inside one it is kept (per thread)
// and every kept call runs when the outermost group ends: the NCCL ones as
// one NCCL group, then the MPI ones posted nonblocking and waited for
// together, so no order of posts deadlocks. Each send and receive is one
// flight record (a send, recv or, for exchange, sendrecv record): for a call
// inside a group it covers the post, the transfer happening in group_end.
#include <strata/collectives.hpp>

#include "base/log.hpp"
#include "collectives/context.hpp"
#include "collectives/device_backend.hpp"
#include "collectives/host/internal.hpp"
#include "collectives/p2p_backend.hpp"
#include "fault/hooks.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/host_mirror.hpp"

#include <algorithm>
#include <climits>
#include <new>
#include <vector>

namespace strata::coll {

using mpi::real;

namespace {

enum class Path { mpi, staged, nccl };

const char* to_string(Path p) {
  switch (p) {
    case Path::mpi: return "MPI";
    case Path::staged: return "MPI, staged through host memory";
    case Path::nccl: return "NCCL";
  }
  return "?";
}

// One send or receive, planned and waiting to run.
struct Op {
  bool send = true;
  char* buffer = nullptr;
  size_t bytes = 0;
  int peer = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  Path path = Path::mpi;
  void* stream = nullptr;
  device::P2pOp device;  // Path::nccl
};

// This thread's group: its depth, the calls kept until it ends, and how
// many outermost groups have ended.
struct Group {
  int depth = 0;
  uint64_t ended = 0;
  std::vector<Op> ops;
};
thread_local Group t_group;

bool valid(DataType t) { return static_cast<unsigned>(t) <= static_cast<unsigned>(DataType::bfloat16); }

// The flight recorder counts bytes in an int.
int recorded_bytes(size_t count, DataType type) {
  const size_t bytes = valid(type) ? count * size_of(type) : 0;
  return static_cast<int>(std::min<size_t>(bytes, INT_MAX));
}

// Checks one call's arguments; *me = my rank in comm.
Status check(const void* buf, size_t count, DataType type, int peer, MPI_Comm comm, int* me) {
  if (!valid(type) || (buf == nullptr && count > 0) || comm == MPI_COMM_NULL) return Status::invalid_argument;
  int inter = 0, size = 0;
  if (real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS ||
      real().MPI_Comm_rank(comm, me) != MPI_SUCCESS) {
    return Status::invalid_argument;
  }
  if (inter) return Status::not_supported;  // NCCL has no inter-communicators
  if (peer != MPI_PROC_NULL && (peer < 0 || peer >= size)) return Status::invalid_argument;
  return Status::ok;
}

// Chooses the path of a checked call with something to move; creates the
// context and NCCL communicator where the path needs them.
Result<Op> plan(bool send, void* buf, size_t bytes, int peer, MPI_Comm comm, const Options& options) {
  Op op;
  op.send = send;
  op.buffer = static_cast<char*>(buf);
  op.bytes = bytes;
  op.peer = peer;
  op.comm = comm;
  op.stream = options.stream;
  if (mover::is_device_memory(buf)) {
    Result<Context*> context = Context::of(comm);  // collective over comm the first time
    if (!context) return context.status();
    if (!context.value()->nccl_capable()) {
      op.path = Path::staged;
    } else if (!device::p2p_available()) {
      return Status::not_supported;
    } else {
      op.path = Path::nccl;
      op.device.send = send;
      op.device.buffer = buf;
      op.device.bytes = bytes;
      op.device.peer = peer;
      op.device.context = context.value();
      op.device.device = gpu::classify(buf).device;
      op.device.stream = options.stream;
      STRATA_TRY(device::p2p_prepare(op.device));
    }
  }
  STRATA_LOG(debug, kColl, "%s %zu bytes %s %d: %s", send ? "send" : "recv", bytes, send ? "to" : "from", peer,
             to_string(op.path));
  return op;
}

// Cancels (receives) and completes whatever of `requests` is posted: no
// transfer may stay posted on a buffer the caller will free.
void abandon(std::vector<MPI_Request>& requests) {
  for (MPI_Request& r : requests) {
    if (r == MPI_REQUEST_NULL) continue;
    real().MPI_Cancel(&r);
    real().MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
}

// The MPI calls of a group: every piece posted, then waited for together;
// staged receives copied back to the device afterwards.
Status run_mpi(const std::vector<const Op*>& ops) {
  if (ops.empty()) return Status::ok;
  const size_t piece = host::detail::max_message_bytes();
  std::vector<mover::HostMirror> mirrors(ops.size());
  std::vector<MPI_Request> requests;
  std::vector<int> lengths;     // bytes each piece moves
  std::vector<bool> receiving;  // is the piece a receive
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = *ops[i];
    char* data = op.buffer;
    if (op.path == Path::staged) {
      // A send's bytes are copied in after the work queued on the stream.
      const Status s = mirrors[i].open(op.buffer, op.bytes, op.send, op.stream);
      if (s != Status::ok) {
        abandon(requests);
        return s;
      }
      data = mirrors[i].data();
    }
    for (size_t off = 0; off < op.bytes; off += piece) {
      const int len = static_cast<int>(std::min(piece, op.bytes - off));
      MPI_Request r = MPI_REQUEST_NULL;
      const int rc = op.send ? real().MPI_Isend(data + off, len, MPI_BYTE, op.peer, kP2pTag, op.comm, &r)
                             : real().MPI_Irecv(data + off, len, MPI_BYTE, op.peer, kP2pTag, op.comm, &r);
      const Status s = host::detail::mpi_check(rc, op.send ? "MPI_Isend" : "MPI_Irecv");
      if (s != Status::ok) {
        abandon(requests);
        return s;
      }
      requests.push_back(r);
      lengths.push_back(len);
      receiving.push_back(!op.send);
    }
  }
  std::vector<MPI_Status> statuses(requests.size());
  STRATA_TRY(host::detail::mpi_check(
      real().MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()), "MPI_Waitall"));
  Status result = Status::ok;
  for (size_t k = 0; k < requests.size(); ++k) {
    if (!receiving[k]) continue;
    int got = 0;
    if (real().MPI_Get_count(&statuses[k], MPI_BYTE, &got) != MPI_SUCCESS || got != lengths[k]) {
      STRATA_LOG(error, kColl, "recv from %d: a piece brought %d bytes, %d expected (the sender's count differs)",
                 statuses[k].MPI_SOURCE, got, lengths[k]);
      result = Status::invalid_argument;
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->path == Path::staged && !ops[i]->send) {
      const Status s = mirrors[i].flush(ops[i]->stream);
      if (result == Status::ok) result = s;
    }
  }
  return result;
}

// Runs planned calls: the NCCL ones first (queued, they cannot block the
// MPI ones), then the MPI ones.
Status run(const Op* ops, size_t count) {
  std::vector<device::P2pOp> on_device;
  std::vector<const Op*> on_mpi;
  for (size_t i = 0; i < count; ++i) {
    if (ops[i].path == Path::nccl) {
      on_device.push_back(ops[i].device);
    } else {
      on_mpi.push_back(&ops[i]);
    }
  }
  const Status queued = device::p2p_post(on_device.data(), on_device.size());
  const Status moved = run_mpi(on_mpi);
  return queued != Status::ok ? queued : moved;
}

// A checked send or receive: kept in the open group, or run now.
Status post(bool send, void* buf, size_t count, DataType type, int peer, int me, MPI_Comm comm,
            const Options& options) {
  if (peer == MPI_PROC_NULL || count == 0) return Status::ok;
  if (peer == me && t_group.depth == 0) {
    STRATA_LOG(error, kColl, "%s to/from my own rank outside a group: use a group or exchange()",
               send ? "send" : "recv");
    return Status::invalid_argument;
  }
  Result<Op> op = plan(send, buf, count * size_of(type), peer, comm, options);
  if (!op) return op.status();
  if (t_group.depth > 0) {
    t_group.ops.push_back(op.value());
    return Status::ok;
  }
  return run(&op.value(), 1);
}

Status out_of_memory(const char* what) {
  STRATA_LOG(error, kColl, "%s: out of memory", what);
  return Status::out_of_memory;
}

}  // namespace

Status send(const void* buf, size_t count, DataType type, int peer, MPI_Comm comm, const Options& options) noexcept {
  int me = 0;
  STRATA_TRY(check(buf, count, type, peer, comm, &me));
  fault::P2pScope rec(fault::OpKind::send, comm, recorded_bytes(count, type), MPI_BYTE, peer, kP2pTag);
  try {
    return post(true, const_cast<void*>(buf), count, type, peer, me, comm, options);
  } catch (const std::bad_alloc&) {
    return out_of_memory("send");
  }
}

Status recv(void* buf, size_t count, DataType type, int peer, MPI_Comm comm, const Options& options) noexcept {
  int me = 0;
  STRATA_TRY(check(buf, count, type, peer, comm, &me));
  fault::P2pScope rec(fault::OpKind::recv, comm, recorded_bytes(count, type), MPI_BYTE, peer, kP2pTag);
  try {
    return post(false, buf, count, type, peer, me, comm, options);
  } catch (const std::bad_alloc&) {
    return out_of_memory("recv");
  }
}

Status group_start() noexcept {
  ++t_group.depth;
  return Status::ok;
}

Status group_end() noexcept {
  if (t_group.depth == 0) {
    STRATA_LOG(error, kColl, "group_end without group_start");
    return Status::invalid_argument;
  }
  if (--t_group.depth > 0) return Status::ok;
  std::vector<Op> ops;
  ops.swap(t_group.ops);
  ++t_group.ended;
  try {
    return run(ops.data(), ops.size());
  } catch (const std::bad_alloc&) {
    return out_of_memory("group_end");
  }
}

bool in_group() noexcept { return t_group.depth > 0; }

uint64_t groups_ended() noexcept { return t_group.ended; }

Status exchange(const void* send_buf, size_t send_count, int dest, void* recv_buf, size_t recv_count, int source,
                DataType type, MPI_Comm comm, const Options& options) noexcept {
  int me = 0;
  STRATA_TRY(check(send_buf, send_count, type, dest, comm, &me));
  STRATA_TRY(check(recv_buf, recv_count, type, source, comm, &me));
  fault::P2pScope rec(fault::OpKind::sendrecv, comm, recorded_bytes(send_count, type), MPI_BYTE, dest, kP2pTag, nullptr,
                      source);
  STRATA_TRY(group_start());
  const size_t mark = t_group.ops.size();
  Status s = Status::ok;
  try {
    s = post(false, recv_buf, recv_count, type, source, me, comm, options);
    if (s == Status::ok) s = post(true, const_cast<void*>(send_buf), send_count, type, dest, me, comm, options);
  } catch (const std::bad_alloc&) {
    s = out_of_memory("exchange");
  }
  if (s != Status::ok) t_group.ops.resize(mark);  // neither half runs
  const Status end = group_end();
  return s != Status::ok ? s : end;
}

Status stream_done(void* stream, bool* done) noexcept {
  if (done == nullptr) return Status::invalid_argument;
  if (!gpu::available()) return Status::not_supported;
  gpu::Event event = nullptr;
  STRATA_TRY(gpu::event_create(&event, false));
  Status s = gpu::event_record(event, stream);
  if (s == Status::ok) s = gpu::event_query(event, done);
  gpu::event_destroy(event);
  return s;
}

}  // namespace strata::coll
