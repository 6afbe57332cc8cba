// Every completion call finishes Strata's requests among the ones it is
// given: a receive is unpacked and a staged call's results copied back
// before the call returns, a send releases its staging buffer, a persistent
// request becomes inactive. See pending.hpp for why entries are taken out of
// the table around the library call.
#include "interposer/transfer/completion.hpp"

#include "fault/hooks.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "interposer/transfer/direct.hpp"
#include "interposer/transfer/direct_active.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/sides.hpp"
#include "interposer/transfer/stream_from.hpp"
#include "interposer/transfer/watched_recvs.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/mover/device_transfer.hpp"

#include <vector>

namespace strata::interposer {
namespace {

using mpi::real;

// How one request ended: its status and error code.
struct Outcome {
  MPI_Status* status;
  int error;
};

// A watched receive still active goes back into the table; where it has no
// room now (other threads filled the neighbourhood), into the table of
// Strata's requests.
void keep_watching(MPI_Request handle, const WatchedRecv& w) {
  if (!watched_recvs().add(handle, w)) pending().put_back(handle, as_pending(w));
}

// Strata's entries among the requests of one call. The storage is a
// per-thread scratch vector, so a warm call allocates nothing (completion
// calls never nest within a thread). The shim flushed the deferred sends
// before the call (every completion call flushes, interposer/shim); the
// user's handle of one (a generalized request) is replaced in `requests`
// by the library's request for the length of the call.
class Taken {
 public:
  Taken(int count, MPI_Request* requests) : requests_(requests), items_(scratch()), watched_(watched_scratch()) {
    items_.clear();
    watched_.clear();
    if (!pending().empty()) {
      // Reserved first: nothing allocates under the table's lock. Each
      // operation moves once, from the table into its item (taking them
      // one by one, each moved twice under a lock of its own, cost 12-15
      // µs of a 2-rank halo exchange's 52 requests on the 2-core machine;
      // this, 5-6).
      items_.reserve(static_cast<size_t>(count));
      pending().take_each(count, requests, [&](int i, PendingOp& op) {
        const Item& item = items_.emplace_back(i, requests[i], op);
        if (item.op.library != MPI_REQUEST_NULL) requests[i] = item.op.library;  // waited for in the handle's place
      });
    }
    if (watched_empty()) return;
    size_t next = 0;  // the items are in the order of their indices
    for (int i = 0; i < count; ++i) {
      if (next < items_.size() && items_[next].index == i) {
        ++next;
        continue;
      }
      WatchedRecv w;
      if (requests[i] != MPI_REQUEST_NULL && watched_recvs().take(requests[i], &w)) {
        watched_.push_back({i, requests[i], w, false});
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
    for (Watched& w : watched_) {
      if (!w.finished) keep(w);
    }
    watched_.clear();
  }

  bool empty() const { return items_.empty() && watched_.empty(); }

  // After the library call, which returned `rc`: the requests done(index)
  // says it completed (or that it set to MPI_REQUEST_NULL) are finished
  // with outcome(index); the others are still active and go back, and so do
  // persistent requests, now inactive. Returns rc, or the error of a Strata
  // step that failed while finishing a request (unpacking on the device,
  // say) when the library itself succeeded.
  // Receives into GPU memory are unpacked without waiting, then the device
  // is waited for once: a call that completes many receives pays one
  // synchronisation, not one per receive.
  template <class Done, class OutcomeOf>
  int settle(int rc, Done done, OutcomeOf outcome) {
    int strata_rc = settle_watched(done, outcome);
    if (strata_rc == MPI_SUCCESS) strata_rc = early_rc_;
    bool queued = queued_early_;
    for (Item& item : items_) {
      item.finished = true;
      if (item.finished_early) continue;
      const bool completed = requests_[item.index] == MPI_REQUEST_NULL || done(item.index);
      if (!completed) {
        keep(item);
        continue;
      }
      const int f = finish_item(item, outcome(item.index), &queued);
      if (strata_rc == MPI_SUCCESS) strata_rc = f;
    }
    queued = queued || have_queued_pulls();
    if (queued) {
      WaitTimer timed(counters().unpack_wait_ns);
      if (mover::wait_for_queued_unpacks() != Status::ok && strata_rc == MPI_SUCCESS) strata_rc = MPI_ERR_INTERN;
    }
    finish_queued_pulls();  // device-direct senders get their buffers back, once their bytes arrived
    // A persistent request goes back only now: a queued unpack points into
    // its plan (the layout of count > 1 elements), which moving it would
    // move away from under the unpack.
    for (Item& item : items_) {
      if (item.keep_after_wait) keep(item);
    }
    items_.clear();  // releases the staging of the finished requests
    return rc == MPI_SUCCESS ? strata_rc : rc;
  }

  // Receives into device memory of at least `bytes` among the entries.
  int device_receives_of(int64_t bytes) const {
    int n = 0;
    for (const Item& item : items_) {
      const bool device = item.op.receives() && item.op.recv.plan.path == Path::device_pack;
      n += item.op.active && device && item.op.recv.plan.bytes >= bytes ? 1 : 0;
    }
    return n;
  }

  // The request at `index` completed with `o` before the others (a
  // completion call that finishes receives as they come): its entry is
  // finished now, its device work queued; settle() does the rest.
  void finish_early(int index, Outcome o) {
    for (Item& item : items_) {
      if (item.index != index || item.finished_early) continue;
      item.finished_early = true;
      const int f = finish_item(item, o, &queued_early_);
      if (early_rc_ == MPI_SUCCESS) early_rc_ = f;
      counters().recvs_finished_early.fetch_add(item.op.receives() ? 1 : 0, std::memory_order_relaxed);
      return;
    }
  }

 private:
  struct Item {
    Item(int i, MPI_Request h, PendingOp& taken) : index(i), handle(h), op(std::move(taken)) {}
    int index;
    MPI_Request handle;
    PendingOp op;
    bool finished = false;
    bool keep_after_wait = false;  // persistent: back into the table after the device wait
    bool finished_early = false;   // by finish_early
  };
  // A completed entry: the user's handle of a deferred send released, the
  // operation finished with its outcome (device work left queued: *queued).
  static int finish_item(Item& item, Outcome o, bool* queued) {
    int f = MPI_SUCCESS;
    if (item.op.library != MPI_REQUEST_NULL) release_user_handle(item.handle);
    if (item.op.active) {  // an inactive one was finished earlier (MPI_Request_get_status) or never started
      MPI_Status none;
      f = finish(item.op, o.status ? *o.status : none, o.status ? o.error : MPI_ERR_OTHER, false);
      *queued = *queued || item.op.recv.plan.path == Path::device_pack;
    }
    item.keep_after_wait = item.op.persistent;
    return f;
  }
  int early_rc_ = MPI_SUCCESS;
  bool queued_early_ = false;
  // An entry that stays: the user's handle back in place, the entry back in
  // the table.
  void keep(Item& item) {
    requests_[item.index] = item.handle;
    pending().put_back(item.handle, std::move(item.op));
  }
  static std::vector<Item>& scratch() {
    static thread_local std::vector<Item> items;
    return items;
  }

  // A watched host receive (watched_recvs.hpp): the library's own request
  // in the user's buffer. Completed, it is looked at only where exactly a
  // descriptor's size arrived; still active, it is watched again.
  struct Watched {
    int index;
    MPI_Request handle;
    WatchedRecv what;
    bool finished = false;
  };
  void keep(Watched& w) {
    requests_[w.index] = w.handle;
    keep_watching(w.handle, w.what);
  }
  template <class Done, class OutcomeOf>
  int settle_watched(Done done, OutcomeOf outcome) {
    int strata_rc = MPI_SUCCESS;
    for (Watched& w : watched_) {
      w.finished = true;
      if (requests_[w.index] != MPI_REQUEST_NULL && !done(w.index)) {
        keep(w);
        continue;
      }
      const Outcome o = outcome(w.index);
      if (o.status == nullptr || o.error != MPI_SUCCESS) continue;
      const int f = complete_host_recv(w.what.buffer, w.what.count, w.what.type, *o.status);
      if (strata_rc == MPI_SUCCESS) strata_rc = f;
    }
    return strata_rc;
  }
  static std::vector<Watched>& watched_scratch() {
    static thread_local std::vector<Watched> items;
    return items;
  }
  MPI_Request* requests_;
  std::vector<Item>& items_;
  std::vector<Watched>& watched_;
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
  return pending().empty() && watched_empty() && !have_deferred_sends();
}

int error_of(int rc, const MPI_Status& status) { return rc == MPI_ERR_IN_STATUS ? status.MPI_ERROR : rc; }

// Waitall and Testall with MPI_ERR_IN_STATUS: the requests whose status
// says MPI_ERR_PENDING did not complete.
bool completed_in(int rc, const MPI_Status& status) {
  return rc == MPI_SUCCESS || (rc == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_ERR_PENDING);
}

}  // namespace

// MPI_Wait on one request where only watched host receives can be among
// Strata's (the common case of a host program while the device-direct
// transport is on): the entry by the handle, no scratch lists. False when
// other Strata requests or deferred sends are about (the general path).
bool wait_watched(MPI_Request* request, MPI_Status* status, int* rc) {
  if (!pending().empty() || have_deferred_sends() || request == nullptr) return false;
  const MPI_Request handle = *request;
  WatchedRecv w;
  if (handle == MPI_REQUEST_NULL || !watched_recvs().take(handle, &w)) {
    *rc = real().MPI_Wait(request, status);
    return true;
  }
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  *rc = real().MPI_Wait(request, st);
  if (*request != MPI_REQUEST_NULL) {  // not completed (an error left it active)
    keep_watching(handle, w);
  } else if (*rc == MPI_SUCCESS) {
    *rc = complete_host_recv(w.buffer, w.count, w.type, *st);
  }
  return true;
}

int wait(MPI_Request* request, MPI_Status* status) {
  fault::WaitScope rec(true, 1, request);
  if (nothing_pending()) return real().MPI_Wait(request, status);
  if (int rc = MPI_SUCCESS; wait_watched(request, status, &rc)) return rc;
  Taken taken(1, request);
  if (taken.empty()) return real().MPI_Wait(request, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().MPI_Wait(request, st);
  return taken.settle(
      rc, [&](int) { return rc == MPI_SUCCESS; },
      [&](int) {
        return Outcome{st, rc};
      });
}

int test(MPI_Request* request, int* flag, MPI_Status* status) {
  fault::WaitScope rec(false, 1, request);
  if (nothing_pending()) return real().MPI_Test(request, flag, status);
  Taken taken(1, request);
  if (taken.empty()) return real().MPI_Test(request, flag, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().MPI_Test(request, flag, st);
  return taken.settle(
      rc, [&](int) { return rc == MPI_SUCCESS && *flag != 0; },
      [&](int) {
        return Outcome{st, rc};
      });
}

namespace {

// An empty status, what MPI_Waitall reports for a null or inactive request.
void set_empty(MPI_Status& status) {
  status.MPI_SOURCE = MPI_ANY_SOURCE;
  status.MPI_TAG = MPI_ANY_TAG;
  status.MPI_ERROR = MPI_SUCCESS;
  real().MPI_Status_set_elements(&status, MPI_BYTE, 0);
  real().MPI_Status_set_cancelled(&status, 0);
}

// MPI_Waitall through the library's MPI_Waitsome, each receive finished
// (its pull or unpack launched on the device) as its request completes: with
// one MPI_Waitall a window of 16 large strided device receives began its
// first unpack only after the last descriptor arrived, so the receiver's
// unpacks never overlapped the sender's packs (stop 42). Returns what the
// library's MPI_Waitall would: MPI_SUCCESS, or MPI_ERR_IN_STATUS with every
// status's error set (MPI_ERR_PENDING where a request is still active; the
// rest are completed by one MPI_Waitall after the first failure).
int waitall_as_they_come(int count, MPI_Request requests[], Statuses& st, Taken& taken) {
  static thread_local std::vector<int> done_at;
  static thread_local std::vector<MPI_Status> some;
  static thread_local std::vector<char> reported;  // by MPI_Waitsome; the others get an empty status
  done_at.resize(static_cast<size_t>(count));
  some.resize(static_cast<size_t>(count));
  reported.assign(static_cast<size_t>(count), 0);
  for (;;) {
    int out = 0;
    const int rc = real().MPI_Waitsome(count, requests, &out, done_at.data(), some.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;  // the call itself failed: nothing completed
    if (out == MPI_UNDEFINED) {
      for (int i = 0; i < count; ++i) {
        if (reported[static_cast<size_t>(i)] == 0) set_empty(st[i]);
      }
      return MPI_SUCCESS;
    }
    for (int k = 0; k < out; ++k) {
      const int i = done_at[static_cast<size_t>(k)];
      reported[static_cast<size_t>(i)] = 1;
      st[i] = some[static_cast<size_t>(k)];
      if (rc == MPI_SUCCESS) st[i].MPI_ERROR = MPI_SUCCESS;
      taken.finish_early(i, Outcome{&st[i], st[i].MPI_ERROR});
    }
    if (rc == MPI_SUCCESS) continue;
    // A request failed: the rest as MPI_Waitall leaves them, every error set.
    std::vector<MPI_Status> rest(static_cast<size_t>(count));
    std::vector<char> active(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) active[static_cast<size_t>(i)] = requests[i] != MPI_REQUEST_NULL;
    const int last = real().MPI_Waitall(count, requests, rest.data());
    for (int i = 0; i < count; ++i) {
      if (!active[static_cast<size_t>(i)]) continue;
      st[i] = rest[static_cast<size_t>(i)];
      if (last == MPI_SUCCESS) st[i].MPI_ERROR = MPI_SUCCESS;
    }
    return MPI_ERR_IN_STATUS;
  }
}

}  // namespace

int waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  fault::WaitScope rec(true, count, requests);
  if (nothing_pending()) return real().MPI_Waitall(count, requests, statuses);
  Taken taken(count, requests);
  if (taken.empty()) return real().MPI_Waitall(count, requests, statuses);
  Statuses st(count, statuses);
  // Only where descriptors may come: a staged receive's unpack, done while
  // the others wait, would hold back the library's progress on them.
  const bool as_they_come = device_direct::active() && taken.device_receives_of(stream_from()) >= 2;
  const int rc =
      as_they_come ? waitall_as_they_come(count, requests, st, taken) : real().MPI_Waitall(count, requests, st.data());
  return taken.settle(
      rc, [&](int i) { return completed_in(rc, st[i]); },
      [&](int i) {
        return Outcome{&st[i], error_of(rc, st[i])};
      });
}

int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  fault::WaitScope rec(false, count, requests);
  if (nothing_pending()) return real().MPI_Testall(count, requests, flag, statuses);
  Taken taken(count, requests);
  if (taken.empty()) return real().MPI_Testall(count, requests, flag, statuses);
  Statuses st(count, statuses);
  int rc = real().MPI_Testall(count, requests, flag, st.data());
  return taken.settle(
      rc, [&](int i) { return (*flag != 0 || rc == MPI_ERR_IN_STATUS) && completed_in(rc, st[i]); },
      [&](int i) {
        return Outcome{&st[i], error_of(rc, st[i])};
      });
}

int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  fault::WaitScope rec(true, count, requests);
  if (nothing_pending()) return real().MPI_Waitany(count, requests, index, status);
  Taken taken(count, requests);
  if (taken.empty()) return real().MPI_Waitany(count, requests, index, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().MPI_Waitany(count, requests, index, st);
  return taken.settle(
      rc, [&](int i) { return i == *index; },
      [&](int) {
        return Outcome{st, rc};
      });
}

int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  fault::WaitScope rec(false, count, requests);
  if (nothing_pending()) return real().MPI_Testany(count, requests, index, flag, status);
  Taken taken(count, requests);
  if (taken.empty()) return real().MPI_Testany(count, requests, index, flag, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().MPI_Testany(count, requests, index, flag, st);
  return taken.settle(
      rc, [&](int i) { return *flag != 0 && i == *index; },
      [&](int) {
        return Outcome{st, rc};
      });
}

namespace {

// Waitsome and Testsome report statuses in the order of `indices`.
template <class Call>
int some(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[], Call call) {
  Taken taken(incount, requests);
  if (taken.empty()) return call(statuses);
  Statuses st(incount, statuses);
  int rc = call(st.data());
  auto position = [&](int i) {
    for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; ++k) {
      if (indices[k] == i) return k;
    }
    return -1;
  };
  return taken.settle(
      rc, [&](int i) { return position(i) >= 0; },
      [&](int i) {
        const int k = position(i);
        return k >= 0 ? Outcome{&st[k], error_of(rc, st[k])} : Outcome{nullptr, rc};
      });
}

}  // namespace

int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  fault::WaitScope rec(true, incount, requests);
  auto call = [&](MPI_Status* s) { return real().MPI_Waitsome(incount, requests, outcount, indices, s); };
  if (nothing_pending()) return call(statuses);
  return some(incount, requests, outcount, indices, statuses, call);
}

int testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  fault::WaitScope rec(false, incount, requests);
  auto call = [&](MPI_Status* s) { return real().MPI_Testsome(incount, requests, outcount, indices, s); };
  if (nothing_pending()) return call(statuses);
  return some(incount, requests, outcount, indices, statuses, call);
}

// MPI_Request_free on a Strata request: an active operation still has to
// finish (a receive still has to be unpacked), so its request is kept and
// tested from later calls and waited for at MPI_Finalize; an inactive
// persistent one is freed with its staging.
int request_free(MPI_Request* request) {
  fault::WaitScope rec(false, request != nullptr ? 1 : 0, request);
  if (nothing_pending() || request == nullptr) return real().MPI_Request_free(request);
  std::optional<PendingOp> op = pending().take(*request);
  WatchedRecv w;
  if (!op && !watched_empty() && watched_recvs().take(*request, &w)) op = as_pending(w);  // finished as an orphan
  if (!op) return real().MPI_Request_free(request);
  if (!op->active) {  // persistent and inactive
    const int rc = real().MPI_Request_free(request);
    if (rc != MPI_SUCCESS) pending().put_back(*request, std::move(*op));
    return rc;
  }
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
  if (request == nullptr) return real().MPI_Cancel(request);
  MPI_Request r = library_request(*request);
  return real().MPI_Cancel(&r);
}

// MPI_Request_get_status of a watched receive: found complete, it is
// looked at now (the caller may read the buffer at once) and no longer
// watched (the completion call that frees it has nothing left to do).
int watched_status(MPI_Request request, const WatchedRecv& w, int* flag, MPI_Status* status) {
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().MPI_Request_get_status(request, flag, st);
  if (rc != MPI_SUCCESS || *flag == 0) {
    keep_watching(request, w);
    return rc;
  }
  rc = complete_host_recv(w.buffer, w.count, w.type, *st);
  return rc == MPI_SUCCESS ? rc : raise_error(w.comm, rc, "MPI_Request_get_status");
}

// A request found complete here may be read by the caller at once, so a
// receive is unpacked (a staged call's results copied back) now; the entry
// stays, inactive, until the completion call that frees the request.
int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (request != MPI_REQUEST_NULL && !watched_empty()) {
    WatchedRecv w;
    if (watched_recvs().take(request, &w)) return watched_status(request, w, flag, status);
  }
  if (request == MPI_REQUEST_NULL || pending().empty()) {
    return real().MPI_Request_get_status(request, flag, status);
  }
  std::optional<PendingOp> op = pending().take(request);
  if (!op) return real().MPI_Request_get_status(library_request(request), flag, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const MPI_Request library = op->library != MPI_REQUEST_NULL ? op->library : request;
  int rc = real().MPI_Request_get_status(library, flag, st);
  if (rc == MPI_SUCCESS && *flag != 0 && op->active) {
    const bool persistent = op->persistent;
    op->persistent = true;  // keep the staging: the request is not freed yet
    rc = finish(*op, *st, MPI_SUCCESS);
    op->persistent = persistent;
  }
  pending().put_back(request, std::move(*op));
  if (rc != MPI_SUCCESS) rc = raise_error(MPI_COMM_NULL, rc, "MPI_Request_get_status");
  return rc;
}

int start(MPI_Request* request) { return startall(1, request); }

// Persistent Strata requests are refilled (a send packs its buffer again, a
// staged collective copies its inputs in) before the library starts them.
int startall(int count, MPI_Request requests[]) {
  if (pending().empty() || requests == nullptr) return real().MPI_Startall(count, requests);
  for (int i = 0; i < count; ++i) {
    std::optional<PendingOp> op = pending().take(requests[i]);
    if (!op) continue;
    const int rc = restart(*op);
    const MPI_Comm comm = op->comm;
    pending().put_back(requests[i], std::move(*op));
    if (rc != MPI_SUCCESS) return raise_error(comm, rc, "MPI_Start");
  }
  return real().MPI_Startall(count, requests);
}

}  // namespace strata::interposer
