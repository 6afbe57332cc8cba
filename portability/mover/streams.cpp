// The mover's per-thread, per-device streams (streams.hpp).
#include "portability/mover/streams.hpp"

#include <mutex>

namespace strata::mover {
namespace {

// Never destroyed: a thread's streams live as long as the process. Made
// at the thread's first device work only. Each thread's map is also listed
// in a process-wide table: the process owns them, and leak checkers, which
// do not scan thread-local storage (the sanitizer stage runs LeakSanitizer
// with use_tls=0), see them reachable.
thread_local std::map<int, Streams>* t_streams = nullptr;

std::map<int, Streams>& thread_streams() {
  if (t_streams == nullptr) {
    static std::mutex mu;
    static auto* every_thread = new std::vector<std::map<int, Streams>*>();
    auto* mine = new std::map<int, Streams>();
    std::lock_guard<std::mutex> lock(mu);
    every_thread->push_back(mine);
    t_streams = mine;
  }
  return *t_streams;
}

}  // namespace

Status streams_for(int device, Streams** out) {
  std::map<int, Streams>* per_device = &thread_streams();
  auto [it, created] = per_device->try_emplace(device);
  if (created) {
    Streams& s = it->second;
    // Ordered after the default stream: data an application produced there
    // and did not synchronize is complete before Strata reads it.
    if (gpu::stream_create(&s.work, true) != Status::ok || gpu::stream_create(&s.copies, true) != Status::ok ||
        gpu::event_create(&s.ready, /*timing=*/false) != Status::ok) {
      per_device->erase(it);
      return Status::device_error;
    }
  }
  *out = &it->second;
  return Status::ok;
}

std::map<int, Streams>* thread_streams_if_any() { return t_streams; }

}  // namespace strata::mover
