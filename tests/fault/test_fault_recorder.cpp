// The flight recorder's parts without MPI: the ring under concurrent
// writers and a reader, the JSON-lines writer against a JSON parser, the
// injection grammar, the request table, diagnosis JSON.
#include "fault/detect/diagnosis.hpp"
#include "fault/inject/inject.hpp"
#include "fault/recorder/device_times.hpp"
#include "fault/recorder/line_writer.hpp"
#include "fault/recorder/requests.hpp"
#include "fault/recorder/ring.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <climits>
#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace strata::fault;

// A reader on its own thread that copies every record in the ring over
// and over (and once more after stop()), counting the copies and those
// `whole` rejects: a torn copy.
class TornReadCounter {
 public:
  template <class Whole>
  TornReadCounter(const Ring& ring, Whole whole)
      : thread_([this, &ring, whole] {
          for (bool last = false; !last;) {
            last = done_.load();
            reading_.store(true);
            const uint64_t head = ring.head();
            for (uint64_t i = ring.tail(); i < head; ++i) {
              Record r;
              if (!ring.read(i, &r)) continue;
              if (!whole(i, r)) torn_.fetch_add(1);
              checked_.fetch_add(1);
            }
          }
        }) {}
  ~TornReadCounter() {
    if (thread_.joinable()) stop();
  }
  void wait_until_reading() const {
    while (!reading_.load()) std::this_thread::yield();
  }
  void stop() {
    done_.store(true);
    thread_.join();
  }
  uint64_t checked() const { return checked_.load(); }
  uint64_t torn() const { return torn_.load(); }

 private:
  std::atomic<bool> done_{false}, reading_{false};
  std::atomic<uint64_t> checked_{0}, torn_{0};
  std::thread thread_;
};

// Both writer modes keep the same records.
class RingModes : public ::testing::TestWithParam<bool> {};

TEST_P(RingModes, RecordsAndWrapsAround) {
  Ring ring(20, GetParam());  // rounded up to 32
  EXPECT_EQ(ring.capacity(), 32u);
  for (uint64_t i = 0; i < 100; ++i) {
    RecordStart s;
    s.kind = OpKind::send;
    s.seq = i;
    s.bytes = 8 * i;
    s.enq_ns = static_cast<int64_t>(1000 + i);
    EXPECT_EQ(ring.begin(s), i);
    if (i % 2 == 0) ring.finish(i, static_cast<int64_t>(2000 + i));
  }
  EXPECT_EQ(ring.head(), 100u);
  EXPECT_EQ(ring.tail(), 68u);
  Record r;
  EXPECT_FALSE(ring.read(10, &r));  // overwritten
  ASSERT_TRUE(ring.read(70, &r));
  EXPECT_EQ(r.seq, 70u);
  EXPECT_EQ(r.bytes, 560u);
  EXPECT_EQ(r.state, OpState::done);
  EXPECT_EQ(r.end_ns, 2070);
  ASSERT_TRUE(ring.read(71, &r));
  EXPECT_EQ(r.state, OpState::active);
  ring.finish(10, 5);  // a late end for an overwritten record changes nothing
  ASSERT_TRUE(ring.read(74, &r));
  EXPECT_EQ(r.end_ns, 2074);
  ring.mark_posted(71);
  ASSERT_TRUE(ring.read(71, &r));
  EXPECT_EQ(r.state, OpState::posted);
  ring.mark_started(71, 3000);  // a blocking call started at its entry
  ASSERT_TRUE(ring.read(71, &r));
  EXPECT_EQ(r.start_ns, 1071);
  RecordStart nb;
  nb.kind = OpKind::irecv;
  nb.enq_ns = 2500;
  nb.started = false;
  ASSERT_EQ(ring.begin(nb), 100u);
  ASSERT_TRUE(ring.read(100, &r));
  EXPECT_EQ(r.start_ns, 0);
  ring.mark_started(100, 3000);
  ring.mark_started(100, 4000);  // only the first start counts
  ring.mark_started(12, 4000);   // overwritten: nothing
  ASSERT_TRUE(ring.read(100, &r));
  EXPECT_EQ(r.start_ns, 3000);
  ring.finish(71, 5000, OpState::lost);
  ASSERT_TRUE(ring.read(71, &r));
  EXPECT_EQ(r.state, OpState::lost);
  EXPECT_EQ(r.end_ns, 5000);
}

INSTANTIATE_TEST_SUITE_P(Writers, RingModes, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "shared" : "single"; });

// The single-writer mode (plain stores behind the sequence word) against a
// reader on another core: every record read is whole, begun or finished.
TEST(Ring, SingleWriterNeverTearsARecordForAReader) {
  Ring ring(64, false);
  constexpr uint64_t kRecords = 400000;
  TornReadCounter reader(ring, [](uint64_t i, const Record& r) {
    return r.index == i && r.seq == i && r.bytes == 3 * i && r.tag == static_cast<int32_t>(i % 1000) &&
           r.enq_ns == static_cast<int64_t>(i) + 1 &&
           ((r.state == OpState::active && r.end_ns == 0) || (r.state == OpState::posted && r.end_ns == 0) ||
            (r.state == OpState::done && r.end_ns == r.enq_ns + 7));
  });
  reader.wait_until_reading();
  for (uint64_t i = 0; i < kRecords; ++i) {
    RecordStart s;
    s.kind = OpKind::isend;
    s.seq = i;
    s.bytes = 3 * i;
    s.tag = static_cast<int32_t>(i % 1000);
    s.enq_ns = static_cast<int64_t>(i) + 1;
    const uint64_t index = ring.begin(s);
    ASSERT_EQ(index, i);
    ring.mark_posted(index);
    ring.finish(index, static_cast<int64_t>(i) + 8);
  }
  reader.stop();
  EXPECT_EQ(ring.head(), kRecords);
  EXPECT_EQ(reader.torn(), 0u);
  EXPECT_GT(reader.checked(), 0u);
}

TEST(DeviceTimes, KeepsTheLastDurationsByRecord) {
  DeviceTimes t;
  EXPECT_EQ(t.find(5), -1);
  t.set(5, 1234);
  EXPECT_EQ(t.find(5), 1234);
  EXPECT_EQ(t.find(6), -1);
  t.set(5 + DeviceTimes::kEntries, 99);  // the same entry, a later record
  EXPECT_EQ(t.find(5), -1);
  EXPECT_EQ(t.find(5 + DeviceTimes::kEntries), 99);
  DeviceMarks marks;
  int a = 0, b = 0;
  ASSERT_TRUE(marks.push({7, &a, &b}));
  std::vector<PendingMarks> out{{1, nullptr, nullptr}};
  marks.drain(&out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].index, 7u);
  EXPECT_EQ(out[1].begin, &a);
  EXPECT_EQ(out[1].end, &b);
  marks.drain(&out);
  EXPECT_EQ(out.size(), 2u);  // drained once
}

TEST(Ring, ConcurrentWritersNeverTearARecord) {
  Ring ring(256);
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 50000;
  // Each writer sets seq = id, bytes = 3 id, peer = thread, tag = id % 1000, end = enq + 7 (or 0).
  TornReadCounter reader(ring, [](uint64_t, const Record& r) {
    return r.bytes == 3 * r.seq && r.tag == static_cast<int32_t>(r.seq % 1000) &&
           r.enq_ns == static_cast<int64_t>(r.seq) && (r.end_ns == 0 || r.end_ns == r.enq_ns + 7) &&
           static_cast<uint64_t>(r.peer) == r.seq / kPerThread;
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      reader.wait_until_reading();
      for (uint64_t i = 0; i < kPerThread; ++i) {
        const uint64_t id = static_cast<uint64_t>(t) * kPerThread + i;
        RecordStart s;
        s.kind = OpKind::allreduce;
        s.seq = id;
        s.bytes = 3 * id;
        s.peer = t;
        s.tag = static_cast<int32_t>(id % 1000);
        s.enq_ns = static_cast<int64_t>(id);
        const uint64_t index = ring.begin(s);
        ring.finish(index, static_cast<int64_t>(id) + 7);
      }
    });
  }
  for (auto& w : writers) w.join();
  reader.stop();
  EXPECT_EQ(ring.head(), kThreads * kPerThread);
  EXPECT_EQ(reader.torn(), 0u);
  EXPECT_GT(reader.checked(), 0u);
}

TEST(LineWriter, WritesJsonAParserReads) {
  char path[] = "/tmp/strata-linewriter-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string nasty = std::string("quote\" backslash\\ tab\t newline\n bell\x07 end");
  {
    LineWriter w(fd);
    w.begin().field("s", nasty.c_str()).field("min", int64_t{INT64_MIN}).field("max", uint64_t{UINT64_MAX});
    w.field("neg", -42).field("yes", true).hex_field("id", uint64_t{0xdeadbeef12});
    w.begin_array("list").element(1).element(-2).element(3).end_array().field("after", 0).end();
    w.begin().field("type", "second").end();
  }
  close(fd);
  std::FILE* f = std::fopen(path, "r");
  ASSERT_NE(f, nullptr);
  char line[4096];
  ASSERT_NE(std::fgets(line, sizeof(line), f), nullptr);
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["s"], nasty);
  EXPECT_EQ(j["min"].get<int64_t>(), INT64_MIN);
  EXPECT_EQ(j["max"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(j["neg"], -42);
  EXPECT_EQ(j["yes"], true);
  EXPECT_EQ(j["id"], "deadbeef12");
  EXPECT_EQ(j["list"], nlohmann::json({1, -2, 3}));
  EXPECT_EQ(j["after"], 0);
  ASSERT_NE(std::fgets(line, sizeof(line), f), nullptr);
  EXPECT_EQ(nlohmann::json::parse(line)["type"], "second");
  std::fclose(f);
  std::remove(path);
}

TEST(Inject, GrammarParses) {
  std::vector<InjectRule> rules;
  std::string error;
  ASSERT_EQ(parse_injection("delay:rank=3,op=allreduce,ms=50,after=100; slowlink:ranks=2-5,ms=20,at=1.5;"
                            "kill:rank=1,signal=SEGV; stall:rank=0,op=coll; hang:rank=4; cutlink:ranks=6-7,after=9",
                            &rules, &error),
            strata::Status::ok)
      << error;
  ASSERT_EQ(rules.size(), 6u);
  EXPECT_EQ(rules[0].action, InjectAction::delay);
  EXPECT_EQ(rules[0].rank, 3);
  EXPECT_EQ(rules[0].ms, 50);
  EXPECT_EQ(rules[0].after, 100u);
  EXPECT_EQ(rules[0].ops, 1u << static_cast<int>(OpKind::allreduce));
  EXPECT_EQ(rules[1].action, InjectAction::slowlink);
  EXPECT_EQ(rules[1].link_a, 2);
  EXPECT_EQ(rules[1].link_b, 5);
  EXPECT_EQ(rules[1].at_ns, 1500000000);
  EXPECT_EQ(rules[2].signal, 11);
  EXPECT_EQ(rules[3].ops & (1u << static_cast<int>(OpKind::send)), 0u);
  EXPECT_NE(rules[3].ops & (1u << static_cast<int>(OpKind::bcast)), 0u);
  EXPECT_EQ(rules[4].ops, ~0u);
  EXPECT_EQ(rules[5].action, InjectAction::cutlink);
  EXPECT_EQ(parse_injection("", &rules, &error), strata::Status::ok);
  EXPECT_TRUE(rules.empty());
}

TEST(Inject, GrammarRejects) {
  std::vector<InjectRule> rules;
  std::string error;
  for (const char* bad :
       {"explode:rank=1", "delay:rank=1", "delay:ms=5", "stall:rank=x", "slowlink:ranks=3,ms=1",
        "slowlink:ranks=2-2,ms=1", "cutlink:rank=1", "stall:rank=1,ms=5", "delay:rank=1,ms=5,op=frob",
        "kill:rank=1,signal=HUP", "stall:rank=1,after=-1", "delay:rank=1,ms=5,at=soon", "stall:rank"}) {
    EXPECT_EQ(parse_injection(bad, &rules, &error), strata::Status::invalid_argument) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(Inject, RulesActOnTheirRankAfterTheCount) {
  std::vector<InjectRule> rules;
  std::string error;
  ASSERT_EQ(parse_injection("delay:rank=2,op=allreduce,ms=30,after=2;slowlink:ranks=2-5,ms=40,after=1", &rules, &error),
            strata::Status::ok);
  inject::install(rules, 2, 0);
  ASSERT_TRUE(inject::any());
  auto timed = [](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  EXPECT_LT(timed([] { inject::before(OpKind::allreduce); }), 20);  // 1st
  EXPECT_LT(timed([] { inject::before(OpKind::allreduce); }), 20);  // 2nd
  EXPECT_LT(timed([] { inject::before(OpKind::bcast); }), 20);      // not its kind
  EXPECT_GE(timed([] { inject::before(OpKind::allreduce); }), 29);  // 3rd: delayed
  EXPECT_LT(timed([] { inject::inside(OpKind::send, 5); }), 20);    // 1st message on the link
  EXPECT_LT(timed([] { inject::inside(OpKind::send, 4); }), 20);    // another peer
  EXPECT_LT(timed([] { inject::inside(OpKind::recv, 5); }), 20);    // receives are not slowed (the sender is)
  EXPECT_GE(timed([] { inject::inside(OpKind::sendrecv, 5); }), 39);
  EXPECT_EQ(inject::probe_delay_ms(5), 40);
  EXPECT_EQ(inject::probe_delay_ms(4), 0);
  inject::install(rules, 7, 0);  // a rank no rule names
  EXPECT_FALSE(inject::any());
  inject::install({}, 0, 0);
}

TEST(RequestTable, FollowsAndForgets) {
  RequestTable t;
  std::vector<MPI_Request> handles;
  for (uintptr_t i = 1; i <= 3000; ++i) {
    MPI_Request r;
    std::memset(&r, 0, sizeof(r));
    std::memcpy(&r, &i, sizeof(r) < sizeof(i) ? sizeof(r) : sizeof(i));
    handles.push_back(r);
    ASSERT_TRUE(t.put(r, i * 10));
  }
  uint64_t record = 0;
  for (uintptr_t i = 1; i <= 3000; i += 2) {
    ASSERT_TRUE(t.take(handles[i - 1], &record));
    EXPECT_EQ(record, i * 10);
    EXPECT_FALSE(t.take(handles[i - 1], &record));
  }
  // Churn through tombstones: the table rebuilds itself.
  for (int round = 0; round < 5; ++round) {
    for (uintptr_t i = 1; i <= 3000; i += 2) ASSERT_TRUE(t.put(handles[i - 1], i));
    for (uintptr_t i = 1; i <= 3000; i += 2) ASSERT_TRUE(t.take(handles[i - 1], &record));
  }
  for (uintptr_t i = 2; i <= 3000; i += 2) {
    ASSERT_TRUE(t.find(handles[i - 1], &record));
    EXPECT_EQ(record, i * 10);
  }
  EXPECT_FALSE(t.put(MPI_REQUEST_NULL, 1));
}

TEST(Diagnosis, JsonRoundTrip) {
  Diagnosis d;
  d.fault_class = FaultClass::comm_slow;
  d.detector = "link";
  d.links = {{2, 3}};
  d.hosts = {"n1", "n2"};
  d.op = "p2p";
  d.seq = 77;
  d.onset_seq = 70;
  d.detect_seq = 77;
  d.detected_ns = 123456789;
  d.message = "link 2-3 \"slow\"";
  Diagnosis back;
  ASSERT_TRUE(from_json(to_json(d), &back));
  EXPECT_EQ(back.fault_class, d.fault_class);
  EXPECT_EQ(back.links, d.links);
  EXPECT_EQ(back.hosts, d.hosts);
  EXPECT_EQ(back.detect_seq, 77u);
  EXPECT_EQ(back.message, d.message);
  EXPECT_FALSE(from_json("{\"type\":\"header\"}", &back));
  EXPECT_FALSE(from_json("not json", &back));
  EXPECT_STREQ(to_string(FaultClass::noncomm_hang), "non-comm hang");
}

}  // namespace
