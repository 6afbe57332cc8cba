// (c) The completion-slot protocol under races: thousands of messages of
// random sizes, fresh random bytes each, random delays on both sides
// (before the claim, inside it, between sends), several messages in flight
// with fewer slots than that (exhaustion, answered by staging the bytes
// through the pipe as the interposer stages today), a bound short enough
// that some sends are rehomed and some delivered. Every sender buffer is
// overwritten the moment its send completes, so a receiver that read after
// completion would see the damage. Checked: every payload, the order, both
// paths taken, and at the end no slot and no bounce left, no hang (each
// process under a deadline). Once with one sender thread, once with two on
// one table.
//
// STRATA_TEST_ITERATIONS: messages (default 6000); STRATA_TEST_SEED.
#include "slot_test_support.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace slot_test;  // NOLINT(google-build-using-namespace): the tests' toolkit
using strata::slots::Claim;
using strata::slots::Completion;
using strata::slots::PeerTables;
using strata::slots::SlotStatus;
using strata::slots::SlotTable;
using strata::slots::TableConfig;
using strata::slots::Ticket;

constexpr int kSeconds = 240;
constexpr size_t kChunk = 4096;
constexpr uint32_t kMaxBytes = 4000;  // a staged message and its header fit one atomic pipe write
constexpr int kInFlight = 8;          // per sender, against 4 slots in the table
constexpr uint32_t kSlots = 4;

struct Summary {
  uint64_t received = 0;
  uint64_t wrong = 0;
  uint64_t claim_failed = 0;
  uint64_t finish_failed = 0;
  uint64_t out_of_order = 0;
  uint64_t rehomed_seen = 0;
  uint64_t staged_seen = 0;
  uint64_t waited_seen = 0;  // claims that found the owner rehoming and waited
};

void delay(std::mt19937_64& rng, unsigned max_us) {
  const unsigned pick = static_cast<unsigned>(rng() % 3);
  if (pick == 0) return;
  const unsigned us = pick == 1 ? static_cast<unsigned>(rng() % 50) : static_cast<unsigned>(rng() % max_us);
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

// The receiving process: `producers` streams in one pipe, each ending with kind 2.
int receiver(const Pipe& down, const Pipe& up, const SharedArena& user, const SharedArena& bounce, uint64_t seed,
             int producers) {
  std::mt19937_64 rng(seed ^ 0xabcdef);
  PeerTables peers(std::chrono::milliseconds(2));
  Summary s;
  std::vector<uint64_t> next(static_cast<size_t>(producers), 0);
  std::vector<unsigned char> local(kChunk);
  int ended = 0;
  while (ended < producers) {
    Wire w{};
    if (!down.get(&w)) return 2;
    if (w.kind == 2) {
      ++ended;
      continue;
    }
    const auto stream = static_cast<size_t>(w.seq >> 32);
    if (stream >= next.size() || (w.seq & 0xffffffffu) != next[stream]++) ++s.out_of_order;
    ++s.received;
    if (w.kind == 1) {
      ++s.staged_seen;
      if (!down.get(local.data(), w.bytes)) return 3;
      if (!matches(local.data(), w.bytes, seed, w.seq)) ++s.wrong;
      continue;
    }
    delay(rng, 400);  // late, sometimes later than the sender's bound
    Claim claim;
    const SlotStatus st = peers.claim(w.ref, &claim);
    if (st != SlotStatus::ok) {
      if (s.claim_failed++ < 5) std::fprintf(stderr, "claim of %llx: %s\n", (unsigned long long)w.seq, to_string(st));
      continue;
    }
    const TestLocation where = from_location(claim.location);
    const unsigned char* p = bytes_at(where, user, bounce);
    if (claim.rehomed) ++s.rehomed_seen;
    if (claim.waited) ++s.waited_seen;
    // The pull: read the sender's bytes, in two halves with a pause between
    // (a sender that reused its buffer too early would tear them).
    const bool sane = p != nullptr && where.bytes == w.bytes && where.seq == w.seq;
    if (sane) std::memcpy(local.data(), p, w.bytes / 2);
    delay(rng, 100);
    if (sane) std::memcpy(local.data() + w.bytes / 2, p + w.bytes / 2, w.bytes - w.bytes / 2);
    if (peers.finish(&claim) != SlotStatus::ok) ++s.finish_failed;
    if (!sane || !matches(local.data(), w.bytes, seed, w.seq)) {
      if (s.wrong++ < 5) {
        std::fprintf(stderr, "message %llx: wrong bytes (%s)\n", (unsigned long long)w.seq,
                     claim.rehomed ? "bounce" : "posted");
      }
    }
  }
  return up.put(s) ? 0 : 4;
}

struct SenderCounts {
  uint64_t delivered = 0;
  uint64_t rehomed = 0;
  uint64_t staged = 0;
  uint64_t exhausted = 0;  // acquire calls that found no slot
  uint64_t errors = 0;
};

// One sender: `messages` messages from its own chunks of the user arena.
void sender(SlotTable& table, const SharedArena& user, const Pipe& down, std::mutex& pipe_mutex, uint64_t seed,
            uint32_t stream, int messages, SenderCounts* counts) {
  std::mt19937_64 rng(seed ^ (0x1234 + stream));
  struct InFlight {
    TestMessage message;
    Ticket ticket;
    uint32_t chunk;
  };
  std::deque<std::unique_ptr<InFlight>> flying;
  std::vector<uint32_t> free_chunks;
  for (int i = kInFlight; i > 0; --i) free_chunks.push_back(stream * kInFlight + static_cast<uint32_t>(i - 1));
  std::vector<unsigned char> staged(sizeof(Wire) + kMaxBytes);

  auto complete = [&](bool block) {
    InFlight& f = *flying.front();
    Completion how{};
    const SlotStatus st = block ? table.wait(f.ticket, &how) : table.test(f.ticket, &how);
    if (st == SlotStatus::pending) return;
    if (st != SlotStatus::ok) {
      ++counts->errors;
    } else if (how == Completion::delivered) {
      ++counts->delivered;
    } else if (how == Completion::rehomed) {
      ++counts->rehomed;
    } else {
      ++counts->errors;
    }
    std::memset(user.base + f.message.offset, 0xEE, f.message.bytes);  // the buffer is the sender's again
    free_chunks.push_back(f.chunk);
    flying.pop_front();
  };

  for (int i = 0; i < messages; ++i) {
    if (free_chunks.empty()) complete(true);
    for (size_t k = flying.size(); k > 0 && rng() % 2 == 0; --k) complete(false);
    const uint32_t chunk = free_chunks.back();
    free_chunks.pop_back();
    auto f = std::make_unique<InFlight>();
    const uint64_t seq = (uint64_t{stream} << 32) | static_cast<uint32_t>(i);
    const auto bytes = static_cast<uint32_t>(1 + rng() % kMaxBytes);
    f->message = TestMessage{uint64_t{chunk} * kChunk, bytes, seq};
    f->chunk = chunk;
    unsigned char* data = user.base + f->message.offset;
    fill(data, bytes, seed, seq);
    const Location where = to_location(TestLocation{kUser, bytes, f->message.offset, seq});
    SlotStatus st = table.acquire(where, &f->message, &f->ticket);
    if (st == SlotStatus::exhausted && !flying.empty() && rng() % 4 != 0) {  // mostly: wait for a slot
      ++counts->exhausted;
      complete(true);
      st = table.acquire(where, &f->message, &f->ticket);
    }
    if (st == SlotStatus::exhausted) ++counts->exhausted;
    if (st == SlotStatus::ok) {
      std::lock_guard<std::mutex> lock(pipe_mutex);
      if (!down.put(Wire{0, bytes, seq, SlotRef{table.ref(), f->ticket}})) ++counts->errors;
      flying.push_back(std::move(f));
    } else if (st == SlotStatus::exhausted) {  // the fallback: stage the bytes
      const Wire w{1, bytes, seq, SlotRef{}};
      std::memcpy(staged.data(), &w, sizeof(w));
      std::memcpy(staged.data() + sizeof(w), data, bytes);
      {
        std::lock_guard<std::mutex> lock(pipe_mutex);
        if (!down.put(staged.data(), sizeof(w) + bytes)) ++counts->errors;
      }
      ++counts->staged;
      std::memset(data, 0xEE, bytes);
      free_chunks.push_back(chunk);
    } else {
      ++counts->errors;
      free_chunks.push_back(chunk);
    }
    delay(rng, 200);
  }
  while (!flying.empty()) complete(true);
  std::lock_guard<std::mutex> lock(pipe_mutex);
  down.put(Wire{2, 0, 0, SlotRef{}});
}

void run_stress(int threads) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0x51075eed);
  const int messages = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", 6000));
  SCOPED_TRACE("STRATA_TEST_SEED=" + std::to_string(seed));
  SharedArena user(kChunk * kInFlight * static_cast<size_t>(threads)), bounce(kChunk * kSlots * 2);
  ASSERT_NE(user.base, nullptr);
  ASSERT_NE(bounce.base, nullptr);
  Bouncer bouncer(&user, &bounce, kChunk);
  bouncer.jitter_us = 100;  // rehoming takes a while: receivers meet it in progress
  Pipe down, up;
  TableConfig config;
  config.slots = kSlots;
  config.bound = std::chrono::microseconds(100);
  config.liveness_period = std::chrono::milliseconds(2);
  auto made = SlotTable::create(config, bouncer.hooks());
  ASSERT_TRUE(made);
  std::unique_ptr<SlotTable> table = std::move(made).value();

  const pid_t child = fork_child(kSeconds, [&] { return receiver(down, up, user, bounce, seed, threads); });
  alarm(kSeconds);  // this process too: a hang ends the test
  std::mutex pipe_mutex;
  std::vector<SenderCounts> counts(static_cast<size_t>(threads));
  std::vector<std::thread> senders;
  senders.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    senders.emplace_back(sender, std::ref(*table), std::cref(user), std::cref(down), std::ref(pipe_mutex), seed,
                         static_cast<uint32_t>(t), messages / threads, &counts[static_cast<size_t>(t)]);
  }
  for (std::thread& s : senders) s.join();
  Summary r;
  ASSERT_TRUE(up.get(&r));
  EXPECT_EQ(join(child, kSeconds), 0);
  table->reap();  // the receiver finished everything before it exited
  alarm(0);

  SenderCounts total;
  for (const SenderCounts& c : counts) {
    total.delivered += c.delivered;
    total.rehomed += c.rehomed;
    total.staged += c.staged;
    total.exhausted += c.exhausted;
    total.errors += c.errors;
  }
  const auto s = table->stats();
  EXPECT_EQ(total.errors, 0u);
  EXPECT_EQ(r.received, static_cast<uint64_t>(messages / threads * threads));
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_EQ(r.claim_failed, 0u);
  EXPECT_EQ(r.finish_failed, 0u);
  EXPECT_EQ(r.out_of_order, 0u);
  EXPECT_EQ(r.staged_seen, total.staged);
  EXPECT_EQ(s.delivered, total.delivered);
  EXPECT_EQ(s.rehomed, total.rehomed);
  EXPECT_EQ(s.acquired, total.delivered + total.rehomed);
  EXPECT_EQ(s.exhausted, total.exhausted);
  EXPECT_EQ(s.reaped, s.rehomed) << "every bounce went back";
  EXPECT_EQ(s.claimer_lost, 0u);
  EXPECT_EQ(s.in_use, 0u) << "a slot leaked";
  EXPECT_EQ(s.bounces_held, 0u);
  EXPECT_EQ(bouncer.copies, s.rehomed);
  EXPECT_EQ(bouncer.releases, s.rehomed);
  // Every path was taken (else the stress proves less than it says).
  EXPECT_GT(total.delivered, 0u);
  EXPECT_GT(total.rehomed, 0u);
  EXPECT_GT(total.staged, 0u);
  EXPECT_EQ(r.rehomed_seen, total.rehomed);
  EXPECT_GT(r.waited_seen, 0u) << "no claim met a rehoming in progress";
  std::printf(
      "%d sender thread(s): %llu delivered, %llu rehomed (%llu claims waited for one, %llu rehomings beaten by a "
      "claim), %llu staged\n",
      threads, (unsigned long long)total.delivered, (unsigned long long)total.rehomed,
      (unsigned long long)r.waited_seen, (unsigned long long)s.rehome_lost, (unsigned long long)total.staged);
}

TEST(SharedSlotsStress, OneSender) { run_stress(1); }

TEST(SharedSlotsStress, TwoSenderThreadsOneTable) { run_stress(2); }

}  // namespace

// The one race the protocol exists for, made frequent: a one-slot table
// with a bound of zero (the sender tries to rehome at its first test, right
// after posting) and a receiver that spins on the next generation's claim,
// so that both compare-and-swap the freshly posted word within moments of
// each other. The CAS gives the message to exactly one of them: either the
// receiver reads the posted bytes and the sender waits for done, or the
// sender rehomes and the receiver reads the bounce. The sender overwrites
// its buffer as soon as it completes; the receiver reads in two halves with
// a pause. `rehome_lost` counts the collisions the sender lost.
TEST(SharedSlotsStress, ContestedAtPosting) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0x51075eed);
  const int messages = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", 6000)) * 2 / 3;
  SCOPED_TRACE("STRATA_TEST_SEED=" + std::to_string(seed));
  SharedArena user(kChunk), bounce(kChunk * 2);
  Bouncer bouncer(&user, &bounce, kChunk);
  Pipe down, up;
  TableConfig config;
  config.slots = 1;
  config.bound = std::chrono::nanoseconds(0);
  auto made = SlotTable::create(config, bouncer.hooks());
  ASSERT_TRUE(made);
  std::unique_ptr<SlotTable> table = std::move(made).value();
  TestMessage m{0, 256, 0};
  Ticket first{};
  ASSERT_EQ(table->acquire(to_location(TestLocation{kUser, m.bytes, 0, 0}), &m, &first), SlotStatus::ok);
  ASSERT_EQ(table->withdraw(first), SlotStatus::ok);  // the receiver learns the table and the generation to come

  const pid_t child = fork_child(kSeconds, [&] {
    PeerTables peers;
    Summary s;
    SlotRef ref{table->ref(), first};
    unsigned char local[256];
    std::mt19937_64 rng(seed);
    for (int k = 0; k < messages; ++k) {
      ref.ticket.generation = first.generation + 1 + static_cast<uint64_t>(k);
      Claim claim;
      SlotStatus st = SlotStatus::stale;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while ((st = peers.claim(ref, &claim)) == SlotStatus::stale && std::chrono::steady_clock::now() < until) {
      }
      if (st != SlotStatus::ok) {
        std::fprintf(stderr, "message %d: claim %s\n", k, to_string(st));
        ++s.claim_failed;
        break;
      }
      const TestLocation where = from_location(claim.location);
      const unsigned char* p = bytes_at(where, user, bounce);
      std::memcpy(local, p, 128);
      for (unsigned spin = static_cast<unsigned>(rng() % 500); spin > 0; --spin) cpu_pause();
      std::memcpy(local + 128, p + 128, 128);
      if (claim.rehomed) ++s.rehomed_seen;
      if (peers.finish(&claim) != SlotStatus::ok) ++s.finish_failed;
      if (where.seq != static_cast<uint64_t>(k) || !matches(local, 256, seed, static_cast<uint64_t>(k))) {
        if (s.wrong++ < 5)
          std::fprintf(stderr, "message %d: wrong bytes (%s)\n", k, claim.rehomed ? "bounce" : "posted");
      }
      ++s.received;
    }
    return up.put(s) ? 0 : 4;
  });

  alarm(kSeconds);
  std::mt19937_64 rng(seed ^ 0x77);
  uint64_t delivered = 0;
  uint64_t rehomed = 0;
  bool stuck = false;
  for (int k = 0; k < messages && !stuck; ++k) {
    m.seq = static_cast<uint64_t>(k);
    fill(user.base, m.bytes, seed, m.seq);
    const Location where = to_location(TestLocation{kUser, m.bytes, 0, m.seq});
    Ticket t{};
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    SlotStatus st = SlotStatus::exhausted;
    while ((st = table->acquire(where, &m, &t)) == SlotStatus::exhausted && std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();  // the previous message's bounce: free once its receiver finished
    }
    if (st != SlotStatus::ok) {
      ADD_FAILURE() << "message " << k << ": acquire " << to_string(st);
      stuck = true;
      break;
    }
    // A few microseconds at most, so that the receiver's claim and the
    // sender's first test land close together.
    for (unsigned spin = static_cast<unsigned>(rng() % 64); spin > 0; --spin) cpu_pause();
    Completion how{};
    ASSERT_EQ(table->wait(t, &how), SlotStatus::ok);
    (how == Completion::rehomed ? rehomed : delivered)++;
    std::memset(user.base, 0xEE, m.bytes);
  }
  if (stuck) kill(child, SIGKILL);
  Summary r;
  const bool reported = !stuck && up.get(&r);
  EXPECT_EQ(join(child, kSeconds), stuck ? 128 + SIGKILL : 0);
  alarm(0);
  ASSERT_TRUE(reported);
  const auto s = table->stats();
  EXPECT_EQ(r.received, static_cast<uint64_t>(messages));
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_EQ(r.claim_failed, 0u);
  EXPECT_EQ(r.finish_failed, 0u);
  EXPECT_EQ(r.rehomed_seen, rehomed);
  table->reap();
  EXPECT_EQ(table->stats().in_use, 0u);
  std::printf("%llu delivered, %llu rehomed, %llu collisions the sender lost\n", (unsigned long long)delivered,
              (unsigned long long)rehomed, (unsigned long long)s.rehome_lost);
}
