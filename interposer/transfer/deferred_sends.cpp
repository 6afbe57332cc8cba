#include "interposer/transfer/deferred_sends.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/direct.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/sides.hpp"
#include "interposer/transfer/stream_from.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/mover/copies.hpp"
#include "portability/mover/device_transfer.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <mutex>
#include <vector>

namespace strata::interposer {
namespace {

using mpi::real;

enum class DeferMode { off, device, all };
config::ChoiceParam<DeferMode> g_defer{
    "STRATA_DEFER_SENDS",
    DeferMode::device,
    {{"device", DeferMode::device}, {"off", DeferMode::off}, {"0", DeferMode::off}, {"all", DeferMode::all}},
    "MPI_Isend of GPU data Strata packs: device = packed and posted at the caller's next MPI call, many sends "
    "in one batched launch; off = packed and posted by MPI_Isend itself; all = host-packed sends too (tests)"};

// The user's handle of a deferred send is a generalized request; its state
// carries the error of a send that failed when it was flushed, which the
// library's completion call returns through query().
struct HandleState {
  int error = MPI_SUCCESS;
};

int query(void* extra, MPI_Status* status) {
  const int error = static_cast<HandleState*>(extra)->error;
  real().MPI_Status_set_elements(status, MPI_BYTE, 0);
  real().MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = error;
  return error;
}
int free_state(void* extra) {
  delete static_cast<HandleState*>(extra);
  return MPI_SUCCESS;
}
int cancel_nothing(void*, int) { return MPI_SUCCESS; }

struct Deferred {
  Deferred() = default;
  Deferred(const Plan& p, const void* b, int c, MPI_Datatype t, int d, int g, MPI_Comm m)
      : plan(p), buf(b), count(c), type(t), dest(d), tag(g), comm(m) {}
  Plan plan;
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int dest = 0;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request handle = MPI_REQUEST_NULL;  // the user's
  HandleState* state = nullptr;           // owned by the handle
  Outgoing out;
  mover::DevicePart part{};  // device_pack: the message's one part
  bool direct = false;       // travels as a device-direct descriptor (direct.hpp) where it can
  // What the flush packs: device_pack, except a direct message that is
  // contiguous (the receiver reads the user's buffer itself).
  bool packs() const { return plan.path == Path::device_pack && !(direct && plan.layout.block().contiguous()); }
};

class DeferredQueue {
 public:
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  void push(Deferred&& d) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(d));
    size_.store(queue_.size(), std::memory_order_release);
    g_deferred_sends.store(queue_.size(), std::memory_order_release);
  }
  // Is a send to `dest` of `comm` among them?
  bool holds(MPI_Comm comm, int dest) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Deferred& d : queue_) {
      if (d.comm == comm && d.dest == dest) return true;
    }
    return false;
  }
  // Moves the queue's entries into `out` (empty on entry).
  void take_all(std::vector<Deferred>& out) {
    std::lock_guard<std::mutex> lock(mutex_);
    out.swap(queue_);
    size_.store(0, std::memory_order_release);
    g_deferred_sends.store(0, std::memory_order_release);
  }

 private:
  std::mutex mutex_;
  std::vector<Deferred> queue_;
  std::atomic<size_t> size_{0};
};

DeferredQueue& queue() {
  static DeferredQueue* q = new DeferredQueue();  // never destroyed
  return *q;
}

// One flush at a time: a thread whose flush finds the queue empty because
// another thread took its sends must not post a later message to the same
// peer before those are posted.
std::mutex& flush_mutex() {
  static std::mutex* m = new std::mutex();  // never destroyed
  return *m;
}

// The library checks a send's arguments in MPI_Isend itself; a deferred
// send would report a bad one only at completion. So only sends whose
// arguments are plainly valid are deferred (the rest go to the library at
// once, which reports their errors as usual): an intracommunicator, a rank
// in it, a tag within the range every MPI supports.
bool valid_target(MPI_Comm comm, int dest, int tag) {
  if (comm == MPI_COMM_NULL || tag < 0 || tag > 32767) return false;
  int inter = 1;
  int size = 0;
  if (real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return false;
  if (real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) return false;
  return dest >= 0 && dest < size;
}

// A deferred send's outcome when it could not be posted: raised on its
// communicator, kept for the completion of its handle.
void fail(Deferred& d, int code) {
  d.state->error = code;
  real().MPI_Grequest_complete(d.handle);
  raise_error(d.comm, code, "MPI_Isend (deferred)");
}

// A direct message, packed by the flush where it needed packing: its
// descriptor, or (no slot free, memory the runtime cannot export) the bytes
// staged through host memory as any device send.
int post_direct(Deferred& d, const mover::PackOrder& order) {
  const bool packed = d.packs();
  const Status s = d.out.direct.post(d.plan, d.buf, packed ? &d.out.device.device_staging : nullptr, &order);
  if (s == Status::ok) {
    d.out.buffer = d.out.direct.descriptor();
    d.out.count = static_cast<int64_t>(kDirectDescriptorBytes);
    d.out.type = MPI_BYTE;
    return MPI_SUCCESS;
  }
  if (s != Status::not_supported) return mpi::error_class(s);
  if (!packed) return prepare_send(d.plan, d.buf, d.count, d.type, &d.out);
  if (const Status w = mover::wait_for_own_pack(order); w != Status::ok) return mpi::error_class(w);
  d.out.host = mover::Staging::acquire(mover::pinned_pool(), d.plan.bytes);
  if (!d.out.host) return MPI_ERR_NO_MEM;
  if (const Status c = mover::copy_bytes(d.out.host.data(), d.out.device.device_staging.data(), d.plan.bytes);
      c != Status::ok)
    return mpi::error_class(c);
  send_packed(&d.out, d.out.host.data(), d.plan.bytes);
  return MPI_SUCCESS;
}

}  // namespace

bool defers(const Plan& plan, MPI_Comm comm, int dest, int tag) {
  const DeferMode mode = g_defer.get();
  if (mode == DeferMode::off) return false;
  const bool device =
      plan.path == Path::device_pack && (plan.method != Method::staged || device_direct::takes(plan, comm, dest));
  const bool host = mode == DeferMode::all && plan.path == Path::host_pack;
  return (device || host) && plan.bytes <= INT_MAX && valid_target(comm, dest, tag);
}

int defer_isend(const Plan& plan, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  Deferred d(plan, buf, count, type, dest, tag, comm);
  d.direct = device_direct::takes(plan, comm, dest);
  if (d.packs()) {  // a direct message is packed on the device, where the receiver reads it
    d.out.device = mover::DeviceMessage(plan.device, d.direct ? Method::device : plan.method);
    if (const Status s = d.out.device.reserve(plan.bytes); s != Status::ok) return mpi::error_class(s);
  } else if (plan.path != Path::device_pack) {  // host_pack (STRATA_DEFER_SENDS=all)
    if (int rc = prepare_send(plan, buf, count, type, &d.out); rc != MPI_SUCCESS) return rc;
  }
  d.state = new HandleState();
  if (int rc = real().MPI_Grequest_start(query, free_state, cancel_nothing, d.state, &d.handle); rc != MPI_SUCCESS) {
    delete d.state;
    return rc;
  }
  *request = d.handle;
  counters().sends_deferred.fetch_add(1, std::memory_order_relaxed);
  queue().push(std::move(d));
  return MPI_SUCCESS;
}

std::atomic<size_t> g_deferred_sends{0};

namespace {

// Whether a deferred send is packed and posted on its own (stream_from.hpp):
// one launch for a whole window made the receiver of the first message
// wait for the pack of the last.
bool streams(const Deferred& d) { return d.packs() && d.plan.bytes >= stream_from(); }

// Posts one deferred send whose packing (if it packs) ended with `packed`
// (and is still running where `order` says so: then only direct messages
// were packed): its descriptor or its bytes go to the library, and its
// handle now stands for the library's request.
void post_deferred(Deferred& d, Status packed, const mover::PackOrder& order) {
  if (d.packs() && packed != Status::ok) {
    fail(d, mpi::error_class(packed));
    return;
  }
  if (d.direct) {  // its descriptor, or its bytes staged: post_direct sets what goes to the library
    if (int rc = post_direct(d, order); rc != MPI_SUCCESS) {
      fail(d, rc);
      return;
    }
  } else if (d.plan.path == Path::device_pack) {
    send_packed(&d.out, d.out.device.mpi_buffer(), d.plan.bytes);
  }
  MPI_Request library = MPI_REQUEST_NULL;
  const int rc = real().MPI_Isend(d.out.buffer, d.out.count, d.out.type, d.dest, d.tag, d.comm, &library);
  if (rc != MPI_SUCCESS) {
    d.out.direct.not_sent();
    fail(d, rc);
    return;
  }
  PendingOp op;
  op.kind = PendingOp::Kind::send;
  op.send = std::move(d.out);
  op.library = library;
  counters().requests_started.fetch_add(1, std::memory_order_relaxed);
  pending().put_back(d.handle, std::move(op));
}

// Packs the messages of batch[first, last) that need it in one batched
// launch, and the wait for it. Where every one of them is a direct message
// (device staging only its receiver reads), the pack is not waited for:
// *order names the record their receivers wait for on their GPUs
// (pack_order.hpp). Not for a group with a message the library reads (its
// bytes leave at once; measured on 2 x H200, stop 44: packing those first
// and waiting only for them made a halo exchange 10 us slower, the second
// launch costing what the wait saved), nor for a streamed message (packed
// and posted on its own already; a window of 16 MiB vectors measured
// 219-241 GB/s with the order against 256-258 without).
// A streamed direct message large enough (STRATA_P2P_IPC_CHUNK) and alone
// in its flush is packed in chunks instead, its receiver unpacking each as
// it is packed. Not one of several: a window of them overlaps one's unpack
// with the next one's pack already, and chunked it read 214 against 301
// GB/s (16 x 64 MiB vectors, 2 x H200), with the chunk events taken in turn
// or not.
Status pack_group(std::vector<Deferred>& batch, size_t first, size_t last, mover::PackOrder* order) {
  static thread_local std::vector<mover::PackTask> tasks;
  tasks.clear();
  if (Deferred& d = batch[first];
      batch.size() == 1 && streams(d) && d.direct && d.out.device.method() == Method::device) {
    const mover::ChunkPlan chunks = device_direct::chunk_plan_for(d.plan);
    if (chunks.chunks > 1) {
      d.part = whole(d.plan, d.buf);
      WaitTimer timed(counters().flush_pack_ns);
      counters().deferred_pack_groups.fetch_add(1, std::memory_order_relaxed);
      return mover::device_pack_chunked(d.out.device, d.part, chunks, order);
    }
  }
  bool may_order = !streams(batch[first]);
  for (size_t i = first; i < last; ++i) {
    Deferred& d = batch[i];
    if (!d.packs()) continue;
    d.part = whole(d.plan, d.buf);
    tasks.push_back(mover::PackTask{&d.out.device, &d.part, 1});
    may_order = may_order && d.direct;
  }
  if (tasks.empty()) return Status::ok;
  WaitTimer timed(counters().flush_pack_ns);
  counters().deferred_pack_groups.fetch_add(1, std::memory_order_relaxed);
  return mover::device_pack_all(tasks.data(), tasks.size(), may_order ? order : nullptr);
}

}  // namespace

void flush_deferred_sends_now() noexcept {
  if (queue().empty()) return;
  try {
    std::lock_guard<std::mutex> flushing(flush_mutex());
    static thread_local std::vector<Deferred> batch;
    batch.clear();
    queue().take_all(batch);
    if (std::any_of(batch.begin(), batch.end(), [](const Deferred& d) { return d.packs(); })) {
      counters().deferred_flushes.fetch_add(1, std::memory_order_relaxed);
    }
    // Groups in the order of the user's calls, so messages to one peer keep
    // their order: a streaming message alone, the messages between two
    // such in one launch (a halo's faces).
    size_t first = 0;
    while (first < batch.size()) {
      size_t last = first + 1;
      if (!streams(batch[first])) {
        while (last < batch.size() && !streams(batch[last])) ++last;
      }
      mover::PackOrder order;
      const Status packed = pack_group(batch, first, last, &order);
      for (size_t i = first; i < last; ++i) post_deferred(batch[i], packed, order);
      first = last;
    }
    batch.clear();  // failed sends' staging: MPI never saw it
  } catch (...) {
    STRATA_LOG(error, kP2p, "flushing deferred sends failed (out of memory?)");
  }
}

void flush_deferred_sends_to(MPI_Comm comm, int dest) noexcept {
  if (have_deferred_sends() && queue().holds(comm, dest)) flush_deferred_sends_now();
}

void release_user_handle(MPI_Request handle) {
  real().MPI_Grequest_complete(handle);
  real().MPI_Request_free(&handle);
}

}  // namespace strata::interposer
