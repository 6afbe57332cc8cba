// Streams and events of the device stand-in (fake_device.hpp). Work runs at
// the call, so a stream is only a handle and every event is complete once
// recorded; a timing event keeps the time it was recorded at. Handles are
// kept in a table: using one after it was destroyed (or one never made
// here) is an error, where a real runtime may crash or answer for a stranger.
#include "portability/gpu/fake_device.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_set>

namespace strata::gpu::fake {
namespace {

using Clock = std::chrono::steady_clock;

struct FakeStream {
  int device = 0;
  bool ordered_after_default = false;
};

struct FakeEvent {
  bool timing = false;
  bool interprocess = false;
  bool recorded = false;
  Clock::time_point at{};
};

class Handles {
 public:
  void* add_stream(FakeStream* s) {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.insert(s);
    return s;
  }
  void* add_event(FakeEvent* e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.insert(e);
    return e;
  }
  bool has_stream(void* s) {
    std::lock_guard<std::mutex> lock(mu_);
    return streams_.count(static_cast<FakeStream*>(s)) != 0;
  }
  bool remove_stream(void* s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (streams_.erase(static_cast<FakeStream*>(s)) == 0) return false;
    delete static_cast<FakeStream*>(s);
    return true;
  }
  bool remove_event(void* e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (events_.erase(static_cast<FakeEvent*>(e)) == 0) return false;
    delete static_cast<FakeEvent*>(e);
    return true;
  }
  // Runs f(FakeEvent&) under the lock; false when `e` is not a live event.
  template <class F>
  bool with_event(void* e, F f) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = events_.find(static_cast<FakeEvent*>(e));
    if (it == events_.end()) return false;
    f(**it);
    return true;
  }
  template <class F>
  bool with_events(void* a, void* b, F f) {
    std::lock_guard<std::mutex> lock(mu_);
    auto ia = events_.find(static_cast<FakeEvent*>(a)), ib = events_.find(static_cast<FakeEvent*>(b));
    if (ia == events_.end() || ib == events_.end()) return false;
    f(**ia, **ib);
    return true;
  }

 private:
  std::mutex mu_;
  std::unordered_set<FakeStream*> streams_;
  std::unordered_set<FakeEvent*> events_;
};

// Never destroyed: streams may be released from atexit handlers.
Handles& handles() {
  static Handles* h = new Handles;
  return *h;
}

constexpr const char* kBadHandle = "invalid resource handle";

}  // namespace

Status stream_create(Stream* stream, bool ordered_after_default) noexcept {
  if (stream == nullptr) return Status::invalid_argument;
  auto* s = new (std::nothrow) FakeStream;
  if (s == nullptr) return Status::out_of_memory;
  (void)get_device(&s->device);
  s->ordered_after_default = ordered_after_default;
  try {
    *stream = handles().add_stream(s);
  } catch (...) {
    delete s;
    return Status::out_of_memory;
  }
  return Status::ok;
}

Status stream_destroy(Stream stream) noexcept {
  if (stream == nullptr) return Status::invalid_argument;  // the default stream is not ours to destroy
  return handles().remove_stream(stream) ? Status::ok : fail("stream_destroy", kBadHandle);
}

Status check_stream(Stream stream, const char* call) noexcept {
  if (stream == nullptr || handles().has_stream(stream)) return Status::ok;
  return fail(call, kBadHandle);
}

Status event_create(Event* event, bool timing) noexcept {
  if (event == nullptr) return Status::invalid_argument;
  auto* e = new (std::nothrow) FakeEvent;
  if (e == nullptr) return Status::out_of_memory;
  e->timing = timing;
  try {
    *event = handles().add_event(e);
  } catch (...) {
    delete e;
    return Status::out_of_memory;
  }
  return Status::ok;
}

Status event_destroy(Event event) noexcept {
  if (event == nullptr) return Status::invalid_argument;
  return handles().remove_event(event) ? Status::ok : fail("event_destroy", kBadHandle);
}

Status event_record(Event event, Stream stream) noexcept {
  if (event == nullptr) return Status::invalid_argument;
  STRATA_TRY(check_stream(stream, "event_record"));
  const Clock::time_point now = Clock::now();
  const bool live = handles().with_event(event, [&](FakeEvent& e) {
    e.recorded = true;
    e.at = now;
  });
  return live ? Status::ok : fail("event_record", kBadHandle);
}

Status event_synchronize(Event event) noexcept {
  if (event == nullptr) return Status::invalid_argument;
  return handles().with_event(event, [](FakeEvent&) {}) ? Status::ok : fail("event_synchronize", kBadHandle);
}

// Work ran at the call: recorded or not, an event is complete (as a real
// event that was never recorded is).
Status event_query(Event event, bool* done) noexcept {
  if (event == nullptr || done == nullptr) return Status::invalid_argument;
  if (!handles().with_event(event, [](FakeEvent&) {})) return fail("event_query", kBadHandle);
  *done = true;
  return Status::ok;
}

Status event_elapsed_ms(Event start, Event stop, float* ms) noexcept {
  if (start == nullptr || stop == nullptr || ms == nullptr) return Status::invalid_argument;
  const char* error = nullptr;
  float t = 0.0f;
  const bool live = handles().with_events(start, stop, [&](const FakeEvent& a, const FakeEvent& b) {
    if (!a.timing || !b.timing || !a.recorded || !b.recorded) {
      error = kBadHandle;  // what CUDA answers for an event without timing or never recorded
      return;
    }
    t = std::chrono::duration<float, std::milli>(b.at - a.at).count();
  });
  if (!live) return fail("event_elapsed_ms", kBadHandle);
  if (error != nullptr) return fail("event_elapsed_ms", error);
  *ms = t;
  return Status::ok;
}

Status stream_wait_event(Stream stream, Event event) noexcept {
  if (event == nullptr) return Status::invalid_argument;
  STRATA_TRY(check_stream(stream, "stream_wait_event"));
  return handles().with_event(event, [](FakeEvent&) {}) ? Status::ok : fail("stream_wait_event", kBadHandle);
}

namespace {

constexpr uint64_t kEventMagic = 0x5354524154414556ull;  // "STRATAEV"

// An IPC event handle's bytes (gpu::IpcEventHandle is 64).
struct EventHandle {
  uint64_t magic;
  int64_t pid;     // the exporting process
  uint64_t event;  // its event there
  unsigned char zero[40];
};
static_assert(sizeof(EventHandle) == sizeof(IpcEventHandle::bytes), "the stand-in's handle fills an IpcEventHandle");

}  // namespace

Status ipc_event_create(Event* event) noexcept {
  STRATA_TRY(event_create(event, false));
  handles().with_event(*event, [](FakeEvent& e) { e.interprocess = true; });
  return Status::ok;
}

Status ipc_event_get_handle(Event event, IpcEventHandle* handle) noexcept {
  if (event == nullptr || handle == nullptr) return Status::invalid_argument;
  bool interprocess = false;
  if (!handles().with_event(event, [&](FakeEvent& e) { interprocess = e.interprocess; })) {
    return fail("ipc_event_get_handle", kBadHandle);
  }
  if (!interprocess) return fail("ipc_event_get_handle", "invalid argument (not an interprocess event)");
  EventHandle h{};
  h.magic = kEventMagic;
  h.pid = static_cast<int64_t>(getpid());
  h.event = reinterpret_cast<uintptr_t>(event);
  std::memcpy(handle->bytes, &h, sizeof h);
  return Status::ok;
}

// Work ran at the call, so the exporter's records are all complete: the
// opened event is a recorded one of this process.
Status ipc_event_open(const IpcEventHandle& handle, Event* event) noexcept {
  if (event == nullptr) return Status::invalid_argument;
  EventHandle h;
  std::memcpy(&h, handle.bytes, sizeof h);
  if (h.magic != kEventMagic) return fail("ipc_event_open", "invalid argument (not an IPC event handle)");
  if (h.pid == static_cast<int64_t>(getpid())) return fail("ipc_event_open", "invalid device context");
  STRATA_TRY(event_create(event, false));
  handles().with_event(*event, [](FakeEvent& e) { e.recorded = true; });
  return Status::ok;
}

}  // namespace strata::gpu::fake
