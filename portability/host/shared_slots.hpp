// Completion slots in shared memory, for transfers whose bytes a process of
// the same node pulls itself: the sender publishes where its bytes are, the
// receiver claims the slot, copies, and says it is done; a sender that waits
// longer than a bound moves its bytes to a bounce buffer it owns, so that
// its completion never depends on the receiver's progress. Generic: no MPI,
// no GPU (what a location means and how bytes are copied belong to the
// caller: a 128-byte payload and two hooks).
//
// The table belongs to the sending process (SlotTable, the owner): a memfd of
// a header and N slots, each one 64-bit word packing (generation, claimer
// pid, state) and a location payload. Peers map it through
// /proc/<pid>/fd/<fd> on first contact and keep it mapped (PeerTables).
//
//            owner                              receiver
//   free ──acquire──▶ posted ──CAS──────────────────────▶ claimed ──▶ done
//                       │                                  ▲   (copying)  │
//                       │ (bound passed) CAS               │ CAS          │
//                       ▼                                  │              │
//                  withdrawing ──copy to bounce──▶ rehomed ┘              │
//   free(gen+1) ◀──────────── owner sees done (test/wait, or reap) ◀──────┘
//
//   and: posted -> free (withdraw, close), rehomed -> free (close),
//   withdrawing -> posted (the copy to a bounce failed), claimed -> free
//   (the claimer exited).
//
// Only the owner moves a slot out of free, posted (to withdrawing or free),
// withdrawing and done; only the receiver moves posted or rehomed to claimed
// and claimed to done (the owner takes a claimed slot back only from a dead
// claimer). A state both sides may leave (posted, rehomed, claimed) is left
// by a compare-and-swap on the whole word, generation included, so a stale
// or duplicated reference (an older generation, a slot already claimed or
// withdrawn) fails instead of touching a later message, and a receiver's
// claim and the owner's withdrawal cannot both win. A state only the owner
// leaves is left by a plain store. Stores that publish a location are
// releases, the loads and CASes that read one are acquires (the mapping is
// shared, the atomics lock-free, so this holds across processes).
//
// The table also carries notes: up to kMaxNotes 64-byte records the owner
// publishes once each (append-only) and peers read by index, for what a
// descriptor cannot hold (the device-direct transport's per-chunk IPC event
// handles, docs/device.md "A large strided message in chunks").
//
// What it guarantees, and what not: docs/device.md ("Completion slots").
#pragma once

#include <strata/status.hpp>

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace strata::slots {

// Where a message's bytes live, in the caller's format (an IPC export of a
// device allocation and an offset; in the tests, an offset in shared host
// memory). Opaque here.
constexpr size_t kLocationBytes = 104;  // the size of gpu::IpcExport (a device-direct send's)
struct Location {
  unsigned char bytes[kLocationBytes];
};

// A table, as a peer names it: the owner's pid and memfd, and a random id
// that tells this table from a later one at the same pid and fd.
struct TableRef {
  int32_t pid;
  int32_t fd;
  uint64_t id;
};

// One message's slot: its index and the generation it was posted with.
struct Ticket {
  uint32_t index;
  uint32_t reserved;  // zero
  uint64_t generation;
};

// What a descriptor carries to the receiver.
struct SlotRef {
  TableRef table;
  Ticket ticket;
};

enum class SlotStatus : int {
  ok = 0,
  pending,     // test: neither done by the receiver nor rehomed yet
  exhausted,   // acquire: every slot is busy; move the bytes another way (stage)
  stale,       // claim: another generation, or already claimed, finished or withdrawn
  claimed,     // withdraw: too late, a receiver has it; complete with test or wait
  owner_gone,  // claim or attach: the table's process exited or closed the table
  not_owner,   // an owner call in a forked child (the table is the parent's)
  invalid,     // a ticket or claim this table never issued, a malformed reference
  failed,      // a system call or a hook failed (logged where detected)
};
const char* to_string(SlotStatus status) noexcept;
// For propagation as a Status: exhausted -> not_supported (the caller's
// fallback answer), stale and invalid -> invalid_argument, owner_gone ->
// mpi_error (the class, MPI_ERR_OTHER, a library gives for a lost peer),
// not_owner -> not_supported, failed -> internal, pending and claimed ->
// timeout (not complete).
Status to_status(SlotStatus status) noexcept;

// How a send completed.
enum class Completion : int {
  delivered,     // the receiver copied the bytes from where they were posted
  rehomed,       // the bound passed: the bytes went to a bounce; the receiver reads them there
  claimer_gone,  // the receiver exited while it held the slot; nobody will read the bytes
};

// Moving a message's bytes to memory the owner keeps. copy_out gets the
// `message` given to acquire (the caller's description of the bytes), must
// return only when the bytes are in the bounce, and writes where they are
// into *where and what to give release into *bounce. A null copy_out turns
// rehoming off: the sender then waits for the receiver, however long.
struct BounceHooks {
  Status (*copy_out)(void* context, void* message, Location* where, void** bounce) = nullptr;
  void (*release)(void* context, void* bounce) = nullptr;
  void* context = nullptr;
};

// A note: 64 opaque bytes (an IPC event handle's size).
constexpr size_t kNoteBytes = 64;
constexpr uint32_t kMaxNotes = 1024;
struct Note {
  unsigned char bytes[kNoteBytes];
};

struct TableConfig {
  uint32_t slots = 64;  // 1 .. 65536
  // How long a sender waits in test/wait for the receiver before it rehomes,
  // counted from its first test or wait of the ticket.
  std::chrono::nanoseconds bound = std::chrono::microseconds(200);
  // How often a waiting side checks whether the other process still lives.
  std::chrono::nanoseconds liveness_period = std::chrono::milliseconds(5);
  // How long close() waits for receivers that hold a slot.
  std::chrono::nanoseconds close_wait = std::chrono::seconds(1);
};

struct SlotStats {
  uint64_t acquired = 0;      // acquire calls that got a slot
  uint64_t exhausted = 0;     // acquire calls that found none
  uint64_t delivered = 0;     // sends the receiver finished before any rehoming
  uint64_t rehomed = 0;       // sends completed by moving the bytes to a bounce
  uint64_t rehome_lost = 0;   // rehoming attempts that a receiver's claim beat
  uint64_t withdrawn = 0;     // posted slots taken back (withdraw, close)
  uint64_t claimer_lost = 0;  // slots freed because their claimer exited
  uint64_t reaped = 0;        // rehomed slots freed after the receiver finished
  uint32_t in_use = 0;        // slots not free now
  uint32_t bounces_held = 0;  // bounces not released yet
};

namespace detail {
struct Header;
struct SharedSlot;
}  // namespace detail

// The owner's side: one per sending process (or per thread group; a ticket
// is used by one thread at a time, as an MPI request is).
class SlotTable {
 public:
  static Result<std::unique_ptr<SlotTable>> create(const TableConfig& config, const BounceHooks& hooks) noexcept;
  ~SlotTable();
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;

  TableRef ref() const noexcept { return ref_; }
  const TableConfig& config() const noexcept { return config_; }

  // Publishes `where` in a free slot (reclaiming finished rehomed slots
  // first); `message` is handed to copy_out if the send is rehomed.
  // exhausted: no slot; the caller moves the bytes another way.
  SlotStatus acquire(const Location& where, void* message, Ticket* ticket) noexcept;
  // Non-blocking completion: ok with *how once the receiver is done, the
  // bytes are rehomed (the bound passed), or the claimer died; pending
  // otherwise. After ok the ticket is spent and the caller's bytes are free.
  SlotStatus test(const Ticket& ticket, Completion* how) noexcept;
  // test until it completes: waits at most about `bound` unless a receiver
  // holds the slot (then until it finishes or exits).
  SlotStatus wait(const Ticket& ticket, Completion* how) noexcept;
  // Takes back a posted slot whose message no receiver can have (its send
  // was cancelled or failed): ok, or claimed (complete it with test/wait).
  SlotStatus withdraw(const Ticket& ticket) noexcept;
  // Frees rehomed slots whose receiver finished (or exited), releasing their
  // bounces; returns how many. acquire does it too.
  size_t reap() noexcept;
  // Marks the table closed (peers' claims fail with owner_gone), takes back
  // posted and unclaimed rehomed slots, waits up to close_wait for claimed
  // ones, releases bounces (a bounce still claimed then is leaked, not
  // freed under its reader) and unmaps. The destructor calls it.
  void close() noexcept;

  // Appends `count` notes, consecutive, and publishes them (a release):
  // ok with the index of the first in *first; exhausted where fewer than
  // `count` are left of kMaxNotes (nothing is published).
  SlotStatus publish_notes(const Note* notes, uint32_t count, uint32_t* first) noexcept;

  SlotStats stats() const noexcept;

 private:
  struct Record;
  SlotTable() = default;
  SlotStatus check_ticket(const Ticket& ticket, Record** record) noexcept;
  bool owner_here() const noexcept;
  void free_slot_locked(uint32_t index) noexcept;
  SlotStatus rehome(uint32_t index, Record& record, Completion* how) noexcept;
  size_t reap_locked(std::vector<void*>* bounces, bool check_liveness) noexcept;

  TableConfig config_;
  BounceHooks hooks_;
  TableRef ref_{};
  bool closed_ = false;
  int fd_ = -1;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  detail::Header* header_ = nullptr;
  detail::SharedSlot* slots_ = nullptr;

  mutable std::mutex mutex_;  // free_, records' transitions, stats_
  std::unique_ptr<Record[]> records_;
  std::vector<uint32_t> free_;
  uint32_t waiting_ = 0;  // rehomed slots the receiver has not finished
  SlotStats stats_;
};

// A receiver's hold on a slot, from claim to finish.
struct Claim {
  Location location{};                    // where to read the bytes (the posted place or the bounce)
  bool rehomed = false;                   // the bytes are in the owner's bounce
  bool waited = false;                    // the claim found the owner moving them there and waited
  std::atomic<uint64_t>* word = nullptr;  // internal
  uint64_t held = 0;                      // internal: the word's claimed value
  std::atomic<int64_t>* taken = nullptr;  // internal: the table's last claim or finish (SlotTable::test)
};

// The receiver's side: the peers' tables this process has mapped, kept for
// its lifetime. Thread-safe. `liveness_period`: how often claims look
// whether a table's owner still lives (a closed table is seen at once; an
// owner that died without closing, within this period; zero: at every
// claim, one /proc lookup each).
class PeerTables {
 public:
  explicit PeerTables(std::chrono::nanoseconds liveness_period = std::chrono::milliseconds(5)) noexcept;
  ~PeerTables();
  PeerTables(const PeerTables&) = delete;
  PeerTables& operator=(const PeerTables&) = delete;

  // Maps the table (first contact; later calls find it mapped): ok,
  // owner_gone (no such process or table), failed (no permission: a
  // process that may not read the owner's /proc entry; logged).
  SlotStatus attach(const TableRef& table) noexcept;
  // Claims the slot: ok with the location to read; stale, owner_gone (the
  // owner closed the table, or exited: seen within the liveness period),
  // invalid or failed otherwise (then there is nothing to finish). Waits
  // while the owner is moving the bytes to a bounce (a bounded copy; the
  // owner's death ends the wait with owner_gone).
  SlotStatus claim(const SlotRef& ref, Claim* claim) noexcept;
  // The bytes have been read: the owner may reuse its memory. Every
  // successful claim must be finished, also when the bytes were not wanted.
  SlotStatus finish(Claim* claim) noexcept;
  // Note `index` of the table: ok; invalid where the owner has not
  // published it; owner_gone, failed as attach.
  SlotStatus read_note(const TableRef& table, uint32_t index, Note* note) noexcept;

  size_t attached() const noexcept;

 private:
  struct Mapped;
  struct Key {
    int32_t pid;
    int32_t fd;
    uint64_t id;
    bool operator==(const Key& o) const noexcept { return pid == o.pid && fd == o.fd && id == o.id; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept;
  };
  SlotStatus find(const TableRef& table, Mapped** mapped) noexcept;
  bool owner_alive(Mapped& mapped, bool force) const noexcept;

  std::chrono::nanoseconds liveness_period_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::unique_ptr<Mapped>, KeyHash> tables_;
};

}  // namespace strata::slots
