// Every completion call finishes Strata's requests among the ones it is
// given: a receive is unpacked before the call returns, a send releases its
// staging buffer. See pending.hpp for why entries are taken out of the table
// around the library call.
#include "fault/hooks.hpp"
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "interposer/transfer/device_transfer.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/point_to_point.hpp"

#include <vector>

namespace strata::interposer {
namespace {

using mpi::real;

// How one request ended: its status and error code.
struct Outcome {
  const MPI_Status* status;
  int error;
};

// Strata's entries among the requests of one call. The storage is a
// per-thread scratch vector, so a warm call allocates nothing (completion
// calls never nest within a thread). The shim flushed the deferred sends
// before the call (every completion call flushes, interposer/shim); the
// user's handle of one (a generalized request) is replaced in `requests`
// by the library's request for the length of the call.
class Taken {
 public:
  Taken(int count, MPI_Request* requests) : requests_(requests), items_(scratch()) {
    items_.clear();
    for (int i = 0; i < count; ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      if (std::optional<PendingOp> op = pending().take(requests[i])) {
        items_.push_back({i, requests[i], std::move(*op), false});
        if (items_.back().op.library != MPI_REQUEST_NULL) requests[i] = items_.back().op.library;
      }
    }
  }
  Taken(const Taken&) = delete;
  Taken& operator=(const Taken&) = delete;
  ~Taken() {  // entries nobody settled (an exception on the way) go back
    for (Item& item : items_) {
      if (!item.finished) keep(item);
    }
    items_.clear();
  }

  bool empty() const { return items_.empty(); }

  // After the library call, which returned `rc`: a request it set to
  // MPI_REQUEST_NULL completed, with outcome(index); the others are still
  // active and go back. Returns rc, or the error of a Strata step that
  // failed while finishing a request (unpacking on the device, say) when
  // the library itself succeeded.
  // Receives into GPU memory are unpacked without waiting, then the device
  // is waited for once: a call that completes many receives pays one
  // synchronisation, not one per receive.
  template <class OutcomeOf>
  int settle(int rc, OutcomeOf outcome) {
    int strata_rc = MPI_SUCCESS;
    bool queued = false;
    for (Item& item : items_) {
      if (requests_[item.index] == MPI_REQUEST_NULL) {
        if (item.op.library != MPI_REQUEST_NULL) release_user_handle(item.handle);
        Outcome o = outcome(item.index);
        MPI_Status none;
        const int done = finish(item.op, o.status ? *o.status : none, o.status ? o.error : MPI_ERR_OTHER, false);
        queued = queued || item.op.recv.plan.path == Path::device_pack;
        item.finished = true;
        if (strata_rc == MPI_SUCCESS) strata_rc = done;
      } else {
        keep(item);
        item.finished = true;
      }
    }
    if (queued && wait_for_queued_unpacks() != Status::ok && strata_rc == MPI_SUCCESS) strata_rc = MPI_ERR_INTERN;
    items_.clear();  // releases the staging of the finished requests
    return rc == MPI_SUCCESS ? strata_rc : rc;
  }

 private:
  struct Item {
    int index;
    MPI_Request handle;
    PendingOp op;
    bool finished = false;
  };
  // An entry still active: the user's handle back in place, the entry back
  // in the table.
  void keep(Item& item) {
    requests_[item.index] = item.handle;
    pending().put_back(item.handle, std::move(item.op));
  }
  static std::vector<Item>& scratch() {
    static thread_local std::vector<Item> items;
    return items;
  }
  MPI_Request* requests_;
  std::vector<Item>& items_;
};

// The statuses array to hand the library: the user's, or ours when the user
// passed MPI_STATUSES_IGNORE (we need the received byte counts).
class Statuses {
 public:
  Statuses(int count, MPI_Status* user) : user_(user), local_(scratch()) {
    if (user == MPI_STATUSES_IGNORE && local_.size() < static_cast<size_t>(count)) {
      local_.resize(static_cast<size_t>(count));
    }
  }
  MPI_Status* data() { return user_ == MPI_STATUSES_IGNORE ? local_.data() : user_; }
  MPI_Status& operator[](int i) { return data()[i]; }

 private:
  static std::vector<MPI_Status>& scratch() {
    static thread_local std::vector<MPI_Status> statuses;
    return statuses;
  }
  MPI_Status* user_;
  std::vector<MPI_Status>& local_;
};

// True when no Strata request can be among the caller's: the fast path.
bool nothing_pending() {
  if (pending().has_orphans()) pending().progress_orphans();
  return pending().empty() && !have_deferred_sends();
}

int error_of(int rc, const MPI_Status& status) { return rc == MPI_ERR_IN_STATUS ? status.MPI_ERROR : rc; }

}  // namespace

int wait(MPI_Request* request, MPI_Status* status) {
  fault::WaitScope rec(true, 1, request);
  if (nothing_pending()) return real().Wait(request, status);
  Taken taken(1, request);
  if (taken.empty()) return real().Wait(request, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Wait(request, st);
  return taken.settle(rc, [&](int) { return Outcome{st, rc}; });
}

int test(MPI_Request* request, int* flag, MPI_Status* status) {
  fault::WaitScope rec(false, 1, request);
  if (nothing_pending()) return real().Test(request, flag, status);
  Taken taken(1, request);
  if (taken.empty()) return real().Test(request, flag, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Test(request, flag, st);
  return taken.settle(rc, [&](int) { return Outcome{st, rc}; });
}

int waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  fault::WaitScope rec(true, count, requests);
  if (nothing_pending()) return real().Waitall(count, requests, statuses);
  Taken taken(count, requests);
  if (taken.empty()) return real().Waitall(count, requests, statuses);
  Statuses st(count, statuses);
  int rc = real().Waitall(count, requests, st.data());
  return taken.settle(rc, [&](int i) { return Outcome{&st[i], error_of(rc, st[i])}; });
}

int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  fault::WaitScope rec(false, count, requests);
  if (nothing_pending()) return real().Testall(count, requests, flag, statuses);
  Taken taken(count, requests);
  if (taken.empty()) return real().Testall(count, requests, flag, statuses);
  Statuses st(count, statuses);
  int rc = real().Testall(count, requests, flag, st.data());
  return taken.settle(rc, [&](int i) { return Outcome{&st[i], error_of(rc, st[i])}; });
}

int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  fault::WaitScope rec(true, count, requests);
  if (nothing_pending()) return real().Waitany(count, requests, index, status);
  Taken taken(count, requests);
  if (taken.empty()) return real().Waitany(count, requests, index, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Waitany(count, requests, index, st);
  return taken.settle(rc, [&](int) { return Outcome{st, rc}; });
}

int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  fault::WaitScope rec(false, count, requests);
  if (nothing_pending()) return real().Testany(count, requests, index, flag, status);
  Taken taken(count, requests);
  if (taken.empty()) return real().Testany(count, requests, index, flag, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Testany(count, requests, index, flag, st);
  return taken.settle(rc, [&](int) { return Outcome{st, rc}; });
}

namespace {

// Waitsome and Testsome report statuses in the order of `indices`.
template <class Call>
int some(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[], Call call) {
  Taken taken(incount, requests);
  if (taken.empty()) return call(statuses);
  Statuses st(incount, statuses);
  int rc = call(st.data());
  return taken.settle(rc, [&](int i) {
    for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; ++k) {
      if (indices[k] == i) return Outcome{&st[k], error_of(rc, st[k])};
    }
    return Outcome{nullptr, rc};
  });
}

}  // namespace

int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  fault::WaitScope rec(true, incount, requests);
  auto call = [&](MPI_Status* s) { return real().Waitsome(incount, requests, outcount, indices, s); };
  if (nothing_pending()) return call(statuses);
  return some(incount, requests, outcount, indices, statuses, call);
}

int testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  fault::WaitScope rec(false, incount, requests);
  auto call = [&](MPI_Status* s) { return real().Testsome(incount, requests, outcount, indices, s); };
  if (nothing_pending()) return call(statuses);
  return some(incount, requests, outcount, indices, statuses, call);
}

int request_free(MPI_Request* request) {
  fault::WaitScope rec(false, request != nullptr ? 1 : 0, request);
  if (nothing_pending() || request == nullptr) return real().Request_free(request);
  std::optional<PendingOp> op = pending().take(*request);
  if (!op) return real().Request_free(request);
  const MPI_Request library = op->library;
  pending().orphan(library != MPI_REQUEST_NULL ? library : *request, std::move(*op));
  if (library != MPI_REQUEST_NULL) release_user_handle(*request);
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

// The library's request behind a deferred send's handle (flushed by the
// shim before the call), else `request`.
MPI_Request library_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL || pending().empty()) return request;
  const MPI_Request library = pending().library_of(request);
  return library != MPI_REQUEST_NULL ? library : request;
}

int cancel(MPI_Request* request) {
  // The request stays Strata's: its completion call sees the cancellation
  // in the status and skips the unpack.
  if (request == nullptr) return real().Cancel(request);
  MPI_Request r = library_request(*request);
  return real().Cancel(&r);
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return PMPI_Request_get_status(library_request(request), flag, status);
}

}  // namespace strata::interposer
