// The table of watched host receives (interposer/transfer/watched_recvs.hpp)
// on its own: entries come back whole under their handle and only once,
// a handle never added finds nothing, a full table refuses instead of
// overwriting, and threads adding and taking their own handles side by
// side lose nothing (the oracle: a std::map kept beside it).
#include "interposer/transfer/watched_recvs.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace {

using strata::interposer::g_watched_recvs;
using strata::interposer::watched_empty;
using strata::interposer::WatchedRecv;
using strata::interposer::WatchedRecvs;

// A request handle with the given bits (a pointer in Open MPI, an int in
// MPICH); never one the library made.
MPI_Request handle(uint64_t bits) {
  MPI_Request r;
  std::memset(&r, 0, sizeof r);
  std::memcpy(&r, &bits, sizeof r < sizeof bits ? sizeof r : sizeof bits);
  return r;
}

WatchedRecv entry(uint64_t i) {
  WatchedRecv w;
  w.buffer = reinterpret_cast<void*>(static_cast<uintptr_t>(0x1000 + 64 * i));
  w.count = static_cast<int64_t>(i * 3 + 1);
  return w;
}

TEST(WatchedRecvs, EntriesComeBackOnceUnderTheirHandle) {
  auto table = std::make_unique<WatchedRecvs>();
  std::mt19937_64 rng(std::random_device{}());
  std::map<uint64_t, uint64_t> oracle;  // handle bits -> entry index
  for (uint64_t i = 0; i < 500; ++i) {
    const uint64_t bits = (rng() & 0x7fffffffu) * 8 + 8;  // aligned like a pointer, int-sized
    if (oracle.count(bits) != 0) continue;
    ASSERT_TRUE(table->add(handle(bits), entry(i)));
    oracle[bits] = i;
  }
  EXPECT_EQ(g_watched_recvs.load(), oracle.size());
  WatchedRecv w;
  EXPECT_FALSE(table->take(handle(4), &w)) << "a handle never added";
  for (const auto& [bits, i] : oracle) {
    ASSERT_TRUE(table->take(handle(bits), &w)) << bits;
    EXPECT_EQ(w.buffer, entry(i).buffer);
    EXPECT_EQ(w.count, entry(i).count);
    EXPECT_FALSE(table->take(handle(bits), &w)) << "taken twice";
  }
  EXPECT_TRUE(watched_empty());
}

TEST(WatchedRecvs, AFullTableRefusesAndKeepsWhatItHas) {
  auto table = std::make_unique<WatchedRecvs>();
  std::vector<uint64_t> added;
  uint64_t refused = 0;
  for (uint64_t i = 1; i <= 3 * WatchedRecvs::kSlots; ++i) {
    if (table->add(handle(i * 16), entry(i))) {
      added.push_back(i);
    } else {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_LE(added.size(), WatchedRecvs::kSlots);
  WatchedRecv w;
  for (uint64_t i : added) {
    ASSERT_TRUE(table->take(handle(i * 16), &w)) << i;
    EXPECT_EQ(w.count, entry(i).count) << "overwritten: " << i;
  }
  EXPECT_TRUE(watched_empty());
  ASSERT_TRUE(table->add(handle(16), entry(1)));
  table->clear();
  EXPECT_TRUE(watched_empty());
  EXPECT_FALSE(table->take(handle(16), &w));
}

TEST(WatchedRecvs, ThreadsAddingAndTakingSideBySideLoseNothing) {
  auto table = std::make_unique<WatchedRecvs>();
  constexpr int kThreads = 4;
  constexpr uint64_t kRounds = 20000;
  std::vector<uint64_t> lost(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < kRounds; ++i) {
        const uint64_t bits = (i % 64) * 256 + static_cast<uint64_t>(t) * 16 + 16;  // colliding neighbourhoods
        if (!table->add(handle(bits), entry(bits))) continue;
        WatchedRecv w;
        if (!table->take(handle(bits), &w) || w.count != entry(bits).count) ++lost[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(lost[t], 0u) << "thread " << t;
  EXPECT_TRUE(watched_empty());
}

}  // namespace
