// The completion-slot protocol (portability/host/shared_slots.hpp) between
// two processes made by fork(): a receiver on time (no bounce), a late one
// (the sender rehomes and the receiver reads the bounce), a receiver that
// claims while the owner rehomes, a bounce that cannot be made, stale and
// duplicated references, an owner that exits or closes its table, a
// receiver that exits holding a slot, exhaustion, and a forked child that
// must not act as the owner. The race stress is test_shared_slots_stress.
#include "slot_test_support.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace slot_test;  // NOLINT(google-build-using-namespace): the tests' toolkit
using std::chrono::milliseconds;
using strata::slots::Claim;
using strata::slots::Completion;
using strata::slots::PeerTables;
using strata::slots::SlotStatus;
using strata::slots::SlotTable;
using strata::slots::TableConfig;
using strata::slots::Ticket;

constexpr int kChildSeconds = 60;
constexpr size_t kChunk = 4096;
constexpr uint64_t kSeed = 0x5eed5107;

std::unique_ptr<SlotTable> make_table(const TableConfig& config, Bouncer* bouncer) {
  strata::slots::BounceHooks hooks;
  if (bouncer != nullptr) hooks = bouncer->hooks();
  auto t = SlotTable::create(config, hooks);
  if (!t) return nullptr;
  return std::move(t).value();
}

TableConfig config_of(uint32_t slots, std::chrono::nanoseconds bound) {
  TableConfig c;
  c.slots = slots;
  c.bound = bound;
  return c;
}

// One received message, as the receiving child reports it.
struct Report {
  int32_t claim = -1;
  int32_t finish = -1;
  uint8_t rehomed = 0;
  uint8_t correct = 0;
  uint16_t pad = 0;
  uint32_t claim_ms = 0;
  uint64_t seq = 0;
};

// The receiving child: claims each message (after a byte on `go`, if
// given), reads and checks its bytes, finishes, reports on `up`.
int receive(const Pipe& down, const Pipe& up, const Pipe* go, const SharedArena& user, const SharedArena& bounce) {
  PeerTables peers;
  for (;;) {
    Wire w{};
    if (!down.get(&w) || w.kind == 2) return 0;
    if (go != nullptr) {
      char c = 0;
      if (!go->get(&c)) return 3;
    }
    Report r;
    r.seq = w.seq;
    Claim claim;
    const auto t0 = std::chrono::steady_clock::now();
    r.claim = static_cast<int32_t>(peers.claim(w.ref, &claim));
    r.claim_ms =
        static_cast<uint32_t>(std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0).count());
    if (r.claim == 0) {
      const TestLocation where = from_location(claim.location);
      const unsigned char* p = bytes_at(where, user, bounce);
      r.rehomed = claim.rehomed ? 1 : 0;
      r.correct = p != nullptr && where.seq == w.seq && where.bytes == w.bytes && matches(p, w.bytes, kSeed, w.seq);
      r.finish = static_cast<int32_t>(peers.finish(&claim));
    }
    if (!up.put(r)) return 4;
  }
}

// The sender's side of one message in the user arena's chunk `chunk`.
struct Outgoing {
  TestMessage message{};
  Ticket ticket{};
};

SlotStatus post(SlotTable& table, const SharedArena& user, const Pipe& down, uint64_t seq, uint32_t bytes,
                uint32_t chunk, Outgoing* out) {
  out->message = TestMessage{uint64_t{chunk} * kChunk, bytes, seq};
  fill(user.base + out->message.offset, bytes, kSeed, seq);
  const SlotStatus st =
      table.acquire(to_location(TestLocation{kUser, bytes, out->message.offset, seq}), &out->message, &out->ticket);
  if (st != SlotStatus::ok) return st;
  Wire w{0, bytes, seq, SlotRef{table.ref(), out->ticket}};
  return down.put(w) ? SlotStatus::ok : SlotStatus::failed;
}

void scribble(const SharedArena& user, const Outgoing& o) {
  std::memset(user.base + o.message.offset, 0xEE, o.message.bytes);
}

void end(const Pipe& down) { down.put(Wire{2, 0, 0, SlotRef{}}); }

// (a) The receiver claims and finishes before the bound: no bounce.
TEST(SharedSlots, ReceiverOnTimeNeedsNoBounce) {
  SharedArena user(16 * kChunk), bounce(16 * kChunk);
  Bouncer bouncer(&user, &bounce, kChunk);
  Pipe down, up;
  auto table = make_table(config_of(8, std::chrono::seconds(30)), &bouncer);
  ASSERT_NE(table, nullptr);
  const pid_t child = fork_child(kChildSeconds, [&] { return receive(down, up, nullptr, user, bounce); });
  constexpr int kMessages = 50;
  for (int i = 0; i < kMessages; ++i) {
    Outgoing o;
    ASSERT_EQ(post(*table, user, down, static_cast<uint64_t>(i), static_cast<uint32_t>(1 + i * 81), 0, &o),
              SlotStatus::ok);
    Completion how{};
    ASSERT_EQ(table->wait(o.ticket, &how), SlotStatus::ok);
    EXPECT_EQ(how, Completion::delivered);
    scribble(user, o);  // the buffer is the sender's again
    Report r;
    ASSERT_TRUE(up.get(&r));
    EXPECT_EQ(r.claim, 0);
    EXPECT_EQ(r.finish, 0);
    EXPECT_EQ(r.rehomed, 0);
    EXPECT_TRUE(r.correct) << "message " << i;
  }
  end(down);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  const auto s = table->stats();
  EXPECT_EQ(s.acquired, static_cast<uint64_t>(kMessages));
  EXPECT_EQ(s.delivered, static_cast<uint64_t>(kMessages));
  EXPECT_EQ(s.rehomed, 0u);
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(bouncer.copies, 0u);
}

// (b) The receiver comes late: the sender rehomes after the bound and
// completes; its buffer is then overwritten, and the receiver still reads
// the right bytes, from the bounce; the bounces go back once it finished.
TEST(SharedSlots, LateReceiverReadsTheBounce) {
  SharedArena user(16 * kChunk), bounce(16 * kChunk);
  Bouncer bouncer(&user, &bounce, kChunk);
  Pipe down, up, go;
  auto table = make_table(config_of(8, milliseconds(2)), &bouncer);
  ASSERT_NE(table, nullptr);
  const pid_t child = fork_child(kChildSeconds, [&] { return receive(down, up, &go, user, bounce); });
  constexpr int kMessages = 5;
  for (int i = 0; i < kMessages; ++i) {
    Outgoing o;
    ASSERT_EQ(post(*table, user, down, static_cast<uint64_t>(i), 3000, static_cast<uint32_t>(i), &o), SlotStatus::ok);
    const auto t0 = std::chrono::steady_clock::now();
    Completion how{};
    ASSERT_EQ(table->wait(o.ticket, &how), SlotStatus::ok);
    EXPECT_EQ(how, Completion::rehomed);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(2));  // it waited its bound first
    scribble(user, o);
    ASSERT_TRUE(go.put(char{'g'}));
    Report r;
    ASSERT_TRUE(up.get(&r));
    EXPECT_EQ(r.claim, 0);
    EXPECT_EQ(r.finish, 0);
    EXPECT_EQ(r.rehomed, 1);
    EXPECT_TRUE(r.correct) << "message " << i;
  }
  end(down);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  table->reap();
  const auto s = table->stats();
  EXPECT_EQ(s.rehomed, static_cast<uint64_t>(kMessages));
  EXPECT_EQ(s.reaped, static_cast<uint64_t>(kMessages));
  EXPECT_EQ(s.delivered, 0u);
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.bounces_held, 0u);
  EXPECT_EQ(bouncer.copies, static_cast<uint64_t>(kMessages));
  EXPECT_EQ(bouncer.releases, static_cast<uint64_t>(kMessages));
}

// A receiver working through a window: every message posted at once, the
// owner testing them all from the start (as MPI_Waitall does), the receiver
// claiming one every 20 ms, the last long after the 60 ms bound has passed
// since the owner began. None is moved to a bounce: each claim or finish
// restarts the bound (before, the messages claimed after 60 ms were).
TEST(SharedSlots, BusyReceiverHoldsOffTheBounce) {
  constexpr int kMessages = 8;
  SharedArena user(16 * kChunk), bounce(16 * kChunk);
  Bouncer bouncer(&user, &bounce, kChunk);
  Pipe down, up, go;
  auto table = make_table(config_of(16, milliseconds(60)), &bouncer);
  ASSERT_NE(table, nullptr);
  const pid_t child = fork_child(kChildSeconds, [&] { return receive(down, up, &go, user, bounce); });
  std::vector<Outgoing> out(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(post(*table, user, down, static_cast<uint64_t>(i), 2000, static_cast<uint32_t>(i), &out[i]),
              SlotStatus::ok);
  }
  std::thread pacer([&] {
    for (int i = 0; i < kMessages; ++i) {
      std::this_thread::sleep_for(milliseconds(20));
      go.put(char{'g'});
    }
  });
  std::vector<bool> done(kMessages, false);
  std::vector<Completion> how(kMessages, Completion::delivered);
  int left = kMessages;
  const auto t0 = std::chrono::steady_clock::now();
  while (left > 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
    for (int i = 0; i < kMessages; ++i) {
      if (done[i]) continue;
      const SlotStatus st = table->test(out[i].ticket, &how[i]);
      ASSERT_TRUE(st == SlotStatus::ok || st == SlotStatus::pending) << "message " << i;
      if (st == SlotStatus::ok) {
        done[i] = true;
        --left;
      }
    }
    std::this_thread::sleep_for(milliseconds(1));
  }
  pacer.join();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(140));  // the last claims came after the bound
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_TRUE(done[i]) << "message " << i;
    EXPECT_EQ(how[i], Completion::delivered) << "message " << i << " went to a bounce";
    Report r;
    ASSERT_TRUE(up.get(&r));
    EXPECT_EQ(r.claim, 0);
    EXPECT_EQ(r.rehomed, 0) << "message " << r.seq;
    EXPECT_TRUE(r.correct) << "message " << r.seq;
  }
  end(down);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  EXPECT_EQ(table->stats().rehomed, 0u);
  EXPECT_EQ(bouncer.copies, 0u);
}

// The receiver claims while the owner is copying to the bounce: it waits
// for the copy and reads the bounce.
TEST(SharedSlots, ClaimDuringRehomeWaitsForTheBounce) {
  SharedArena user(4 * kChunk), bounce(4 * kChunk);
  Bouncer bouncer(&user, &bounce, kChunk);
  Pipe down, up, go;
  bouncer.notify = &go;  // the child claims as soon as the copy starts
  bouncer.delay = milliseconds(200);
  auto table = make_table(config_of(4, milliseconds(1)), &bouncer);
  ASSERT_NE(table, nullptr);
  const pid_t child = fork_child(kChildSeconds, [&] { return receive(down, up, &go, user, bounce); });
  Outgoing o;
  ASSERT_EQ(post(*table, user, down, 7, 2048, 0, &o), SlotStatus::ok);
  Completion how{};
  ASSERT_EQ(table->wait(o.ticket, &how), SlotStatus::ok);
  EXPECT_EQ(how, Completion::rehomed);
  scribble(user, o);
  Report r;
  ASSERT_TRUE(up.get(&r));
  EXPECT_EQ(r.claim, 0);
  EXPECT_EQ(r.rehomed, 1);
  EXPECT_TRUE(r.correct);
  EXPECT_GE(r.claim_ms, 100u) << "the claim should have waited for the copy";
  end(down);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  EXPECT_EQ(table->reap(), 1u);
  EXPECT_EQ(table->stats().in_use, 0u);
}

// A bounce that cannot be made leaves the message posted: the sender keeps
// waiting and the receiver, when it comes, reads the original place.
TEST(SharedSlots, FailedBounceLeavesTheMessageToItsReceiver) {
  SharedArena user(4 * kChunk), bounce(4 * kChunk);
  Bouncer bouncer(&user, &bounce, kChunk);
  bouncer.fail = true;
  Pipe down, up, go;
  auto table = make_table(config_of(4, milliseconds(1)), &bouncer);
  ASSERT_NE(table, nullptr);
  const pid_t child = fork_child(kChildSeconds, [&] { return receive(down, up, &go, user, bounce); });
  Outgoing o;
  ASSERT_EQ(post(*table, user, down, 3, 1000, 0, &o), SlotStatus::ok);
  Completion how{};
  const auto until = std::chrono::steady_clock::now() + milliseconds(20);
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(table->test(o.ticket, &how), SlotStatus::pending);
    std::this_thread::sleep_for(milliseconds(1));
  }
  ASSERT_TRUE(go.put(char{'g'}));
  ASSERT_EQ(table->wait(o.ticket, &how), SlotStatus::ok);
  EXPECT_EQ(how, Completion::delivered);
  Report r;
  ASSERT_TRUE(up.get(&r));
  EXPECT_EQ(r.claim, 0);
  EXPECT_EQ(r.rehomed, 0);
  EXPECT_TRUE(r.correct);
  end(down);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  EXPECT_EQ(table->stats().rehomed, 0u);
  EXPECT_EQ(table->stats().in_use, 0u);
}

// (d) A reference of an older generation, a duplicate, one of a generation
// never issued, of a withdrawn message: refused, and nothing changes.
TEST(SharedSlots, StaleReferencesAreRefused) {
  SharedArena user(4 * kChunk), bounce(4 * kChunk);
  Pipe down, up;
  auto table = make_table(config_of(1, std::chrono::seconds(30)), nullptr);
  ASSERT_NE(table, nullptr);
  // The child claims (kind 0, holding a claim it gets) or finishes the held
  // claim (kind 4), and reports each status.
  const pid_t child = fork_child(kChildSeconds, [&] {
    PeerTables peers;
    Claim held;
    for (;;) {
      Wire w{};
      if (!down.get(&w) || w.kind == 2) return 0;
      int32_t st = 0;
      if (w.kind == 0) {
        Claim c;
        st = static_cast<int32_t>(peers.claim(w.ref, &c));
        if (st == 0) held = c;
      } else {
        st = static_cast<int32_t>(peers.finish(&held));
      }
      if (!up.put(st)) return 4;
    }
  });
  auto ask = [&](uint32_t kind, const SlotRef& ref) {
    int32_t st = -1;
    EXPECT_TRUE(down.put(Wire{kind, 0, 0, ref}));
    EXPECT_TRUE(up.get(&st));
    return static_cast<SlotStatus>(st);
  };
  Outgoing m1;
  ASSERT_EQ(table->acquire(strata::slots::Location{}, &m1.message, &m1.ticket), SlotStatus::ok);
  const SlotRef r1{table->ref(), m1.ticket};
  EXPECT_EQ(ask(0, r1), SlotStatus::ok);
  EXPECT_EQ(ask(4, r1), SlotStatus::ok);
  Completion how{};
  ASSERT_EQ(table->wait(m1.ticket, &how), SlotStatus::ok);

  Outgoing m2;  // the same slot, the next generation
  ASSERT_EQ(table->acquire(strata::slots::Location{}, &m2.message, &m2.ticket), SlotStatus::ok);
  ASSERT_EQ(m2.ticket.index, m1.ticket.index);
  ASSERT_NE(m2.ticket.generation, m1.ticket.generation);
  const SlotRef r2{table->ref(), m2.ticket};
  EXPECT_EQ(ask(0, r1), SlotStatus::stale) << "an older generation";
  EXPECT_EQ(ask(0, r2), SlotStatus::ok);
  EXPECT_EQ(ask(0, r2), SlotStatus::stale) << "a duplicate of a claimed reference";
  SlotRef future = r2;
  future.ticket.generation += 5;
  EXPECT_EQ(ask(0, future), SlotStatus::stale) << "a generation never issued";
  SlotRef outside = r2;
  outside.ticket.index = 99;
  EXPECT_EQ(ask(0, outside), SlotStatus::invalid);
  SlotRef other = r2;
  other.table.id ^= 1;
  EXPECT_EQ(ask(0, other), SlotStatus::owner_gone) << "another table at the same pid and fd";
  EXPECT_EQ(ask(4, r2), SlotStatus::ok);
  EXPECT_EQ(ask(4, r2), SlotStatus::invalid) << "finished twice";
  ASSERT_EQ(table->wait(m2.ticket, &how), SlotStatus::ok);
  EXPECT_EQ(how, Completion::delivered);
  Completion again{};
  EXPECT_EQ(table->test(m2.ticket, &again), SlotStatus::invalid) << "a spent ticket";

  Outgoing m3;  // withdrawn before any receiver saw it
  ASSERT_EQ(table->acquire(strata::slots::Location{}, &m3.message, &m3.ticket), SlotStatus::ok);
  EXPECT_EQ(table->withdraw(m3.ticket), SlotStatus::ok);
  EXPECT_EQ(ask(0, SlotRef{table->ref(), m3.ticket}), SlotStatus::stale);
  end(down);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  const auto s = table->stats();
  EXPECT_EQ(s.delivered, 2u);
  EXPECT_EQ(s.withdrawn, 1u);
  EXPECT_EQ(s.in_use, 0u);
}

// (e) The owner exits (no close: as a crash): a receiver that had mapped
// its table gets owner_gone, while the owner is a zombie and after it was
// reaped, and so does a receiver meeting the table for the first time. A
// receiver that looks at /proc at every claim sees it at once; one that
// looks once per liveness period, after that period.
TEST(SharedSlots, ClaimOnADeadOwnersTableFails) {
  Pipe down, up;
  const pid_t child = fork_child(kChildSeconds, [&] {
    auto table = make_table(config_of(4, std::chrono::seconds(30)), nullptr);
    if (table == nullptr) return 2;
    Ticket t[3];
    for (Ticket& k : t) {
      if (table->acquire(strata::slots::Location{}, nullptr, &k) != SlotStatus::ok) return 3;
      if (!up.put(SlotRef{table->ref(), k})) return 4;
    }
    char c = 0;
    down.get(&c);
    _exit(0);  // no close, no destructor
  });
  SlotRef r[3];
  for (SlotRef& k : r) ASSERT_TRUE(up.get(&k));
  PeerTables exact(std::chrono::nanoseconds(0));
  PeerTables lazy(milliseconds(50));
  Claim claim;
  ASSERT_EQ(exact.claim(r[0], &claim), SlotStatus::ok);
  EXPECT_EQ(exact.finish(&claim), SlotStatus::ok);
  ASSERT_EQ(lazy.claim(r[1], &claim), SlotStatus::ok);
  EXPECT_EQ(lazy.finish(&claim), SlotStatus::ok);
  ASSERT_TRUE(down.put(char{'x'}));
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);  // a zombie now
  EXPECT_EQ(exact.claim(r[2], &claim), SlotStatus::owner_gone) << "owner is a zombie";
  std::this_thread::sleep_for(milliseconds(60));
  EXPECT_EQ(lazy.claim(r[2], &claim), SlotStatus::owner_gone) << "owner is a zombie, one period later";
  EXPECT_EQ(join(child, kChildSeconds), 0);
  EXPECT_EQ(exact.claim(r[2], &claim), SlotStatus::owner_gone) << "owner reaped";
  EXPECT_EQ(lazy.claim(r[2], &claim), SlotStatus::owner_gone) << "owner reaped";
  PeerTables fresh;
  EXPECT_EQ(fresh.attach(r[2].table), SlotStatus::owner_gone);
  EXPECT_EQ(fresh.claim(r[2], &claim), SlotStatus::owner_gone);
}

// (e) The owner closed its table (MPI_Finalize) and lives on: claims fail.
TEST(SharedSlots, ClaimOnAClosedTableFails) {
  Pipe down, up;
  const pid_t child = fork_child(kChildSeconds, [&] {
    auto table = make_table(config_of(4, std::chrono::seconds(30)), nullptr);
    if (table == nullptr) return 2;
    Ticket t{};
    if (table->acquire(strata::slots::Location{}, nullptr, &t) != SlotStatus::ok) return 3;
    up.put(SlotRef{table->ref(), t});
    char c = 0;
    down.get(&c);
    table->close();  // the posted message is taken back
    up.put(char{'c'});
    down.get(&c);
    return table->stats().withdrawn == 1 ? 0 : 5;
  });
  SlotRef r{};
  ASSERT_TRUE(up.get(&r));
  PeerTables peers;
  EXPECT_EQ(peers.attach(r.table), SlotStatus::ok);
  ASSERT_TRUE(down.put(char{'x'}));
  char c = 0;
  ASSERT_TRUE(up.get(&c));
  Claim claim;
  EXPECT_EQ(peers.claim(r, &claim), SlotStatus::owner_gone);
  ASSERT_TRUE(down.put(char{'x'}));
  EXPECT_EQ(join(child, kChildSeconds), 0);
}

// (e) The owner dies while it copies to a bounce and a receiver waits for
// that copy: the wait ends with owner_gone, not a hang.
TEST(SharedSlots, ReceiverWaitingOnARehomeSeesTheOwnerDie) {
  SharedArena user(4 * kChunk), bounce(4 * kChunk);
  Pipe up, started;
  const pid_t child = fork_child(kChildSeconds, [&] {
    Bouncer bouncer(&user, &bounce, kChunk);
    bouncer.notify = &started;
    bouncer.delay = milliseconds(30000);  // killed before it ends
    auto table = make_table(config_of(4, milliseconds(1)), &bouncer);
    if (table == nullptr) return 2;
    TestMessage m{0, 100, 1};
    Ticket t{};
    if (table->acquire(strata::slots::Location{}, &m, &t) != SlotStatus::ok) return 3;
    up.put(SlotRef{table->ref(), t});
    Completion how{};
    table->wait(t, &how);
    return 4;
  });
  SlotRef r{};
  ASSERT_TRUE(up.get(&r));
  PeerTables peers(milliseconds(2));
  ASSERT_EQ(peers.attach(r.table), SlotStatus::ok);
  char c = 0;
  ASSERT_TRUE(started.get(&c));  // the owner is copying: the slot is withdrawing
  std::thread killer([&] {
    std::this_thread::sleep_for(milliseconds(100));
    kill(child, SIGKILL);
  });
  Claim claim;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(peers.claim(r, &claim), SlotStatus::owner_gone);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(50)) << "the claim should have waited";
  killer.join();
  EXPECT_EQ(join(child, kChildSeconds), 128 + SIGKILL);
}

// A receiver that exits holding a slot does not hang its sender: the
// sender completes (claimer_gone) and the slot is free again; a rehomed
// slot's bounce is released by reap.
TEST(SharedSlots, SenderCompletesWhenItsReceiverDies) {
  SharedArena user(4 * kChunk), bounce(4 * kChunk);
  Bouncer bouncer(&user, &bounce, kChunk);
  Pipe down, up, go;
  TableConfig config = config_of(4, std::chrono::seconds(30));
  config.liveness_period = milliseconds(2);
  auto table = make_table(config, &bouncer);
  ASSERT_NE(table, nullptr);
  auto claim_and_die = [&](const Pipe* wait_for) {
    return fork_child(kChildSeconds, [&, wait_for] {
      PeerTables peers;
      Wire w{};
      char c = 0;
      if (!down.get(&w) || (wait_for != nullptr && !wait_for->get(&c))) return 2;
      Claim claim;
      const SlotStatus st = peers.claim(w.ref, &claim);
      up.put(static_cast<int32_t>(st));
      _exit(0);  // holding the claim
    });
  };
  // Claimed from where it was posted; the sender waits for done.
  pid_t child = claim_and_die(nullptr);
  Outgoing o;
  ASSERT_EQ(post(*table, user, down, 1, 500, 0, &o), SlotStatus::ok);
  int32_t st = -1;
  ASSERT_TRUE(up.get(&st));
  ASSERT_EQ(st, 0);
  Completion how{};
  ASSERT_EQ(table->wait(o.ticket, &how), SlotStatus::ok);  // the child may be a zombie still
  EXPECT_EQ(how, Completion::claimer_gone);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  EXPECT_EQ(table->stats().claimer_lost, 1u);
  EXPECT_EQ(table->stats().in_use, 0u);

  // Claimed from the bounce after the sender completed.
  TableConfig quick = config;
  quick.bound = milliseconds(1);
  auto table2 = make_table(quick, &bouncer);
  ASSERT_NE(table2, nullptr);
  child = claim_and_die(&go);
  ASSERT_EQ(post(*table2, user, down, 2, 500, 0, &o), SlotStatus::ok);
  ASSERT_EQ(table2->wait(o.ticket, &how), SlotStatus::ok);
  EXPECT_EQ(how, Completion::rehomed);
  ASSERT_TRUE(go.put(char{'g'}));
  ASSERT_TRUE(up.get(&st));
  ASSERT_EQ(st, 0);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (table2->stats().bounces_held > 0 && std::chrono::steady_clock::now() < until) {
    table2->reap();
    std::this_thread::sleep_for(milliseconds(1));
  }
  const auto s = table2->stats();
  EXPECT_EQ(s.claimer_lost, 1u);
  EXPECT_EQ(s.bounces_held, 0u);
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(bouncer.releases, 1u);
}

// (f) No free slot: acquire says so (the caller stages), counts it, and
// works again once a slot is back; rehomed slots nobody finished count as
// busy until their receiver finishes, and acquire reclaims them itself.
TEST(SharedSlots, ExhaustionFallsBack) {
  SharedArena user(4 * kChunk), bounce(4 * kChunk);
  Bouncer bouncer(&user, &bounce, kChunk);
  auto table = make_table(config_of(4, std::chrono::seconds(30)), &bouncer);
  ASSERT_NE(table, nullptr);
  std::vector<Ticket> t(4);
  for (Ticket& k : t) ASSERT_EQ(table->acquire(strata::slots::Location{}, nullptr, &k), SlotStatus::ok);
  Ticket extra{};
  EXPECT_EQ(table->acquire(strata::slots::Location{}, nullptr, &extra), SlotStatus::exhausted);
  EXPECT_EQ(table->stats().exhausted, 1u);
  EXPECT_EQ(table->stats().in_use, 4u);
  EXPECT_EQ(table->withdraw(t[0]), SlotStatus::ok);
  EXPECT_EQ(table->acquire(strata::slots::Location{}, nullptr, &extra), SlotStatus::ok);

  auto rehoming = make_table(config_of(2, std::chrono::nanoseconds(0)), &bouncer);
  ASSERT_NE(rehoming, nullptr);
  TestMessage m[2] = {{0, 64, 0}, {kChunk, 64, 1}};
  Ticket r[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(rehoming->acquire(strata::slots::Location{}, &m[i], &r[i]), SlotStatus::ok);
    Completion how{};
    ASSERT_EQ(rehoming->test(r[i], &how), SlotStatus::ok);
    EXPECT_EQ(how, Completion::rehomed);
  }
  EXPECT_EQ(rehoming->acquire(strata::slots::Location{}, nullptr, &extra), SlotStatus::exhausted);
  PeerTables peers;  // this process as the receiver of its own table
  Claim claim;
  ASSERT_EQ(peers.claim(SlotRef{rehoming->ref(), r[0]}, &claim), SlotStatus::ok);
  EXPECT_TRUE(claim.rehomed);
  ASSERT_EQ(peers.finish(&claim), SlotStatus::ok);
  const uint64_t released = bouncer.releases;
  EXPECT_EQ(rehoming->acquire(strata::slots::Location{}, nullptr, &extra), SlotStatus::ok);
  EXPECT_EQ(bouncer.releases, released + 1);
  EXPECT_EQ(rehoming->stats().reaped, 1u);
}

// A forked child is not the owner of its parent's table: owner calls are
// refused, destroying its copy leaves the parent's table alone, and it may
// still be a receiver of that table.
TEST(SharedSlots, AForkedChildIsNotTheOwner) {
  auto table = make_table(config_of(4, std::chrono::seconds(30)), nullptr);
  ASSERT_NE(table, nullptr);
  Ticket t{};
  ASSERT_EQ(table->acquire(strata::slots::Location{}, nullptr, &t), SlotStatus::ok);
  Pipe up;
  const pid_t child = fork_child(kChildSeconds, [&] {
    Ticket k{};
    Completion how{};
    int32_t st[5] = {
        static_cast<int32_t>(table->acquire(strata::slots::Location{}, nullptr, &k)),
        static_cast<int32_t>(table->test(t, &how)),
        static_cast<int32_t>(table->withdraw(t)),
        static_cast<int32_t>(table->reap()),
        -1,
    };
    const SlotRef ref{table->ref(), t};
    table.reset();  // this process's copy only
    PeerTables peers;
    Claim claim;
    st[4] = static_cast<int32_t>(peers.claim(ref, &claim));
    if (st[4] == 0) peers.finish(&claim);
    return up.put(st, sizeof(st)) ? 0 : 2;
  });
  int32_t st[5];
  ASSERT_TRUE(up.get(st, sizeof(st)));
  EXPECT_EQ(static_cast<SlotStatus>(st[0]), SlotStatus::not_owner);
  EXPECT_EQ(static_cast<SlotStatus>(st[1]), SlotStatus::not_owner);
  EXPECT_EQ(static_cast<SlotStatus>(st[2]), SlotStatus::not_owner);
  EXPECT_EQ(st[3], 0);
  EXPECT_EQ(static_cast<SlotStatus>(st[4]), SlotStatus::ok);
  EXPECT_EQ(join(child, kChildSeconds), 0);
  Completion how{};
  ASSERT_EQ(table->wait(t, &how), SlotStatus::ok);
  EXPECT_EQ(how, Completion::delivered);
  ASSERT_EQ(table->acquire(strata::slots::Location{}, nullptr, &t), SlotStatus::ok);
  PeerTables self;
  Claim claim;
  EXPECT_EQ(self.claim(SlotRef{table->ref(), t}, &claim), SlotStatus::ok) << "the child closed the parent's table";
  EXPECT_EQ(self.finish(&claim), SlotStatus::ok);
}

// Notes: what the owner published is what another process reads, by index,
// also notes published after that process mapped the table; an index not
// published yet is refused; the table holds kMaxNotes and refuses more
// without publishing part of a group.
TEST(SharedSlots, NotesPublishedAreReadByIndexInAnotherProcess) {
  using strata::slots::kMaxNotes;
  using strata::slots::Note;
  auto table = make_table(config_of(4, std::chrono::seconds(30)), nullptr);
  ASSERT_NE(table, nullptr);
  std::mt19937_64 rng(std::random_device{}());
  auto random_note = [&] {
    Note n;
    for (unsigned char& b : n.bytes) b = static_cast<unsigned char>(rng());
    return n;
  };
  std::vector<Note> first(3), second(5);
  for (Note& n : first) n = random_note();
  for (Note& n : second) n = random_note();
  uint32_t at = 99;
  ASSERT_EQ(table->publish_notes(first.data(), 3, &at), SlotStatus::ok);
  EXPECT_EQ(at, 0u);
  Pipe ready, go, up;
  const pid_t child = fork_child(kChildSeconds, [&] {
    PeerTables peers;
    std::vector<Note> seen(8);
    int32_t before = static_cast<int32_t>(peers.read_note(table->ref(), 3, &seen[3]));  // not published yet
    if (!ready.put(before)) return 2;
    char c = 0;
    if (!go.get(&c)) return 3;
    int32_t st[9];
    for (uint32_t i = 0; i < 9; ++i) {
      Note n{};
      st[i] = static_cast<int32_t>(peers.read_note(table->ref(), i, &n));
      if (i < 8) seen[i] = n;
    }
    return up.put(st, sizeof(st)) && up.put(seen.data(), 8 * sizeof(Note)) ? 0 : 2;
  });
  int32_t before = -1;
  ASSERT_TRUE(ready.get(&before));
  EXPECT_EQ(static_cast<SlotStatus>(before), SlotStatus::invalid) << "a note not published yet";
  ASSERT_EQ(table->publish_notes(second.data(), 5, &at), SlotStatus::ok);  // after the child mapped the table
  EXPECT_EQ(at, 3u);
  ASSERT_TRUE(go.put(char{1}));
  int32_t st[9];
  std::vector<Note> seen(8);
  ASSERT_TRUE(up.get(st, sizeof(st)));
  ASSERT_TRUE(up.get(seen.data(), 8 * sizeof(Note)));
  EXPECT_EQ(join(child, kChildSeconds), 0);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(static_cast<SlotStatus>(st[i]), SlotStatus::ok) << i;
    const Note& want = i < 3 ? first[i] : second[i - 3];
    EXPECT_EQ(std::memcmp(seen[i].bytes, want.bytes, sizeof want.bytes), 0) << "note " << i;
  }
  EXPECT_EQ(static_cast<SlotStatus>(st[8]), SlotStatus::invalid);
  std::vector<Note> fill(kMaxNotes - 8, random_note());
  EXPECT_EQ(table->publish_notes(fill.data(), static_cast<uint32_t>(fill.size()) + 1, &at), SlotStatus::exhausted);
  ASSERT_EQ(table->publish_notes(fill.data(), static_cast<uint32_t>(fill.size()), &at), SlotStatus::ok);
  EXPECT_EQ(at, 8u);
  EXPECT_EQ(table->publish_notes(first.data(), 1, &at), SlotStatus::exhausted);
  PeerTables self;
  Note last{};
  ASSERT_EQ(self.read_note(table->ref(), kMaxNotes - 1, &last), SlotStatus::ok);
  EXPECT_EQ(std::memcmp(last.bytes, fill.back().bytes, sizeof last.bytes), 0);
  EXPECT_EQ(self.read_note(table->ref(), kMaxNotes, &last), SlotStatus::invalid);
}

TEST(SharedSlots, ConfigurationIsChecked) {
  EXPECT_FALSE(SlotTable::create(config_of(0, milliseconds(1)), {}));
  EXPECT_FALSE(SlotTable::create(config_of(70000, milliseconds(1)), {}));
  strata::slots::BounceHooks half;
  half.copy_out = &Bouncer::copy_out;  // no release
  EXPECT_FALSE(SlotTable::create(config_of(4, milliseconds(1)), half));
  PeerTables peers;
  Claim claim;
  EXPECT_EQ(peers.claim(SlotRef{}, &claim), SlotStatus::invalid);
  EXPECT_EQ(peers.finish(&claim), SlotStatus::invalid);
  const strata::slots::TableRef stdin_of_this_process{static_cast<int32_t>(getpid()), 0, 42};
  EXPECT_EQ(peers.attach(stdin_of_this_process), SlotStatus::owner_gone) << "not a slot table";
}

}  // namespace
