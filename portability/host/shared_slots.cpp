#include "portability/host/shared_slots.hpp"

#include "base/log.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>
#include <type_traits>
#include <utility>

namespace strata::slots {

namespace detail {

// The table's first bytes, written once by the owner before any peer can
// know the table (closed aside).
struct alignas(64) Header {
  uint64_t magic;
  uint32_t version;
  uint32_t slot_count;
  uint32_t slot_bytes;
  int32_t owner_pid;
  uint64_t table_id;
  std::atomic<uint32_t> closed;  // 1 once the owner closed the table
  // When any receiver last claimed or finished one of this table's
  // messages (ticks_now()): a receiver working through them holds off the
  // bounces (SlotTable::test).
  std::atomic<int64_t> last_taken;
  std::atomic<uint32_t> notes;  // published notes (SlotTable::publish_notes); they follow the slots
};

struct alignas(64) SharedSlot {
  std::atomic<uint64_t> word;  // generation | claimer pid | state
  Location location;           // written by the owner before it publishes posted or rehomed
};

}  // namespace detail

namespace {

using detail::Header;
using detail::SharedSlot;
using Clock = std::chrono::steady_clock;

// The steady clock's ticks since its epoch: CLOCK_MONOTONIC, the same in
// every process of the node, so one process can store them in shared
// memory (Header::last_taken) and another compare them with its own.
int64_t ticks_now() noexcept { return Clock::now().time_since_epoch().count(); }

constexpr uint64_t kMagic = 0x31544f4c53525453ull;  // "STRSLOT1"
constexpr uint32_t kVersion = 4;                    // 2: Header::last_taken; 3: 104-byte locations; 4: notes
constexpr const char* kMemfdName = "strata-slots";
constexpr uint32_t kMaxSlots = 65536;

static_assert(std::atomic<uint64_t>::is_always_lock_free, "slot words must be lock-free to work across processes");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the closed flag must be lock-free");
static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t), "an atomic word is a plain word in shared memory");
static_assert(std::is_trivially_copyable_v<Location> && sizeof(Location) == kLocationBytes, "opaque location");
static_assert(std::is_trivially_copyable_v<SlotRef> && sizeof(SlotRef) == 32, "a slot reference travels in messages");

// The word: generation (34 bits) | claimer pid (22 bits: Linux's pid_max is
// at most 2^22) | state (8 bits).
enum State : uint64_t { kFree = 0, kPosted = 1, kClaimed = 2, kDone = 3, kWithdrawing = 4, kRehomed = 5 };
constexpr unsigned kPidShift = 8;
constexpr unsigned kGenShift = 30;
constexpr uint64_t kPidMask = (uint64_t{1} << 22) - 1;
constexpr uint64_t kGenMask = (uint64_t{1} << 34) - 1;

constexpr uint64_t pack(uint64_t gen, uint64_t pid, State state) {
  return (gen << kGenShift) | ((pid & kPidMask) << kPidShift) | state;
}
constexpr uint64_t gen_of(uint64_t w) { return w >> kGenShift; }
constexpr pid_t pid_of(uint64_t w) { return static_cast<pid_t>((w >> kPidShift) & kPidMask); }
constexpr State state_of(uint64_t w) { return static_cast<State>(w & 0xffu); }
constexpr uint64_t next_gen(uint64_t gen) {
  const uint64_t g = (gen + 1) & kGenMask;
  return g == 0 ? 1 : g;  // 0 is never issued: a zeroed reference matches nothing
}

size_t table_bytes(uint32_t slots) {
  const size_t raw = sizeof(Header) + size_t{slots} * sizeof(SharedSlot) + size_t{kMaxNotes} * sizeof(Note);
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (raw + page - 1) / page * page;
}

SharedSlot* slots_after(Header* header) { return reinterpret_cast<SharedSlot*>(header + 1); }
Note* notes_after(Header* header) { return reinterpret_cast<Note*>(slots_after(header) + header->slot_count); }

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spin briefly, then yield for up to 2 ms, then sleep in steps of up to
// 50 µs (a waiter must still notice its bound on time). A waiter whose
// receiver is copying (a large pull takes hundreds of µs) yields rather than
// sleeps: nanosleep wakes late by the timer slack (50 µs by default), which
// a ping-pong of 64 MiB on NVLink measured; sched_yield returns at once
// where no other thread wants the core, and gives it away where one does
// (an oversubscribed node).
class Backoff {
 public:
  void pause() {
    if (n_ < 16) {
      for (int i = 0; i < 32; ++i) cpu_relax();
    } else if (n_ == 16 || std::chrono::steady_clock::now() - yielding_since_ < std::chrono::milliseconds(2)) {
      if (n_ == 16) yielding_since_ = std::chrono::steady_clock::now();
      sched_yield();
    } else {
      sleeps_ = std::min(sleeps_ + 1, 6u);
      const timespec ts{0, static_cast<long>(std::min(1000u << sleeps_, 50000u))};
      nanosleep(&ts, nullptr);
    }
    n_ = std::min(n_ + 1, 17u);
  }

 private:
  unsigned n_ = 0;
  unsigned sleeps_ = 0;
  std::chrono::steady_clock::time_point yielding_since_{};
};

// Is `pid` a live process (not gone, not a zombie)? A process we may not
// look at counts as alive.
bool process_alive(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT && errno != ESRCH;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  const int read_errno = errno;
  ::close(fd);
  if (n <= 0) return !(n < 0 && read_errno == ESRCH);
  buf[n] = '\0';
  const char* paren = std::strrchr(buf, ')');  // the command name may hold anything but ends at the last ')'
  if (paren == nullptr || paren[1] != ' ') return true;
  const char state = paren[2];
  return state != 'Z' && state != 'X' && state != 'x';
}

// This process's pid, cached (getpid is a system call, and the owner asks
// on every call): refreshed in the child of every fork().
std::atomic<pid_t> g_self{0};
std::once_flag g_self_once;

void refresh_self() { g_self.store(getpid(), std::memory_order_relaxed); }

pid_t self_pid() {
  std::call_once(g_self_once, [] {
    refresh_self();
    pthread_atfork(nullptr, nullptr, &refresh_self);
  });
  return g_self.load(std::memory_order_relaxed);
}

uint64_t random_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof(id), 0) != static_cast<ssize_t>(sizeof(id))) {
    id = static_cast<uint64_t>(ticks_now()) ^ (uint64_t{static_cast<uint32_t>(getpid())} << 32);
  }
  return id == 0 ? 1 : id;
}

}  // namespace

// --- status names ----------------------------------------------------------------

const char* to_string(SlotStatus status) noexcept {
  switch (status) {
    case SlotStatus::ok: return "ok";
    case SlotStatus::pending: return "pending";
    case SlotStatus::exhausted: return "no free slot";
    case SlotStatus::stale: return "stale slot reference";
    case SlotStatus::claimed: return "claimed by a receiver";
    case SlotStatus::owner_gone: return "the table's owner is gone";
    case SlotStatus::not_owner: return "not the table's owner (forked child)";
    case SlotStatus::invalid: return "invalid ticket or reference";
    case SlotStatus::failed: return "failed";
  }
  return "unknown slot status";
}

Status to_status(SlotStatus status) noexcept {
  switch (status) {
    case SlotStatus::ok: return Status::ok;
    case SlotStatus::exhausted:
    case SlotStatus::not_owner: return Status::not_supported;
    case SlotStatus::stale:
    case SlotStatus::invalid: return Status::invalid_argument;
    case SlotStatus::owner_gone: return Status::mpi_error;
    case SlotStatus::pending:
    case SlotStatus::claimed: return Status::timeout;
    case SlotStatus::failed: return Status::internal;
  }
  return Status::internal;
}

// --- the owner -------------------------------------------------------------------

struct SlotTable::Record {
  enum class Phase : uint8_t { free, outstanding, rehomed, quarantined };
  Phase phase = Phase::free;
  uint64_t generation = 1;
  void* message = nullptr;
  void* bounce = nullptr;
  // Touched only by the thread that holds the ticket while outstanding.
  bool clock_started = false;
  Clock::time_point started{};
  Clock::time_point next_rehome{};
  Clock::time_point next_liveness{};
};

Result<std::unique_ptr<SlotTable>> SlotTable::create(const TableConfig& config, const BounceHooks& hooks) noexcept {
  if (config.slots == 0 || config.slots > kMaxSlots || config.bound.count() < 0 ||
      config.liveness_period.count() <= 0 || config.close_wait.count() < 0 ||
      (hooks.copy_out != nullptr && hooks.release == nullptr)) {
    STRATA_LOG(error, kP2p, "slot table: invalid configuration (%u slots)", config.slots);
    return Status::invalid_argument;
  }
  if (static_cast<uint64_t>(self_pid()) > kPidMask) {
    STRATA_LOG(warn, kP2p, "slot table: pid %d does not fit the slot word; no shared slots",
               static_cast<int>(self_pid()));
    return Status::not_supported;
  }
  std::unique_ptr<SlotTable> t(new (std::nothrow) SlotTable());
  if (t == nullptr) return Status::out_of_memory;
  t->config_ = config;
  t->hooks_ = hooks;
  t->records_.reset(new (std::nothrow) Record[config.slots]);
  if (t->records_ == nullptr) return Status::out_of_memory;
  t->free_.reserve(config.slots);

  const size_t bytes = table_bytes(config.slots);
  // Sealed against resizing: a peer cannot shrink the table under us.
  const int fd = memfd_create(kMemfdName, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    STRATA_LOG(warn, kP2p, "slot table: memfd_create failed: %s", std::strerror(errno));
    return Status::not_supported;
  }
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    STRATA_LOG(warn, kP2p, "slot table: sizing the memfd failed: %s", std::strerror(errno));
    ::close(fd);
    return Status::out_of_memory;
  }
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    STRATA_LOG(warn, kP2p, "slot table: mmap failed: %s", std::strerror(errno));
    ::close(fd);
    return Status::out_of_memory;
  }
  t->fd_ = fd;
  t->map_ = map;
  t->map_bytes_ = bytes;
  t->ref_ = TableRef{static_cast<int32_t>(self_pid()), fd, random_id()};

  // The memfd is zeroed; the atomics are constructed in place (lock-free
  // atomics of plain words: what a peer's mapping then sees). Peers learn
  // of the table only through a message sent after this (a system call
  // orders these writes before it).
  auto* header = new (map) Header{};
  header->magic = kMagic;
  header->version = kVersion;
  header->slot_count = config.slots;
  header->slot_bytes = sizeof(SharedSlot);
  header->owner_pid = t->ref_.pid;
  header->table_id = t->ref_.id;
  header->closed.store(0, std::memory_order_relaxed);
  header->last_taken.store(0, std::memory_order_relaxed);
  header->notes.store(0, std::memory_order_relaxed);
  SharedSlot* slots = slots_after(header);
  for (uint32_t i = 0; i < config.slots; ++i) {
    new (&slots[i]) SharedSlot{};
    slots[i].word.store(pack(1, 0, kFree), std::memory_order_relaxed);
  }
  t->header_ = header;
  t->slots_ = slots;
  for (uint32_t i = config.slots; i > 0; --i) t->free_.push_back(i - 1);
  return Result<std::unique_ptr<SlotTable>>(std::move(t));
}

SlotTable::~SlotTable() { close(); }

bool SlotTable::owner_here() const noexcept { return self_pid() == ref_.pid; }

SlotStatus SlotTable::check_ticket(const Ticket& ticket, Record** record) noexcept {
  if (closed_ || ticket.index >= config_.slots || ticket.reserved != 0) return SlotStatus::invalid;
  std::lock_guard<std::mutex> lock(mutex_);
  Record& r = records_[ticket.index];
  if (r.phase != Record::Phase::outstanding || r.generation != ticket.generation) return SlotStatus::invalid;
  *record = &r;
  return SlotStatus::ok;
}

void SlotTable::free_slot_locked(uint32_t index) noexcept {
  Record& r = records_[index];
  r.generation = next_gen(r.generation);
  r.phase = Record::Phase::free;
  r.message = nullptr;
  r.bounce = nullptr;
  slots_[index].word.store(pack(r.generation, 0, kFree), std::memory_order_release);
  free_.push_back(index);
}

SlotStatus SlotTable::acquire(const Location& where, void* message, Ticket* ticket) noexcept {
  if (ticket == nullptr) return SlotStatus::invalid;
  if (!owner_here()) return SlotStatus::not_owner;
  if (closed_) return SlotStatus::failed;
  std::vector<void*> bounces;
  SlotStatus status = SlotStatus::exhausted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiting_ > 0) reap_locked(&bounces, true);
    while (!free_.empty()) {
      const uint32_t i = free_.back();
      free_.pop_back();
      Record& r = records_[i];
      SharedSlot& s = slots_[i];
      if (s.word.load(std::memory_order_relaxed) != pack(r.generation, 0, kFree)) {
        // Only a peer writing where it must not could do this: keep the slot out of use.
        STRATA_LOG(error, kP2p, "slot table: slot %u changed while free; taken out of use", i);
        r.phase = Record::Phase::quarantined;
        continue;
      }
      r.phase = Record::Phase::outstanding;
      r.message = message;
      r.clock_started = false;
      r.next_rehome = Clock::time_point{};
      r.next_liveness = Clock::time_point{};
      std::memcpy(&s.location, &where, sizeof(Location));
      s.word.store(pack(r.generation, 0, kPosted), std::memory_order_release);  // publishes the location
      *ticket = Ticket{i, 0, r.generation};
      ++stats_.acquired;
      status = SlotStatus::ok;
      break;
    }
    if (status != SlotStatus::ok) ++stats_.exhausted;
  }
  for (void* b : bounces) hooks_.release(hooks_.context, b);
  return status;
}

// posted -> withdrawing -> (bytes copied to a bounce) -> rehomed: ok. claimed
// when a receiver claimed first (the caller looks again); pending when the
// copy failed (the slot is posted again, its receiver may still claim it,
// and the next try waits another bound).
SlotStatus SlotTable::rehome(uint32_t index, Record& r, Completion* how) noexcept {
  SharedSlot& s = slots_[index];
  uint64_t expected = pack(r.generation, 0, kPosted);
  if (!s.word.compare_exchange_strong(expected, pack(r.generation, 0, kWithdrawing), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    return SlotStatus::claimed;
  }
  // No receiver holds the slot and none can claim it now: the caller's bytes
  // are ours to copy, the location ours to rewrite.
  Location where{};
  void* bounce = nullptr;
  const Status copied = hooks_.copy_out(hooks_.context, r.message, &where, &bounce);
  if (copied != Status::ok) {
    s.word.store(pack(r.generation, 0, kPosted), std::memory_order_release);
    r.next_rehome = Clock::now() + config_.bound;
    STRATA_LOG_ONCE(warn, kP2p, "slot table: moving a message to a bounce failed (%s); waiting for its receiver",
                    strata::to_string(copied));
    return SlotStatus::pending;
  }
  std::memcpy(&s.location, &where, sizeof(Location));
  s.word.store(pack(r.generation, 0, kRehomed), std::memory_order_release);  // publishes the bounce
  {
    std::lock_guard<std::mutex> lock(mutex_);
    r.phase = Record::Phase::rehomed;
    r.bounce = bounce;
    r.message = nullptr;
    ++waiting_;
    ++stats_.rehomed;
  }
  *how = Completion::rehomed;
  return SlotStatus::ok;
}

SlotStatus SlotTable::test(const Ticket& ticket, Completion* how) noexcept {
  if (how == nullptr) return SlotStatus::invalid;
  if (!owner_here()) return SlotStatus::not_owner;
  Record* rp = nullptr;
  const SlotStatus valid = check_ticket(ticket, &rp);
  if (valid != SlotStatus::ok) return valid;
  Record& r = *rp;
  SharedSlot& s = slots_[ticket.index];
  const Clock::time_point now = Clock::now();
  if (!r.clock_started) {
    r.clock_started = true;
    r.started = now;
    r.next_liveness = now + config_.liveness_period;
  }
  for (;;) {
    uint64_t w = s.word.load(std::memory_order_acquire);
    if (gen_of(w) != r.generation) break;
    switch (state_of(w)) {
      case kDone: {  // the receiver's reads happened before its release of done
        std::lock_guard<std::mutex> lock(mutex_);
        free_slot_locked(ticket.index);
        ++stats_.delivered;
        *how = Completion::delivered;
        return SlotStatus::ok;
      }
      case kClaimed:
        if (now >= r.next_liveness) {
          r.next_liveness = now + config_.liveness_period;
          if (!process_alive(pid_of(w))) {
            if (!s.word.compare_exchange_strong(w, pack(r.generation, 0, kWithdrawing), std::memory_order_acq_rel)) {
              continue;  // it finished after all
            }
            STRATA_LOG(warn, kP2p, "slot table: receiver %d exited holding slot %u", pid_of(w), ticket.index);
            std::lock_guard<std::mutex> lock(mutex_);
            free_slot_locked(ticket.index);
            ++stats_.claimer_lost;
            *how = Completion::claimer_gone;
            return SlotStatus::ok;
          }
        }
        return SlotStatus::pending;
      case kPosted: {
        // The bound counts from this message's first test or from the last
        // claim or finish of any of this table's messages, whichever is
        // later: a receiver working through a window of messages (each
        // claimed only as its turn comes) is not late (docs/device.md,
        // "Completion slots").
        const Clock::time_point taken{Clock::duration(header_->last_taken.load(std::memory_order_relaxed))};
        const Clock::time_point since = taken > r.started ? taken : r.started;
        if (hooks_.copy_out == nullptr || now - since < config_.bound || now < r.next_rehome) {
          return SlotStatus::pending;
        }
        const SlotStatus st = rehome(ticket.index, r, how);
        if (st != SlotStatus::claimed) return st;  // rehomed, or the copy failed
        {
          std::lock_guard<std::mutex> lock(mutex_);
          ++stats_.rehome_lost;
        }
        continue;  // a receiver claimed first: look again
      }
      default: break;
    }
    break;
  }
  STRATA_LOG(error, kP2p, "slot table: slot %u in an impossible state", ticket.index);
  return SlotStatus::failed;
}

SlotStatus SlotTable::wait(const Ticket& ticket, Completion* how) noexcept {
  Backoff backoff;
  for (;;) {
    const SlotStatus st = test(ticket, how);
    if (st != SlotStatus::pending) return st;
    backoff.pause();
  }
}

SlotStatus SlotTable::withdraw(const Ticket& ticket) noexcept {
  if (!owner_here()) return SlotStatus::not_owner;
  Record* rp = nullptr;
  const SlotStatus valid = check_ticket(ticket, &rp);
  if (valid != SlotStatus::ok) return valid;
  uint64_t expected = pack(rp->generation, 0, kPosted);
  if (!slots_[ticket.index].word.compare_exchange_strong(expected, pack(rp->generation, 0, kWithdrawing),
                                                         std::memory_order_acq_rel, std::memory_order_acquire)) {
    return SlotStatus::claimed;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  free_slot_locked(ticket.index);
  ++stats_.withdrawn;
  return SlotStatus::ok;
}

size_t SlotTable::reap_locked(std::vector<void*>* bounces, bool check_liveness) noexcept {
  size_t reaped = 0;
  const Clock::time_point now = Clock::now();
  for (uint32_t i = 0; i < config_.slots && waiting_ > 0; ++i) {
    Record& r = records_[i];
    if (r.phase != Record::Phase::rehomed) continue;
    uint64_t w = slots_[i].word.load(std::memory_order_acquire);
    if (gen_of(w) != r.generation) continue;
    bool lost = false;
    if (state_of(w) == kClaimed && check_liveness && now >= r.next_liveness) {
      r.next_liveness = now + config_.liveness_period;
      lost = !process_alive(pid_of(w)) &&
             slots_[i].word.compare_exchange_strong(w, pack(r.generation, 0, kWithdrawing), std::memory_order_acq_rel);
    }
    if (state_of(w) != kDone && !lost) continue;
    bounces->push_back(r.bounce);
    free_slot_locked(i);
    --waiting_;
    ++reaped;
    if (lost) {
      ++stats_.claimer_lost;
    } else {
      ++stats_.reaped;
    }
  }
  return reaped;
}

size_t SlotTable::reap() noexcept {
  if (!owner_here() || closed_) return 0;
  std::vector<void*> bounces;
  size_t reaped = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reaped = reap_locked(&bounces, true);
  }
  for (void* b : bounces) hooks_.release(hooks_.context, b);
  return reaped;
}

void SlotTable::close() noexcept {
  if (map_ == nullptr) return;
  if (owner_here() && !closed_) {
    closed_ = true;
    header_->closed.store(1, std::memory_order_release);
    const Clock::time_point deadline = Clock::now() + config_.close_wait;
    std::vector<void*> bounces;
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t i = 0; i < config_.slots; ++i) {
      Record& r = records_[i];
      if (r.phase != Record::Phase::outstanding && r.phase != Record::Phase::rehomed) continue;
      const bool rehomed = r.phase == Record::Phase::rehomed;
      Backoff backoff;
      for (;;) {
        uint64_t w = slots_[i].word.load(std::memory_order_acquire);
        const State state = state_of(w);
        if (gen_of(w) != r.generation) break;
        if (state == kPosted || state == kRehomed) {
          if (!slots_[i].word.compare_exchange_strong(w, pack(r.generation, 0, kWithdrawing),
                                                      std::memory_order_acq_rel)) {
            continue;
          }
          ++stats_.withdrawn;
        } else if (state == kClaimed) {
          if (Clock::now() < deadline && process_alive(pid_of(w))) {
            backoff.pause();
            continue;
          }
          // Its reader may still be copying: the bounce is leaked, not freed under it.
          STRATA_LOG(warn, kP2p, "slot table closed while receiver %d still held slot %u", pid_of(w), i);
          break;
        } else if (state != kDone) {
          break;
        } else if (rehomed) {
          ++stats_.reaped;
        } else {
          ++stats_.delivered;
        }
        if (rehomed) {
          bounces.push_back(r.bounce);
          --waiting_;
        }
        free_slot_locked(i);
        break;
      }
    }
    for (void* b : bounces) hooks_.release(hooks_.context, b);
  }
  // In a forked child the table is the parent's: only this process's
  // mapping and descriptor go.
  munmap(map_, map_bytes_);
  ::close(fd_);
  map_ = nullptr;
  header_ = nullptr;
  slots_ = nullptr;
  fd_ = -1;
  closed_ = true;
}

SlotStatus SlotTable::publish_notes(const Note* notes, uint32_t count, uint32_t* first) noexcept {
  if (notes == nullptr || first == nullptr || count == 0) return SlotStatus::invalid;
  if (!owner_here()) return SlotStatus::not_owner;
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return SlotStatus::invalid;
  const uint32_t published = header_->notes.load(std::memory_order_relaxed);
  if (count > kMaxNotes - published) return SlotStatus::exhausted;
  std::memcpy(notes_after(header_) + published, notes, size_t{count} * sizeof(Note));
  header_->notes.store(published + count, std::memory_order_release);  // a reader sees the bytes it counts
  *first = published;
  return SlotStatus::ok;
}

SlotStats SlotTable::stats() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  SlotStats s = stats_;
  s.in_use = config_.slots - static_cast<uint32_t>(free_.size());
  s.bounces_held = waiting_;
  return s;
}

// --- the receiver ----------------------------------------------------------------

struct PeerTables::Mapped {
  void* map = nullptr;
  size_t bytes = 0;
  Header* header = nullptr;
  SharedSlot* slots = nullptr;
  uint32_t count = 0;
  int proc_dir = -1;  // /proc/<owner>: refers to that process, not to whoever reuses its pid
  char fd_path[32] = {};
  dev_t dev = 0;
  ino_t ino = 0;
  std::atomic<int64_t> next_check{0};  // ticks_now(): when claims look at /proc again
};

size_t PeerTables::KeyHash::operator()(const Key& k) const noexcept {
  uint64_t h = k.id ^ (uint64_t{static_cast<uint32_t>(k.pid)} << 32 | static_cast<uint32_t>(k.fd));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<size_t>(h);
}

PeerTables::PeerTables(std::chrono::nanoseconds liveness_period) noexcept : liveness_period_(liveness_period) {}

PeerTables::~PeerTables() {
  for (auto& entry : tables_) {
    Mapped& m = *entry.second;
    munmap(m.map, m.bytes);
    ::close(m.proc_dir);
  }
}

SlotStatus PeerTables::read_note(const TableRef& table, uint32_t index, Note* note) noexcept {
  if (note == nullptr) return SlotStatus::invalid;
  Mapped* m = nullptr;
  const SlotStatus found = find(table, &m);
  if (found != SlotStatus::ok) return found;
  if (index >= std::min(m->header->notes.load(std::memory_order_acquire), kMaxNotes)) return SlotStatus::invalid;
  std::memcpy(note, notes_after(m->header) + index, sizeof *note);
  return SlotStatus::ok;
}

size_t PeerTables::attached() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return tables_.size();
}

namespace {

// Maps the owner's memfd through /proc/<pid>/fd/<fd>. ok, owner_gone (no
// such process, no such descriptor, or not that table any more), failed.
SlotStatus map_table(const TableRef& table, int proc_dir, const char* fd_path, void** map, size_t* bytes,
                     struct stat* st) {
  // Look before opening: only a regular file named like our memfd is opened
  // (opening a device or a FIFO the fd number now names could block or act).
  if (fstatat(proc_dir, fd_path, st, 0) != 0) {
    if (errno == ENOENT || errno == ESRCH) return SlotStatus::owner_gone;
    STRATA_LOG(warn, kP2p, "cannot look at process %d's slot table (fd %d): %s", table.pid, table.fd,
               std::strerror(errno));
    return SlotStatus::failed;
  }
  char target[128] = {};
  const ssize_t n = readlinkat(proc_dir, fd_path, target, sizeof(target) - 1);
  const char prefix[] = "/memfd:strata-slots";
  if (!S_ISREG(st->st_mode) || n <= 0 || std::strncmp(target, prefix, sizeof(prefix) - 1) != 0 ||
      st->st_size < static_cast<off_t>(sizeof(Header))) {
    return SlotStatus::owner_gone;
  }
  const int fd = openat(proc_dir, fd_path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return SlotStatus::owner_gone;
    STRATA_LOG(warn, kP2p, "cannot map process %d's slot table: %s (may this process read /proc/%d?)", table.pid,
               std::strerror(errno), table.pid);
    return SlotStatus::failed;
  }
  const bool sized = fstat(fd, st) == 0;
  void* m =
      sized ? mmap(nullptr, static_cast<size_t>(st->st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (m == MAP_FAILED) {
    STRATA_LOG(warn, kP2p, "cannot map process %d's slot table: %s", table.pid, std::strerror(errno));
    return SlotStatus::failed;
  }
  *map = m;
  *bytes = static_cast<size_t>(st->st_size);
  return SlotStatus::ok;
}

}  // namespace

SlotStatus PeerTables::find(const TableRef& table, Mapped** mapped) noexcept {
  if (table.pid <= 0 || table.fd < 0 || table.id == 0) return SlotStatus::invalid;
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key{table.pid, table.fd, table.id};
  auto it = tables_.find(key);
  if (it != tables_.end()) {
    *mapped = it->second.get();
    return SlotStatus::ok;
  }
  char path[32];
  std::snprintf(path, sizeof(path), "/proc/%d", static_cast<int>(table.pid));
  const int dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    if (errno == ENOENT) return SlotStatus::owner_gone;
    STRATA_LOG(warn, kP2p, "cannot open %s: %s", path, std::strerror(errno));
    return SlotStatus::failed;
  }
  auto m = std::unique_ptr<Mapped>(new (std::nothrow) Mapped());
  if (m == nullptr) {
    ::close(dir);
    return SlotStatus::failed;
  }
  m->proc_dir = dir;
  std::snprintf(m->fd_path, sizeof(m->fd_path), "fd/%d", static_cast<int>(table.fd));
  struct stat st {};
  const SlotStatus status = map_table(table, dir, m->fd_path, &m->map, &m->bytes, &st);
  if (status != SlotStatus::ok) {
    ::close(dir);
    return status;
  }
  auto* header = static_cast<Header*>(m->map);
  const bool ours = header->magic == kMagic && header->version == kVersion &&
                    header->slot_bytes == sizeof(SharedSlot) && header->owner_pid == table.pid &&
                    header->table_id == table.id && header->slot_count >= 1 && header->slot_count <= kMaxSlots &&
                    table_bytes(header->slot_count) <= m->bytes;
  if (!ours) {  // the fd now holds another table (or the owner's pid was reused)
    munmap(m->map, m->bytes);
    ::close(dir);
    return SlotStatus::owner_gone;
  }
  m->header = header;
  m->slots = slots_after(header);
  m->count = header->slot_count;
  m->dev = st.st_dev;
  m->ino = st.st_ino;
  *mapped = m.get();
  tables_.emplace(key, std::move(m));
  return SlotStatus::ok;
}

// Alive: the table is not closed (a load), and the owner process still has
// this very memfd at that descriptor (a process that exited has no
// descriptors, and our /proc/<pid> handle does not follow a pid to its next
// process). The /proc lookup, a system call of 1-15 µs, is made at most
// once per liveness period unless `force`.
bool PeerTables::owner_alive(Mapped& m, bool force) const noexcept {
  if (m.header->closed.load(std::memory_order_acquire) != 0) return false;
  const int64_t now = ticks_now();
  if (!force && now < m.next_check.load(std::memory_order_relaxed)) return true;
  struct stat st {};
  const bool alive = fstatat(m.proc_dir, m.fd_path, &st, 0) == 0 && st.st_dev == m.dev && st.st_ino == m.ino;
  if (alive) {
    m.next_check.store(now + std::chrono::duration_cast<Clock::duration>(liveness_period_).count(),
                       std::memory_order_relaxed);
  }
  return alive;
}

SlotStatus PeerTables::attach(const TableRef& table) noexcept {
  Mapped* m = nullptr;
  return find(table, &m);
}

SlotStatus PeerTables::claim(const SlotRef& ref, Claim* claim) noexcept {
  const uint64_t gen = ref.ticket.generation;
  if (claim == nullptr || ref.ticket.reserved != 0 || gen == 0 || gen > kGenMask) return SlotStatus::invalid;
  Mapped* m = nullptr;
  const SlotStatus found = find(ref.table, &m);
  if (found != SlotStatus::ok) return found;
  if (ref.ticket.index >= m->count) return SlotStatus::invalid;
  if (!owner_alive(*m, false)) return SlotStatus::owner_gone;
  const auto self = static_cast<uint64_t>(self_pid());
  if (self > kPidMask) {
    STRATA_LOG_ONCE(warn, kP2p, "slot tables: pid %d does not fit the slot word", static_cast<int>(self));
    return SlotStatus::failed;
  }
  SharedSlot& s = m->slots[ref.ticket.index];
  const uint64_t held = pack(gen, self, kClaimed);
  bool rehomed = false;
  bool waited = false;
  Backoff backoff;
  Clock::time_point next_liveness = Clock::now() + liveness_period_;
  for (;;) {
    uint64_t w = pack(gen, 0, kPosted);
    if (s.word.compare_exchange_strong(w, held, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    const bool closed = m->header->closed.load(std::memory_order_acquire) != 0;
    if (gen_of(w) != gen) return closed ? SlotStatus::owner_gone : SlotStatus::stale;
    if (state_of(w) == kRehomed) {
      if (s.word.compare_exchange_strong(w, held, std::memory_order_acq_rel, std::memory_order_acquire)) {
        rehomed = true;
        break;
      }
      continue;
    }
    if (state_of(w) != kWithdrawing) return closed ? SlotStatus::owner_gone : SlotStatus::stale;
    // The owner is copying the bytes to a bounce: a bounded wait, unless it died.
    waited = true;
    backoff.pause();
    const Clock::time_point now = Clock::now();
    if (now >= next_liveness) {
      if (!owner_alive(*m, true)) return SlotStatus::owner_gone;
      next_liveness = now + liveness_period_;
    }
  }
  // The acquire above orders this read after the owner's write of the location.
  std::memcpy(&claim->location, &s.location, sizeof(Location));
  claim->rehomed = rehomed;
  claim->waited = waited;
  claim->word = &s.word;
  claim->held = held;
  claim->taken = &m->header->last_taken;
  claim->taken->store(ticks_now(), std::memory_order_relaxed);
  return SlotStatus::ok;
}

SlotStatus PeerTables::finish(Claim* claim) noexcept {
  if (claim == nullptr || claim->word == nullptr || state_of(claim->held) != kClaimed) return SlotStatus::invalid;
  uint64_t expected = claim->held;
  // Release: the reads of the owner's bytes happen before the owner sees done.
  if (!claim->word->compare_exchange_strong(expected, pack(gen_of(claim->held), 0, kDone), std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
    STRATA_LOG(error, kP2p, "slot tables: a claimed slot changed under its claimer");
    claim->word = nullptr;
    return SlotStatus::failed;
  }
  claim->word = nullptr;
  if (claim->taken != nullptr) claim->taken->store(ticks_now(), std::memory_order_relaxed);
  return SlotStatus::ok;
}

}  // namespace strata::slots
