// MPI_Pack and MPI_Unpack by Strata's engine where the model says it wins.
// Anything Strata cannot vouch for (a buffer that would overflow, a bad
// position or communicator) goes to the library, which then reports its own
// error class (MPI_ERR_TRUNCATE, ...) through the communicator's handler.
#include "interposer/transfer/pack_calls.hpp"

#include <strata/fault.hpp>

#include "base/config.hpp"
#include "base/log.hpp"
#include "collectives/job_facts.hpp"
#include "interposer/model/host_model.hpp"
#include "interposer/transfer/all_to_all.hpp"
#include "interposer/transfer/init_line.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/probed.hpp"
#include "interposer/transfer/sides.hpp"
#include "interposer/transfer/summary.hpp"
#include "interposer/transfer/trace.hpp"
#include "interposer/transfer/watched_recvs.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/copies.hpp"
#include "portability/mover/device_transfer.hpp"
#include "portability/mover/staging.hpp"

#include <climits>

namespace strata::interposer {

using mpi::real;

namespace {

// Strata never lets a (un)pack run past the buffer: for a type it saw
// committed, a buffer too small is MPI_ERR_TRUNCATE on the communicator's
// error handler, whatever the library would do (Open MPI reports the same
// class; MPICH builds without error checking would write past the end).
bool overflows(MPI_Datatype type, int count, int64_t room) {
  std::shared_ptr<const TypeInfo> info = type_cache().find_committed(type);
  int64_t bytes = 0;
  return info && !__builtin_mul_overflow(info->layout.size, static_cast<int64_t>(count), &bytes) && bytes > room;
}

int truncate_error(const char* call, MPI_Comm comm) {
  STRATA_LOG(debug, kP2p, "%s: the buffer is too small: MPI_ERR_TRUNCATE", call);
  real().MPI_Comm_call_errhandler(comm, MPI_ERR_TRUNCATE);
  return MPI_ERR_TRUNCATE;
}

bool on_gpu(const void* ptr) {
  const device::MemoryKind k = gpu::classify(ptr).kind;
  return k == device::MemoryKind::device || k == device::MemoryKind::managed;
}

// MPI_Pack with GPU memory on either side. The input side is prepared as a
// send would be (sides.hpp): packed bytes, or a host copy the library packs
// with the user's type; the packed bytes then go to the output, wherever it
// is.
int pack_with_gpu(const Plan& p, const void* inbuf, int incount, MPI_Datatype type, char* out, int64_t room,
                  int* position, MPI_Comm comm) {
  Outgoing o;
  if (int rc = prepare_send(p, inbuf, incount, type, &o); rc != MPI_SUCCESS) return raise_error(comm, rc, "MPI_Pack");
  if (o.type == MPI_PACKED) {  // Strata packed: o.count bytes at o.buffer
    if (o.count > room) return truncate_error("MPI_Pack", comm);
    if (mover::copy_bytes(out, o.buffer, o.count) != Status::ok) return raise_error(comm, MPI_ERR_INTERN, "MPI_Pack");
    *position += o.count;
    counters().packs_by_strata.fetch_add(1, std::memory_order_relaxed);
    return MPI_SUCCESS;
  }
  // The library packs the host data; into a host buffer when `out` is on the GPU.
  mover::Staging temp;
  char* target = out;
  if (on_gpu(out)) {
    temp = mover::Staging::acquire(mover::pinned_pool(), room);
    if (!temp) return raise_error(comm, MPI_ERR_NO_MEM, "MPI_Pack");
    target = temp.data();
  }
  int written = 0;
  const int rc = real().MPI_Pack(o.buffer, o.count, o.type, target, static_cast<int>(room), &written, comm);
  if (rc != MPI_SUCCESS) return rc;
  if (target != out && mover::copy_bytes(out, target, written) != Status::ok)
    return raise_error(comm, MPI_ERR_INTERN, "MPI_Pack");
  *position += written;
  return MPI_SUCCESS;
}

// MPI_Unpack with GPU memory on either side: the output side is prepared as
// a receive would be, the packed bytes are brought where it expects them,
// and the receive is completed.
int unpack_with_gpu(const Plan& p, const char* in, int64_t available, int* position, void* outbuf, int outcount,
                    MPI_Datatype type, MPI_Comm comm) {
  Incoming rx;
  if (int rc = prepare_recv(p, outbuf, outcount, type, &rx); rc != MPI_SUCCESS)
    return raise_error(comm, rc, "MPI_Unpack");
  int64_t bytes = 0;
  if (rx.type == MPI_PACKED) {  // Strata unpacks rx.count bytes from rx.buffer
    bytes = rx.count;
    if (bytes > available) return truncate_error("MPI_Unpack", comm);
    if (mover::copy_bytes(rx.buffer, in, bytes) != Status::ok) return raise_error(comm, MPI_ERR_INTERN, "MPI_Unpack");
    counters().packs_by_strata.fetch_add(1, std::memory_order_relaxed);
  } else {  // the library unpacks from host memory into rx.buffer (host)
    mover::Staging temp;
    const char* source = in;
    if (on_gpu(in)) {
      temp = mover::Staging::acquire(mover::pinned_pool(), available);
      if (!temp || mover::copy_bytes(temp.data(), in, available) != Status::ok) {
        return raise_error(comm, MPI_ERR_INTERN, "MPI_Unpack");
      }
      source = temp.data();
    }
    int read = 0;
    const int rc = real().MPI_Unpack(source, static_cast<int>(available), &read, rx.buffer, rx.count, rx.type, comm);
    if (rc != MPI_SUCCESS) return rc;
    bytes = read;
  }
  MPI_Status status;
  real().MPI_Status_set_elements(&status, MPI_BYTE, static_cast<int>(bytes));
  real().MPI_Status_set_cancelled(&status, 0);
  if (int rc = complete_recv(rx, status); rc != MPI_SUCCESS) return raise_error(comm, rc, "MPI_Unpack");
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

}  // namespace

int pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position, MPI_Comm comm) {
  auto library = [&] { return real().MPI_Pack(inbuf, incount, type, outbuf, outsize, position, comm); };
  if (comm == MPI_COMM_NULL || position == nullptr || outbuf == nullptr || *position < 0 || outsize < 0) {
    return library();
  }
  if (incount >= 0 && overflows(type, incount, static_cast<int64_t>(outsize) - *position)) {
    return truncate_error("MPI_Pack", comm);
  }
  Plan p = plan_buffer(inbuf, incount, type, HostOp::pack, Access::read);
  trace_plan("MPI_Pack", "pack", p);
  if (p.path == Path::device_pack || p.path == Path::device_span || on_gpu(outbuf)) {
    if (incount < 0 || !type_cache().find_usable(type)) return library();  // the library reports it
    return pack_with_gpu(p, inbuf, incount, type, static_cast<char*>(outbuf) + *position,
                         static_cast<int64_t>(outsize) - *position, position, comm);
  }
  if (p.path != Path::host_pack) return library();
  pack_host(p.layout.block(), inbuf, static_cast<char*>(outbuf) + *position);
  *position += static_cast<int>(p.bytes);
  counters().packs_by_strata.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type, MPI_Comm comm) {
  auto library = [&] { return real().MPI_Unpack(inbuf, insize, position, outbuf, outcount, type, comm); };
  if (comm == MPI_COMM_NULL || position == nullptr || inbuf == nullptr || *position < 0 || insize < 0) {
    return library();
  }
  if (outcount >= 0 && overflows(type, outcount, static_cast<int64_t>(insize) - *position)) {
    return truncate_error("MPI_Unpack", comm);
  }
  Plan p = plan_buffer(outbuf, outcount, type, HostOp::pack, Access::write);
  trace_plan("MPI_Unpack", "unpack", p);
  const char* in = static_cast<const char*>(inbuf) + *position;
  if (p.path == Path::device_pack || p.path == Path::device_span || on_gpu(in)) {
    if (outcount < 0 || !type_cache().find_usable(type)) return library();  // the library reports it
    return unpack_with_gpu(p, in, static_cast<int64_t>(insize) - *position, position, outbuf, outcount, type, comm);
  }
  if (p.path != Path::host_pack) return library();
  unpack_host(p.layout.block(), static_cast<const char*>(inbuf) + *position, outbuf);
  *position += static_cast<int>(p.bytes);
  counters().packs_by_strata.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int* size) {
  // Strata packs exactly the library's format, so the library's bound holds.
  return real().MPI_Pack_size(incount, type, comm, size);
}

int type_commit(MPI_Datatype* type) {
  int rc = real().MPI_Type_commit(type);
  if (rc == MPI_SUCCESS && type != nullptr) type_cache().on_commit(*type);
  return rc;
}

int type_free(MPI_Datatype* type) {
  // Forget the handle first: once the library frees it, another thread may
  // get the same handle for a new type.
  if (type != nullptr) type_cache().on_free(*type);
  return real().MPI_Type_free(type);
}

int type_dup(MPI_Datatype type, MPI_Datatype* newtype) {
  int rc = real().MPI_Type_dup(type, newtype);
  if (rc == MPI_SUCCESS && newtype != nullptr) {
    // A predefined type is described at its first use: now, so that its copy
    // (committed, never passed to MPI_Type_commit) is known too.
    (void)type_cache().find_usable(type);
    type_cache().on_dup(type, *newtype);
  }
  return rc;
}

void on_init() {
  config::load();
  int rank = -1;
  if (real().MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) log::set_rank(rank);
  coll::know_program();  // before any question to the GPU runtime: a host program's stays unstarted
  log_rank_details();    // debug: this rank's library, devices, GPU support
  // init_line_flags() loads the host model: here, outside any timed region.
  if (coll::learn_job(MPI_COMM_WORLD, summary_flag() | init_line_flags() | device_direct::job_flag()) != Status::ok) {
    STRATA_LOG(warn, kColl, "could not learn which ranks have GPUs; every communicator gets Strata's context");
  }
  learn_host_transfer_route();  // after learn_job: whether the node has a core per rank
  // STRATA_P2P_IPC asked everywhere: first contact with the node's GPUs (collective).
  device_direct::setup(MPI_COMM_WORLD);
  log_init_line(rank);   // info, rank 0: the job's one line
  (void)fault::start();  // STRATA_FAULT=1: recorder, watchdog, out-of-band channel (collective)
}

int finalize() {
  summarise_job();      // STRATA_SUMMARY: collective, before the job facts go
  (void)fault::stop();  // last samples to the coordinator, flight record dumped
  pending().drain_orphans();
  device_direct::teardown();  // after the last sends completed: their receivers have the bytes or a bounce
  probed::clear();
  coll::forget_job();
  pending().drain_orphans();
  pending().clear();
  watched_recvs().clear();
  mover::log_engine_choices();
  free_byte_types();
  type_cache().clear();
  mover::trim_staging();
  return real().MPI_Finalize();
}

}  // namespace strata::interposer
