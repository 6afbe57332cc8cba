// The public API (strata/fault.hpp) on a linked application: start after
// MPI_Init, Strata's collectives recorded with one number per collective
// and communicator on every rank, non-blocking requests followed to their
// completion, the device timer hook, dump() readable as JSON lines,
// nothing diagnosed on a clean run, stop().
#include "fault/agent/scanner.hpp"
#include "fault/clock.hpp"
#include "fault/hooks.hpp"
#include "fault/recorder/state.hpp"
#include "support/mpi_test.hpp"

#include <strata/collectives.hpp>
#include <strata/fault.hpp>
#include <strata/fused.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <mpi.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace sf = strata::fault;

// This rank's flight record, as parsed lines.
std::vector<nlohmann::json> read_dump() {
  const char* dir = std::getenv("STRATA_FAULT_DIR");
  std::vector<nlohmann::json> lines;
  // The file name carries the job id: find it by the header's rank.
  const std::string list = std::string("ls ") + (dir ? dir : "strata-fault") + "/*.rank" +
                           std::to_string(strata_test::world_rank()) + ".jsonl 2>/dev/null | tail -1";
  std::FILE* p = popen(list.c_str(), "r");
  char name[1024] = {0};
  if (p == nullptr || std::fgets(name, sizeof(name), p) == nullptr) {
    if (p) pclose(p);
    return lines;
  }
  pclose(p);
  std::string path(name);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::vector<nlohmann::json> ops_of(const std::vector<nlohmann::json>& lines, const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const auto& l : lines) {
    if (l.value("type", "") == "op" && l.value("kind", "") == kind) out.push_back(l);
  }
  return out;
}

// A fake device timer: marks are counters; the elapsed time is known.
std::atomic<int> g_marks{0};
void* fake_mark(void*, void*) { return reinterpret_cast<void*>(static_cast<uintptr_t>(++g_marks)); }
int fake_elapsed(void* b, void* e, int64_t* ns, void*) {
  *ns = 1000 * static_cast<int64_t>(reinterpret_cast<uintptr_t>(e) - reinterpret_cast<uintptr_t>(b));
  return 1;
}

class FaultApi : public testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(sf::start(true), strata::Status::ok); }
};

TEST_F(FaultApi, RecordsStrataCollectivesWithOneNumberPerCommunicator) {
  ASSERT_TRUE(sf::running());
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  double x = rank, sum = 0;
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(strata::coll::allreduce(&x, &sum, 1, strata::coll::DataType::float64, strata::coll::ReduceOp::sum,
                                      MPI_COMM_WORLD),
              strata::Status::ok);
  }
  // A sub-communicator: its id is the same on its members.
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int one = 1, count = 0;
  ASSERT_EQ(strata::coll::allreduce(&one, &count, 1, strata::coll::DataType::int32, strata::coll::ReduceOp::sum, half),
            strata::Status::ok);
  ASSERT_EQ(sf::dump("test"), strata::Status::ok);
  const auto lines = read_dump();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0]["type"], "header");
  EXPECT_EQ(lines[0]["rank"], rank);
  EXPECT_EQ(lines[0]["size"], size);
  EXPECT_EQ(lines[0]["reason"], "test");
  const auto all = ops_of(lines, "allreduce");
  std::vector<uint64_t> world;
  std::string half_id;
  for (const auto& o : all) {
    EXPECT_EQ(o["state"], "done");
    EXPECT_GE(o["end_ns"].get<int64_t>(), o["enq_ns"].get<int64_t>());
    if (o["comm"] == "0") {
      world.push_back(o["seq"].get<uint64_t>());
    } else {
      half_id = o["comm"].get<std::string>();
      EXPECT_EQ(o["seq"], 1);
    }
  }
  ASSERT_GE(world.size(), 20u);
  for (size_t i = 1; i < world.size(); ++i) EXPECT_EQ(world[i], world[i - 1] + 1);
  ASSERT_FALSE(half_id.empty());
  // Every member of the half has the same id; the other half another one.
  char mine[32] = {0};
  std::snprintf(mine, sizeof(mine), "%s", half_id.c_str());
  std::vector<char> ids(32 * static_cast<size_t>(size));
  MPI_Allgather(mine, 32, MPI_CHAR, ids.data(), 32, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    const std::string other(&ids[32 * static_cast<size_t>(r)]);
    if (r % 2 == rank % 2) {
      EXPECT_EQ(other, half_id) << "rank " << r;
    } else {
      EXPECT_NE(other, half_id) << "rank " << r;
    }
  }
  bool listed = false;
  for (const auto& l : lines) {
    if (l.value("type", "") == "comm" && l.value("id", "") == half_id) {
      listed = true;
      EXPECT_EQ(l["size"].get<int>(), (size + 1 - rank % 2) / 2);
      EXPECT_EQ(l["ranks"][0], rank % 2);
    }
  }
  EXPECT_TRUE(listed);
  MPI_Comm_free(&half);
}

// Fused AllReduce-RMSNorm calls are recorded once each (the fallback's inner
// allreduce is not a second record), numbered on the object's communicator.
TEST_F(FaultApi, RecordsFusedCalls) {
  strata::fused::Config cfg;
  cfg.max_tokens = 4;
  cfg.hidden = 8;
  cfg.type = strata::coll::DataType::float32;
  cfg.memory = strata::fused::Memory::host;
  auto fused = strata::fused::AllreduceRmsnorm::create(MPI_COMM_WORLD, cfg);
  ASSERT_TRUE(fused.ok());
  std::vector<float> x(32, 1.0f), residual(32, 0.5f), weight(8, 1.0f), out(32);
  strata::fused::Tensors t{x.data(), residual.data(), weight.data(), out.data(), 4, 1e-6f};
  ASSERT_EQ(sf::dump("before"), strata::Status::ok);
  const size_t before = ops_of(read_dump(), "allreduce").size();
  for (auto a : {strata::fused::Algorithm::fallback, strata::fused::Algorithm::one_shot,
                 strata::fused::Algorithm::two_shot, strata::fused::Algorithm::lamport}) {
    strata::fused::RunOptions o;
    o.algorithm = a;
    ASSERT_EQ(fused.value()->run(t, o), strata::Status::ok);
  }
  ASSERT_EQ(sf::dump("fused"), strata::Status::ok);
  const auto lines = read_dump();
  const auto calls = ops_of(lines, "fused_allreduce_rmsnorm");
  ASSERT_EQ(calls.size(), 4u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i]["state"], "done");
    EXPECT_EQ(calls[i]["bytes"], 4 * 8 * 4);
    EXPECT_EQ(calls[i]["seq"], i + 1) << "numbered on the object's own communicator";
    EXPECT_NE(calls[i]["comm"], "0");
  }
  EXPECT_EQ(ops_of(lines, "allreduce").size(), before) << "the fallback's allreduce was recorded a second time";
}

TEST_F(FaultApi, FollowsNonBlockingRequestsToTheirCompletion) {
  STRATA_REQUIRE_RANKS(2);
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long out = rank, in = -1;
  MPI_Request req[2];
  {
    sf::P2pScope rec(sf::OpKind::irecv, MPI_COMM_WORLD, 1, MPI_LONG, left, 7, &req[0]);
    PMPI_Irecv(&in, 1, MPI_LONG, left, 7, MPI_COMM_WORLD, &req[0]);
  }
  {
    sf::P2pScope rec(sf::OpKind::isend, MPI_COMM_WORLD, 1, MPI_LONG, right, 7, &req[1]);
    PMPI_Isend(&out, 1, MPI_LONG, right, 7, MPI_COMM_WORLD, &req[1]);
  }
  {
    sf::WaitScope rec(true, 2, req);
    PMPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  }
  EXPECT_EQ(in, left);
  ASSERT_EQ(sf::dump("test"), strata::Status::ok);
  const auto lines = read_dump();
  const auto isends = ops_of(lines, "isend"), irecvs = ops_of(lines, "irecv"), waits = ops_of(lines, "wait");
  ASSERT_EQ(isends.size(), 1u);
  ASSERT_EQ(irecvs.size(), 1u);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(isends[0]["state"], "done");
  EXPECT_EQ(isends[0]["peer"], right);
  EXPECT_EQ(isends[0]["seq"], 1);  // first message to that peer
  EXPECT_EQ(isends[0]["bytes"], sizeof(long));
  EXPECT_EQ(irecvs[0]["state"], "done");
  EXPECT_EQ(irecvs[0]["peer"], left);
  EXPECT_GT(irecvs[0]["start_ns"].get<int64_t>(), 0);  // waited for by the waitall
  EXPECT_EQ(waits[0]["requests"], 2);
  EXPECT_EQ(waits[0]["first_request"], "irecv");
}

// With STRATA_FAULT_DEVICE_EVERY=2 and no least period (the test's environment) every second
// collective on a stream gets two marks, whatever came before on the thread.
TEST_F(FaultApi, DeviceTimerTimesEverySecondDeviceCollective) {
  static const sf::DeviceTimer timer{fake_mark, fake_elapsed, nullptr};
  sf::set_device_timer(&timer);
  const int marks_before = g_marks.load();
  int stream = 0;  // a stand-in: the fake timer never looks at it
  for (int i = 0; i < 4; ++i) {
    sf::CollScope rec(sf::OpKind::bcast, MPI_COMM_WORLD, uint64_t{4096}, 0, &stream);
    int v = 1;
    PMPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  sf::set_device_timer(nullptr);
  EXPECT_EQ(g_marks.load() - marks_before, 4);  // two calls of four, two marks each
  // The watchdog resolves the marks at its next tick.
  std::vector<int64_t> dev;
  for (int attempt = 0; attempt < 50 && dev.size() < 2; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    sf::set_device_timer(&timer);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    sf::set_device_timer(nullptr);
    ASSERT_EQ(sf::dump("test"), strata::Status::ok);
    const auto b = ops_of(read_dump(), "bcast");
    ASSERT_GE(b.size(), 4u);
    dev.clear();
    for (size_t i = b.size() - 4; i < b.size(); ++i) {
      if (b[i].contains("dev_ns")) dev.push_back(b[i]["dev_ns"].get<int64_t>());
    }
  }
  ASSERT_EQ(dev.size(), 2u);
  EXPECT_EQ(dev[0], 1000);  // the two marks of a call are consecutive
  EXPECT_EQ(dev[1], 1000);
  EXPECT_TRUE(strata_test::all_ranks_agree(dev.size() == 2 && dev[0] == 1000 && dev[1] == 1000));
}

// STRATA_FAULT_DEVICE_PERIOD_US: after a timed call, none is timed until
// the period has passed, however many calls come.
TEST_F(FaultApi, DeviceTimerWaitsThePeriodBetweenTimedCalls) {
  static const sf::DeviceTimer timer{fake_mark, fake_elapsed, nullptr};
  sf::ProcessState& p = sf::process();
  const uint64_t every = p.device_every.load(), period = p.device_period_ticks.load();
  sf::set_device_timer(&timer);
  int stream = 0;
  auto stream_calls = [&](int n) {
    const int before = g_marks.load();
    for (int i = 0; i < n; ++i) {
      sf::CollScope rec(sf::OpKind::bcast, MPI_COMM_WORLD, uint64_t{64}, 0, &stream);
      int v = 1;
      PMPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    return g_marks.load() - before;
  };
  p.device_every.store(1);
  p.device_period_ticks.store(0);
  EXPECT_EQ(stream_calls(1), 2);  // timed: nothing to wait for
  p.device_period_ticks.store(sf::ns_to_ticks(int64_t{10} * 1000000000));
  EXPECT_EQ(stream_calls(8), 0);  // within 10 s of the last timed one
  p.device_period_ticks.store(sf::ns_to_ticks(1000000));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(stream_calls(1), 2);  // 1 ms later: timed again
  p.device_every.store(every);
  p.device_period_ticks.store(period);
  sf::set_device_timer(nullptr);
}

// Collectives on a stream are recorded only where their number is a
// multiple of the stride the watchdog set from the call rate
// (ProcessState::stream_stride); every one still counts on its
// communicator, and a collective without a stream is always recorded. The
// watchdog resets the stride at each tick: an attempt a tick interrupted
// (on any rank) is run again.
TEST_F(FaultApi, StreamCollectivesAreRecordedAtMultiplesOfTheStride) {
  sf::ProcessState& p = sf::process();
  int stream = 0;  // a stand-in: nothing looks at it (no device timer installed)
  std::vector<uint64_t> seqs;
  uint64_t counted = 0;
  int clean = 0;
  for (int attempt = 0; attempt < 20 && clean == 0; ++attempt) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    const uint64_t streamed = 5000 + 10 * attempt, plain = streamed + 1;  // this attempt's records, by size
    p.stream_stride.store(4);
    for (int i = 0; i < 15; ++i) {
      sf::CollScope rec(sf::OpKind::bcast, c, i < 12 ? streamed : plain, 0, i < 12 ? &stream : nullptr);
      int v = 1;
      PMPI_Bcast(&v, 1, MPI_INT, 0, c);
    }
    clean = p.stream_stride.load() == 4 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &clean, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    counted = p.comms.entry(p.comms.index_of(c))->coll_started.load();
    ASSERT_EQ(sf::dump("test"), strata::Status::ok);
    seqs.clear();
    for (const auto& o : ops_of(read_dump(), "bcast")) {
      const uint64_t bytes = o["bytes"].get<uint64_t>();
      if (bytes == streamed || bytes == plain) seqs.push_back(o["seq"].get<uint64_t>());
    }
    MPI_Comm_free(&c);
  }
  p.stream_stride.store(1);
  ASSERT_EQ(clean, 1) << "every attempt crossed a watchdog tick";
  EXPECT_EQ(counted, 15u);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{4, 8, 12, 13, 14, 15}));
}

// The stride: the smallest power of two that brings a tick's collectives
// within a heartbeat's 512 samples.
TEST(FaultStreamStride, SmallestPowerOfTwoWithinTheBudget) {
  EXPECT_EQ(sf::Scanner::stream_stride(0), 1u);
  EXPECT_EQ(sf::Scanner::stream_stride(512), 1u);
  EXPECT_EQ(sf::Scanner::stream_stride(513), 2u);
  EXPECT_EQ(sf::Scanner::stream_stride(1024), 2u);
  EXPECT_EQ(sf::Scanner::stream_stride(1025), 2u);  // 1025 / 2 is 512, as the heartbeat divides
  EXPECT_EQ(sf::Scanner::stream_stride(1026), 4u);
  EXPECT_EQ(sf::Scanner::stream_stride(12500), 32u);
}

TEST_F(FaultApi, CleanRunHasNoDiagnosisAndStops) {
  double x = 1, y = 0;
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(strata::coll::allreduce(&x, &y, 1, strata::coll::DataType::float64, strata::coll::ReduceOp::max,
                                      MPI_COMM_WORLD),
              strata::Status::ok);
  }
  EXPECT_TRUE(sf::diagnoses().empty());
  EXPECT_EQ(sf::stop(), strata::Status::ok);
  EXPECT_FALSE(sf::running());
  EXPECT_EQ(sf::stop(), strata::Status::ok);  // twice is fine
  const auto lines = read_dump();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0]["reason"], "exit");
}

}  // namespace
