// Calls whose device buffers go through pinned host copies of their spans
// (staged_call.hpp): collectives Strata does not route, in every form
// (blocking, non-blocking, persistent), local calls on buffers, and the
// memory side of MPI-IO. Each rank decides for its own buffers alone and
// always makes the library's own call, so ranks whose buffers differ in
// kind (host on one, GPU on another) still meet in the same collective.
#include "interposer/handlers/handlers.hpp"
#include "interposer/handlers/p2p_sides.hpp"

#include "base/log.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/gpu_aware.hpp"
#include "interposer/transfer/pending.hpp"
#include "mpi/real_mpi.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace strata::interposer::handlers {
namespace {

MPI_Comm comm_of(const ErrorTarget& target) {
  return target.on == ErrorTarget::On::comm ? target.comm : default_comm();
}

// Reports a failed Strata step on the target's error handler.
int raise_on(const ErrorTarget& target, int code, Id id) {
  switch (target.on) {
    case ErrorTarget::On::win:
      raise_error(MPI_COMM_NULL, code, calls::name_of(id));
      if (target.win != MPI_WIN_NULL) mpi::real().MPI_Win_call_errhandler(target.win, code);
      return code;
    case ErrorTarget::On::file:
      raise_error(MPI_COMM_NULL, code, calls::name_of(id));
      mpi::real().MPI_File_call_errhandler(target.file, code);  // MPI_FILE_NULL: the default file error handler
      return code;
    case ErrorTarget::On::comm:
    case ErrorTarget::On::none: break;
  }
  return raise_error(comm_of(target), code, calls::name_of(id));
}

// Collectives the library runs on host copies of device buffers.
void count_staged(Id id) {
  const calls::Kind k = calls::kind_of(id);
  if (k == calls::Kind::coll || k == calls::Kind::icoll || k == calls::Kind::coll_init || k == calls::Kind::routed ||
      k == calls::Kind::packed) {
    counters().collectives_staged.fetch_add(1, std::memory_order_relaxed);
  }
}

// Nothing to stage: no GPU buffer here, or a library that takes them.
bool library_takes(const CallShape& shape, Bufs bufs) {
  return StagedCall::all_host_at_a_glance(bufs) || mpi_is_gpu_aware() || !StagedCall::any_on_device(shape, bufs);
}

// A blocking call: stage, call, copy back.
int blocking(Id id, Library library, const ErrorTarget& target, const CallShape& shape, Bufs bufs) {
  if (library_takes(shape, bufs)) return library();
  StagedCall staged;
  if (int rc = staged.stage(shape, bufs, true); rc != MPI_SUCCESS) return raise_on(target, rc, id);
  count_staged(id);
  const int rc = library();
  if (rc != MPI_SUCCESS) return rc;
  if (int out = staged.copy_out(); out != MPI_SUCCESS) return raise_on(target, out, id);
  return MPI_SUCCESS;
}

// A call that starts a request: the mirrors live in the request's entry and
// are copied back by the completion call that finishes it.
int started(Id id, Library library, const ErrorTarget& target, const CallShape& shape, MPI_Request* request, Bufs bufs,
            bool persistent) {
  if (library_takes(shape, bufs)) return library();
  auto staged = std::make_unique<StagedCall>();
  if (int rc = staged->stage(shape, bufs, !persistent); rc != MPI_SUCCESS) return raise_on(target, rc, id);
  count_staged(id);
  const int rc = library();
  if (rc != MPI_SUCCESS) return rc;
  PendingOp op;
  op.kind = PendingOp::Kind::staged;
  op.staged = std::move(staged);
  op.persistent = persistent;
  op.active = !persistent;
  op.comm = comm_of(target);
  track(*request, std::move(op));
  return MPI_SUCCESS;
}

int call_shape(Id id, MPI_Comm comm, int root, CallShape* shape) {
  const int rc = CallShape::of(comm, root, shape);
  return rc == MPI_SUCCESS ? rc : raise_error(comm, rc, calls::name_of(id));
}

// Split collective file accesses in progress, by file: MPI allows one per
// file handle at a time.
std::mutex g_split_mutex;
std::map<MPI_File, std::unique_ptr<StagedCall>>& splits() {
  static auto* m = new std::map<MPI_File, std::unique_ptr<StagedCall>>();  // never destroyed
  return *m;
}

}  // namespace

int coll(Id id, Library library, MPI_Comm comm, int root, Bufs bufs) {
  if (StagedCall::all_host_at_a_glance(bufs)) return library();
  CallShape shape;
  if (int rc = call_shape(id, comm, root, &shape); rc != MPI_SUCCESS) return rc;
  return blocking(id, library, calls::roles::on_comm(comm), shape, bufs);
}

int icoll(Id id, Library library, MPI_Comm comm, int root, MPI_Request* request, Bufs bufs) {
  if (StagedCall::all_host_at_a_glance(bufs)) return library();
  CallShape shape;
  if (int rc = call_shape(id, comm, root, &shape); rc != MPI_SUCCESS) return rc;
  return started(id, library, calls::roles::on_comm(comm), shape, request, bufs, false);
}

int coll_init(Id id, Library library, MPI_Comm comm, int root, MPI_Request* request, Bufs bufs) {
  if (StagedCall::all_host_at_a_glance(bufs)) return library();
  CallShape shape;
  if (int rc = call_shape(id, comm, root, &shape); rc != MPI_SUCCESS) return rc;
  return started(id, library, calls::roles::on_comm(comm), shape, request, bufs, true);
}

int local(Id id, Library library, const ErrorTarget& target, Bufs bufs) {
  return blocking(id, library, target, CallShape::local(), bufs);
}

int file(Id id, Library library, const ErrorTarget& target, Bufs bufs) {
  return blocking(id, library, target, CallShape::local(), bufs);
}

int ifile(Id id, Library library, const ErrorTarget& target, MPI_Request* request, Bufs bufs) {
  return started(id, library, target, CallShape::local(), request, bufs, false);
}

int file_begin(Id id, Library library, const ErrorTarget& target, Bufs bufs) {
  const CallShape shape = CallShape::local();
  if (library_takes(shape, bufs)) return library();
  auto staged = std::make_unique<StagedCall>();
  if (int rc = staged->stage(shape, bufs, true); rc != MPI_SUCCESS) return raise_on(target, rc, id);
  const int rc = library();
  if (rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(g_split_mutex);
  splits()[target.file] = std::move(staged);
  return MPI_SUCCESS;
}

int file_end(Id id, Library library, const ErrorTarget& target, void** buf) {
  std::unique_ptr<StagedCall> staged;
  {
    std::lock_guard<std::mutex> lock(g_split_mutex);
    auto it = splits().find(target.file);
    if (it != splits().end()) {
      staged = std::move(it->second);
      splits().erase(it);
    }
  }
  if (!staged) return library();
  if (void* mirror = staged->mirror_of(*buf)) *buf = mirror;
  const int rc = library();
  if (rc != MPI_SUCCESS) return rc;
  if (int out = staged->copy_out(); out != MPI_SUCCESS) return raise_on(target, out, id);
  return MPI_SUCCESS;
}

int refused(Id id, Library library, const ErrorTarget& target, Bufs bufs) {
  const CallShape shape = CallShape::local();
  if (library_takes(shape, bufs)) return library();
  STRATA_LOG(error, kDevice,
             "%s: a buffer in GPU memory, which this MPI cannot take and Strata does not serve for this call "
             "(MPI_ERR_BUFFER)",
             calls::name_of(id));
  return raise_on(target, MPI_ERR_BUFFER, id);
}

}  // namespace strata::interposer::handlers
