// The models: parsing model.json, the decisions they make, and the built-in
// reference models.
#include "interposer/model/device_model.hpp"
#include "interposer/model/host_model.hpp"
#include "portability/mover/engine_choice.hpp"
#include "portability/numeric/log2_buckets.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace {

using strata::interposer::HostModel;
using strata::interposer::HostOp;
using strata::interposer::HostSample;
using Result = strata::Result<HostModel>;

// A model where Strata is `fast` times faster for blocks <= 16 B and 0.5x
// for larger blocks, on a grid of sizes 1 KiB .. 1 MiB a factor 4 apart.
HostModel synthetic(double fast, bool with_transfers) {
  HostModel m;
  for (int64_t block : {1, 4, 16, 64, 256}) {
    for (int64_t bytes : {1024, 4096, 16384, 65536, 262144, 1048576}) {
      const double library = 1000.0;
      const double strata = block <= 16 ? library / fast : library * 2;
      m.pack.push_back({block, bytes, library, strata});
      if (with_transfers) m.transfer.push_back({block, bytes, library, strata});
    }
  }
  Result round = HostModel::from_json(m.to_json());
  EXPECT_TRUE(round.ok());
  return std::move(round).value();
}

TEST(HostModel, DecidesByMeasuredSpeedup) {
  HostModel m = synthetic(2.0, true);
  EXPECT_TRUE(m.strata_wins(HostOp::pack, 65536, 8));
  EXPECT_TRUE(m.strata_wins(HostOp::transfer, 65536, 1));
  EXPECT_FALSE(m.strata_wins(HostOp::pack, 65536, 256));
  EXPECT_FALSE(m.strata_wins(HostOp::transfer, 1 << 20, 512));
  // Outside the measured grid: the nearest measured point decides.
  EXPECT_TRUE(m.strata_wins(HostOp::pack, int64_t{1} << 30, 2));
  EXPECT_FALSE(m.strata_wins(HostOp::pack, 16, 4096));
}

TEST(HostModel, RequiresAMarginOverTheLibrary) {
  EXPECT_FALSE(synthetic(1.03, true).strata_wins(HostOp::pack, 65536, 8));
  EXPECT_TRUE(synthetic(1.10, true).strata_wins(HostOp::pack, 65536, 8));
}

// Decisions are conservative: both the nearest point and the neighbourhood
// must show the speed-up.
HostModel with_transfer_point(double fast, int64_t block, int64_t bytes, double speedup) {
  HostModel m = synthetic(fast, true);
  for (HostSample& s : m.transfer) {
    if (s.block == block && s.bytes == bytes) s.strata_ns = s.library_ns / speedup;
  }
  Result again = HostModel::from_json(m.to_json());
  EXPECT_TRUE(again.ok());
  return std::move(again).value();
}

TEST(HostModel, ALuckyNeighbourDoesNotChooseStrata) {
  // Strata measured slower (0.9x) at 16 KiB with 256 B blocks, one 3x outlier next door.
  HostModel m = with_transfer_point(1.5, 256, 65536, 3.0);
  for (HostSample& s : m.transfer) {
    if (s.block == 256 && s.bytes == 16384) s.strata_ns = s.library_ns / 0.9;
  }
  Result again = HostModel::from_json(m.to_json());
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again.value().strata_wins(HostOp::transfer, 16384, 256));
}

TEST(HostModel, AnUnluckyNeighbourDoesNotChooseTheLibrary) {
  HostModel m = with_transfer_point(1.5, 4, 65536, 0.9);  // 1.5x everywhere else for 4 B blocks
  EXPECT_TRUE(m.strata_wins(HostOp::transfer, 16384, 4));
  EXPECT_FALSE(m.strata_wins(HostOp::transfer, 65536, 4));  // the nearest point itself says no
}

TEST(HostModel, TransfersFromPackFiguresPayOneMoreCopy) {
  // Pack 2x faster, but the extra memcpy of the packed bytes costs more than
  // the gain: at 1 byte/ns the copy of 1 MiB takes 1 ms against 0.5 ms saved.
  HostModel m = synthetic(2.0, false);
  m.memcpy_gbps = 1.0;
  Result slow_copy = HostModel::from_json(m.to_json());
  ASSERT_TRUE(slow_copy.ok());
  EXPECT_TRUE(slow_copy.value().strata_wins(HostOp::pack, 1 << 20, 4));
  EXPECT_FALSE(slow_copy.value().strata_wins(HostOp::transfer, 1 << 20, 4));
  m.memcpy_gbps = 1e6;  // a free copy: the pack decides
  Result fast_copy = HostModel::from_json(m.to_json());
  ASSERT_TRUE(fast_copy.ok());
  EXPECT_TRUE(fast_copy.value().strata_wins(HostOp::transfer, 1 << 20, 4));
}

TEST(HostModel, RejectsMalformedFiles) {
  for (const char* bad : {"", "not json", "[]", "{}", R"({"host": 3})", R"({"host": {"pack": 7}})",
                          R"({"host": {"pack": [{"block": "x", "bytes": 1, "library_ns": 1, "strata_ns": 1}]}})",
                          R"({"host": {"pack": [{"block": 1, "bytes": 1, "library_ns": -1, "strata_ns": 1}]}})",
                          R"({"host": {"pack": []}})"}) {
    EXPECT_FALSE(HostModel::from_json(bad).ok()) << bad;
  }
}

TEST(HostModel, TheBuiltInReferenceModelLoads) {
  HostModel m = HostModel::builtin();
  EXPECT_EQ(m.source, "built-in");
  EXPECT_GT(m.pack.size(), 20u);
  EXPECT_GT(m.transfer.size(), 20u);
  EXPECT_GT(m.memcpy_gbps, 0);
}

using strata::interposer::DeviceModel;
using strata::interposer::Method;

// One-way times: ONE_SHOT is faster up to 64 KiB, STAGED above; DEVICE
// (a GPU-aware MPI) is fastest everywhere.
std::string device_json() {
  std::string samples;
  for (long bytes : {1024L, 65536L, 1048576L, 16777216L}) {
    for (long block : {8L, 512L}) {
      const double base = 1000.0 + bytes * 0.2;
      const double oneshot = bytes <= 65536 ? base : base * 1.5;
      const double staged = bytes <= 65536 ? base * 1.5 : base;
      for (auto [m, ns] :
           {std::pair<const char*, double>{"oneshot", oneshot}, {"staged", staged}, {"device", base / 2}}) {
        if (!samples.empty()) samples += ",";
        samples += "{\"method\":\"" + std::string(m) + "\",\"block\":" + std::to_string(block) +
                   ",\"bytes\":" + std::to_string(bytes) + ",\"ns\":" + std::to_string(ns) + "}";
      }
    }
  }
  return "{\"device\":{\"transfer\":[" + samples + "]}}";
}

TEST(DeviceModel, ChoosesTheCheapestAllowedMethod) {
  strata::Result<DeviceModel> m = DeviceModel::from_json(device_json());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.value().choose(2048, 8, false), Method::oneshot);
  EXPECT_EQ(m.value().choose(int64_t{8} << 20, 512, false), Method::staged);
  EXPECT_EQ(m.value().choose(2048, 8, true), Method::device);  // only a GPU-aware MPI may take it
}

// The reference model chooses SPAN for small messages of 8-byte blocks
// (measured at span = 8 x packed bytes); a type of the same bytes spread
// far wider (a halo's corner: 216 B over 80 KB) must not copy its span.
TEST(DeviceModel, SpanOnlyWhereTheMeasuredSpanWasAsWide) {
  DeviceModel m = DeviceModel::builtin();
  EXPECT_EQ(m.choose(1024, 8, false), Method::span) << "the reference model changed: pick another point";
  EXPECT_NE(m.choose_packing(1024, 8, false), Method::span);
  EXPECT_DOUBLE_EQ(DeviceModel::measured_span_ratio(8), 8.0);
  EXPECT_DOUBLE_EQ(DeviceModel::measured_span_ratio(512), 2.0);
  EXPECT_EQ(strata::interposer::choose_method(1024, 8, 8 * 1024), Method::span);
  EXPECT_EQ(strata::interposer::choose_method(1024, 8, 0), Method::span);  // span unknown
  EXPECT_EQ(strata::interposer::choose_method(1024, 8, 80000), m.choose_packing(1024, 8, false));
}

TEST(DeviceModel, RejectsMalformedFiles) {
  for (const char* bad : {"", "{}", R"({"device": {"transfer": 1}})",
                          R"({"device": {"transfer": [{"method": "teleport", "block": 1, "bytes": 1, "ns": 1}]}})",
                          R"({"device": {"transfer": [{"method": "staged", "block": 0, "bytes": 1, "ns": 1}]}})"}) {
    EXPECT_FALSE(DeviceModel::from_json(bad).ok()) << bad;
  }
}

TEST(DeviceModel, TheBuiltInReferenceModelLoads) {
  DeviceModel m = DeviceModel::builtin();
  EXPECT_EQ(m.source, "built-in");
  EXPECT_GE(m.samples.size(), 20u);
  // Without a GPU-aware MPI the device method is never chosen.
  for (int64_t bytes : {int64_t{1024}, int64_t{1} << 20, int64_t{1} << 30}) {
    EXPECT_NE(m.choose(bytes, 8, false), Method::device) << bytes;
  }
}

// --- kernels or copy engines (portability/mover/engine_choice.hpp) ---------------------

using strata::mover::Engine;
using strata::mover::EngineChooser;

// Feeds `n` picks with the given costs per engine; returns how many picks
// went to the copy engines.
int run_chooser(EngineChooser& c, int n, double kernels_us, double copies_us, int64_t bytes = 1 << 20) {
  int copies = 0;
  for (int i = 0; i < n; ++i) {
    const Engine e = c.pick(true, bytes, 26);
    copies += e == Engine::copies ? 1 : 0;
    c.record(true, bytes, 26, e, e == Engine::copies ? copies_us : kernels_us);
  }
  return copies;
}

TEST(EngineChoice, TriesBothThenKeepsTheFasterAndExploresTheOther) {
  EngineChooser c;
  // Three samples of each, in turn.
  for (int i = 0; i < 6; ++i) {
    const Engine e = c.pick(true, 1 << 20, 26);
    EXPECT_EQ(e, i % 2 == 0 ? Engine::kernels : Engine::copies) << "pick " << i;
    c.record(true, 1 << 20, 26, e, e == Engine::copies ? 140.0 : 280.0);
  }
  EXPECT_DOUBLE_EQ(c.estimate(true, 1 << 20, 26, Engine::kernels), 280.0);
  EXPECT_DOUBLE_EQ(c.estimate(true, 1 << 20, 26, Engine::copies), 140.0);
  // Then the copy engines, but for one pick in kExploreEvery.
  const int copies = run_chooser(c, 160, 280.0, 140.0);
  EXPECT_EQ(copies, 160 - 160 / EngineChooser::kExploreEvery);
}

TEST(EngineChoice, AFarSlowerEngineIsTriedLessOften) {
  EngineChooser c;
  run_chooser(c, 6, 550.0, 140.0);  // kernels on a GPU four processes time-slice
  const int n = 4 * EngineChooser::kExploreRarely;
  EXPECT_EQ(run_chooser(c, n, 550.0, 140.0), n - n / EngineChooser::kExploreRarely);
}

TEST(EngineChoice, AFirstSlowLaunchIsForgotten) {
  EngineChooser c;
  // The first kernel launch loads the module (milliseconds); the median of
  // three forgets it.
  c.record(true, 1 << 20, 26, Engine::kernels, 5000.0);
  c.record(true, 1 << 20, 26, Engine::copies, 75.0);
  c.record(true, 1 << 20, 26, Engine::kernels, 30.0);
  c.record(true, 1 << 20, 26, Engine::copies, 75.0);
  c.record(true, 1 << 20, 26, Engine::kernels, 30.0);
  c.record(true, 1 << 20, 26, Engine::copies, 75.0);
  EXPECT_EQ(run_chooser(c, 15, 30.0, 75.0), 0);
}

TEST(EngineChoice, FollowsAChangeWithinTwoFlushes) {
  EngineChooser c;
  run_chooser(c, 40, 30.0, 75.0);  // kernels win on a GPU of its own
  // Other processes start time-slicing the GPU: kernels now cost 300 us.
  int kernels_after_change = 0;
  for (int i = 0; i < 10; ++i) {
    const Engine e = c.pick(true, 1 << 20, 26);
    if (e == Engine::copies) break;
    ++kernels_after_change;
    c.record(true, 1 << 20, 26, e, 300.0);
  }
  EXPECT_EQ(kernels_after_change, 2);
  // And back when they leave: the median needs two cheap samples of the
  // kernels, taken at the next two explorations (rare ones: 300 us was
  // more than twice the copies' 75).
  run_chooser(c, 2 * EngineChooser::kExploreRarely + 1, 30.0, 75.0);
  EXPECT_LE(run_chooser(c, EngineChooser::kExploreEvery, 30.0, 75.0), 1) << "only the exploration";
}

TEST(EngineChoice, SizesAndDirectionsAreKeptApart) {
  EngineChooser c;
  run_chooser(c, 40, 300.0, 75.0, 1 << 20);  // large flushes: copies
  run_chooser(c, 40, 10.0, 75.0, 1 << 10);   // small ones: kernels
  EXPECT_EQ(c.pick(true, 1 << 20, 26), Engine::copies);
  EXPECT_EQ(c.pick(true, 1 << 10, 26), Engine::kernels);
  EXPECT_LT(c.estimate(false, 1 << 20, 26, Engine::kernels), 0) << "the receive side was never measured";
  EXPECT_EQ(c.pick(false, 1 << 20, 26), Engine::kernels);
}

}  // namespace

// The buckets against the definition, a loop over powers of two: values
// below 2 in bucket 0, the largest clamped to the last bucket.
TEST(Log2Buckets, MatchTheLoopOverPowersOfTwo) {
  auto naive = [](int64_t v, int buckets) {
    int b = 0;
    while (b + 1 < buckets && (int64_t{1} << (b + 1)) <= v) ++b;
    return b;
  };
  std::mt19937_64 rng(std::random_device{}());
  for (int buckets : {1, 2, 12, 33, 40, 63}) {
    for (int64_t v : {int64_t{-5}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{1} << 40,
                      (int64_t{1} << 40) - 1, INT64_MAX}) {
      EXPECT_EQ(strata::numeric::log2_bucket(v, buckets), naive(v, buckets)) << v << " in " << buckets;
    }
    for (int i = 0; i < 2000; ++i) {
      const int64_t v = static_cast<int64_t>(rng() >> (rng() % 63));
      ASSERT_EQ(strata::numeric::log2_bucket(v, buckets), naive(v, buckets)) << v << " in " << buckets;
    }
  }
}
