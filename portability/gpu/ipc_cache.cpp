// The IPC caches (ipc_cache.hpp): handles exported by this process, and the
// peers' allocations mapped here. Each side is one object behind one mutex;
// runtime calls (get-handle, open, close) are made under it, which keeps a
// mapping from being opened twice or closed while another thread takes it.
#include "portability/gpu/ipc_cache.hpp"

#include "base/log.hpp"

#include <cinttypes>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

namespace strata::gpu {
namespace {

// --- exporter -------------------------------------------------------------------

class Exports {
 public:
  // The handle of allocation `r`, from the cache when its id matches.
  Status handle_of(const AllocationRange& r, IpcHandle* handle) {
    const auto base = reinterpret_cast<uintptr_t>(r.base);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(base);
    if (it != map_.end() && it->second.buffer_id == r.buffer_id) {
      ++stats_.export_hits;
      *handle = it->second.handle;
      return Status::ok;
    }
    IpcHandle h{};
    STRATA_TRY(ipc_get_handle(r.base, &h));
    ++stats_.export_misses;
    if (it != map_.end()) {  // the range was freed and allocated again
      ++stats_.export_stale_replaced;
      it->second = Entry{r.buffer_id, h};
    } else {
      if (map_.size() >= kIpcMaxExports) {
        map_.clear();  // handles cost nothing to drop: the next export asks again
        STRATA_LOG(debug, kDevice, "ipc: %zu exported handles, cleared", kIpcMaxExports);
      }
      try {
        map_.emplace(base, Entry{r.buffer_id, h});
      } catch (...) {  // not cached: the answer stands
      }
    }
    *handle = h;
    return Status::ok;
  }

  void add_stats(IpcCacheStats* s) {
    std::lock_guard<std::mutex> lock(mu_);
    s->export_hits = stats_.export_hits;
    s->export_misses = stats_.export_misses;
    s->export_stale_replaced = stats_.export_stale_replaced;
  }

 private:
  struct Entry {
    uint64_t buffer_id;
    IpcHandle handle;
  };
  std::mutex mu_;
  std::unordered_map<uintptr_t, Entry> map_;  // allocation base -> its handle
  IpcCacheStats stats_;
};

// --- importer -------------------------------------------------------------------

struct Key {
  uint64_t peer;
  uint64_t base;
  bool operator==(const Key& o) const { return peer == o.peer && base == o.base; }
};

struct KeyHash {
  size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.peer * 0x9E3779B97F4A7C15ull ^ k.base); }
};

struct Mapping {
  Key key{};
  uint64_t buffer_id = 0;
  uint64_t bytes = 0;
  char* mapped = nullptr;
  uint32_t users = 0;   // imports not yet released
  bool cached = false;  // in by_key_ and lru_ (else dropped: closed at its last release)
  std::list<Mapping*>::iterator lru;
};

class Imports {
 public:
  Status import(uint64_t peer, const IpcExport& e, char** mapped_base) {
    std::lock_guard<std::mutex> lock(mu_);
    const Key key{peer, e.base};
    auto it = by_key_.find(key);
    if (it != by_key_.end()) {
      Mapping* m = it->second;
      if (m->buffer_id == e.buffer_id && m->bytes == e.bytes) {
        ++stats_.hits;
        ++m->users;
        lru_.splice(lru_.begin(), lru_, m->lru);
        *mapped_base = m->mapped;
        return Status::ok;
      }
      // The peer freed that range and allocated it again: the old mapping
      // shows the old allocation, never the new bytes.
      ++stats_.stale_replaced;
      STRATA_LOG(debug, kDevice, "ipc: peer %" PRIu64 " base %#" PRIx64 ": buffer id %" PRIu64 " replaced by %" PRIu64,
                 peer, e.base, m->buffer_id, e.buffer_id);
      drop(m);
    }
    // This very allocation, dropped by ipc_forget_peer while in use and
    // still open: taken back rather than opened twice (CUDA may refuse a
    // second open of an allocation mapped here).
    for (auto& entry : by_mapped_) {
      Mapping* d = entry.second.get();
      if (!d->cached && d->key == key && d->buffer_id == e.buffer_id && d->bytes == e.bytes) {
        if (!enter(d)) return Status::out_of_memory;
        ++stats_.hits;
        ++d->users;
        *mapped_base = d->mapped;
        return Status::ok;
      }
    }
    ++stats_.misses;
    drop_overlapping(key.peer, e);
    make_room();
    std::unique_ptr<Mapping> fresh;
    try {
      fresh = std::make_unique<Mapping>();
    } catch (...) {
      return Status::out_of_memory;
    }
    void* p = nullptr;
    STRATA_TRY(ipc_open(e.handle, &p));
    ++stats_.opens;
    char* mapped = static_cast<char*>(p);
    // The runtime's range must hold what the descriptor claims.
    AllocationRange r;
    if (allocation_of(p, &r) == Status::ok && r.bytes < e.bytes) {
      STRATA_LOG(error, kDevice, "ipc: peer %" PRIu64 ": the mapping of %" PRIu64 " bytes holds only %zu", peer,
                 e.bytes, r.bytes);
      close_now(mapped);
      return Status::invalid_argument;
    }
    fresh->key = key;
    fresh->buffer_id = e.buffer_id;
    fresh->bytes = e.bytes;
    fresh->mapped = mapped;
    fresh->users = 1;
    if (!insert(std::move(fresh))) {
      close_now(mapped);
      return Status::out_of_memory;
    }
    STRATA_LOG(debug, kDevice,
               "ipc: peer %" PRIu64 " base %#" PRIx64 " id %" PRIu64 " (%" PRIu64 " bytes) mapped at %p", peer, e.base,
               e.buffer_id, e.bytes, p);
    *mapped_base = mapped;
    return Status::ok;
  }

  Status release(const char* mapped_base) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_mapped_.find(mapped_base);
    if (it == by_mapped_.end() || it->second->users == 0) {
      STRATA_LOG(error, kDevice, "ipc: release of %p, which no import holds", static_cast<const void*>(mapped_base));
      return Status::invalid_argument;
    }
    Mapping* m = it->second.get();
    if (--m->users == 0 && !m->cached) close(m);
    return Status::ok;
  }

  void forget_peer(uint64_t peer) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = lru_.begin(); it != lru_.end();) {
      Mapping* m = *it++;  // drop() erases m's node
      if (m->key.peer == peer) drop(m);
    }
  }

  void add_stats(IpcCacheStats* s) {
    std::lock_guard<std::mutex> lock(mu_);
    s->hits = stats_.hits;
    s->misses = stats_.misses;
    s->stale_replaced = stats_.stale_replaced;
    s->evicted = stats_.evicted;
    s->opens = stats_.opens;
    s->closes = stats_.closes;
    s->mapped = by_mapped_.size();
  }

 private:
  // Enters a fresh mapping everywhere, or nowhere (false; the mapping is
  // then the caller's to close).
  bool insert(std::unique_ptr<Mapping> fresh) {
    Mapping* m = fresh.get();
    const char* mapped = m->mapped;
    try {
      if (!by_mapped_.emplace(mapped, std::move(fresh)).second) {
        STRATA_LOG(error, kDevice, "ipc: the runtime mapped %p twice", static_cast<const void*>(mapped));
        return false;
      }
    } catch (...) {
      return false;
    }
    if (!enter(m)) {
      by_mapped_.erase(mapped);
      return false;
    }
    return true;
  }

  // Puts an open mapping (in by_mapped_) into the cache, most recent;
  // false, and nothing changed, when memory runs out.
  bool enter(Mapping* m) {
    try {
      by_key_.emplace(m->key, m);
    } catch (...) {
      return false;
    }
    try {
      lru_.push_front(m);
    } catch (...) {
      by_key_.erase(m->key);
      return false;
    }
    m->lru = lru_.begin();
    m->cached = true;
    return true;
  }

  // A new allocation of `peer` that overlaps a cached mapping of its own
  // (another base) means that allocation was freed: its mapping is stale,
  // and while it is open CUDA refuses to open the new one (already mapped;
  // the handle's memory overlaps a mapping of this process). UCX's cuda_ipc
  // cache drops overlapping regions the same way.
  void drop_overlapping(uint64_t peer, const IpcExport& e) {
    for (auto it = lru_.begin(); it != lru_.end();) {
      Mapping* m = *it++;  // drop() erases m's node
      if (m->key.peer == peer && m->key.base < e.base + e.bytes && e.base < m->key.base + m->bytes) {
        ++stats_.stale_replaced;
        STRATA_LOG(debug, kDevice,
                   "ipc: peer %" PRIu64 " base %#" PRIx64 " (%" PRIu64 " bytes) overlaps a new allocation at %#" PRIx64,
                   peer, m->key.base, m->bytes, e.base);
        drop(m);
      }
    }
  }

  // Takes a mapping out of the cache; closed now unless in use.
  void drop(Mapping* m) {
    by_key_.erase(m->key);
    lru_.erase(m->lru);
    m->cached = false;
    if (m->users == 0) close(m);
  }

  // Keeps the cache under its bound: the least recently used mappings not
  // in use are closed.
  void make_room() {
    for (auto it = lru_.end(); lru_.size() >= kIpcMaxMappings && it != lru_.begin();) {
      Mapping* m = *--it;
      if (m->users != 0) continue;
      ++it;  // the node after m's, which drop() leaves valid
      ++stats_.evicted;
      drop(m);
    }
    if (lru_.size() >= kIpcMaxMappings) {
      STRATA_LOG(debug, kDevice, "ipc: all %zu cached mappings are in use: going past the bound", lru_.size());
    }
  }

  void close(Mapping* m) {
    char* mapped = m->mapped;
    by_mapped_.erase(mapped);  // destroys m
    close_now(mapped);
  }

  void close_now(char* mapped) {
    ++stats_.closes;
    if (ipc_close(mapped) != Status::ok) {
      STRATA_LOG(warn, kDevice, "ipc: closing the mapping at %p failed (%s)", static_cast<void*>(mapped),
                 last_error_string());
    }
  }

  std::mutex mu_;
  std::unordered_map<Key, Mapping*, KeyHash> by_key_;                    // cached mappings
  std::list<Mapping*> lru_;                                              // cached mappings, most recent first
  std::unordered_map<const char*, std::unique_ptr<Mapping>> by_mapped_;  // every open mapping (owner)
  IpcCacheStats stats_;
};

// Never destroyed: peers may be forgotten from atexit handlers (MPI_Finalize).
Exports& exports() {
  static Exports* e = new Exports;
  return *e;
}

Imports& imports() {
  static Imports* i = new Imports;
  return *i;
}

}  // namespace

Status ipc_export(const void* device_ptr, IpcExport* out) noexcept {
  if (device_ptr == nullptr || out == nullptr) return Status::invalid_argument;
  AllocationRange r;
  STRATA_TRY(allocation_of(device_ptr, &r));
  IpcExport e;
  std::memset(&e, 0, sizeof(e));
  STRATA_TRY(exports().handle_of(r, &e.handle));
  e.buffer_id = r.buffer_id;
  e.base = reinterpret_cast<uintptr_t>(r.base);
  e.bytes = r.bytes;
  e.offset = reinterpret_cast<uintptr_t>(device_ptr) - e.base;
  e.device = r.device;
  *out = e;
  return Status::ok;
}

Status ipc_import(uint64_t peer, const IpcExport& e, char** mapped_base) noexcept {
  if (mapped_base == nullptr || e.bytes == 0 || e.offset >= e.bytes) {
    STRATA_LOG(error, kDevice,
               "ipc: malformed descriptor from peer %" PRIu64 " (%" PRIu64 " bytes, offset %" PRIu64 ")", peer, e.bytes,
               e.offset);
    return Status::invalid_argument;
  }
  return imports().import(peer, e, mapped_base);
}

Status ipc_release(const char* mapped_base) noexcept {
  if (mapped_base == nullptr) return Status::invalid_argument;
  return imports().release(mapped_base);
}

void ipc_forget_peer(uint64_t peer) noexcept { imports().forget_peer(peer); }

IpcCacheStats ipc_cache_stats() noexcept {
  IpcCacheStats s;
  imports().add_stats(&s);
  exports().add_stats(&s);
  return s;
}

}  // namespace strata::gpu
