// What ranks and the coordinator say to each other over the out-of-band
// channel (docs/fault.md, "Out-of-band channel"). Times are in the
// sender's CLOCK_MONOTONIC; the coordinator corrects them by the sender's
// estimated offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::fault::oob {

enum class Msg : uint16_t {
  hello = 1,      // rank -> any: who I am (first frame on every connection)
  heartbeat,      // rank -> coordinator: state and new samples
  comm_info,      // rank -> coordinator: a communicator's members (once per communicator)
  dump,           // coordinator -> rank: write your flight record now
  terminate,      // coordinator -> rank: the policy ends the job; exit with this code
  probe_request,  // coordinator -> rank: probe these peers
  ping,           // rank <-> rank: probe / clock
  pong,
  diagnosis,  // coordinator -> rank: a diagnosis (JSON), for diagnoses()
  clock,      // coordinator -> rank: your clock's offset to mine
  final_ack,  // coordinator -> rank: your final heartbeat is in; you may go
  dumped,     // rank -> coordinator: told to terminate, my flight record is written
};

inline constexpr uint32_t kMagic = 0x46525453;  // "STRF"
inline constexpr uint16_t kVersion = 1;
inline constexpr uint16_t kByteOrderMark = 0x0102;

struct Hello {
  int32_t rank = -1;
  int32_t size = 0;
  std::string host;
  std::string gpu;  // what the rank was given (CUDA/ROCR/HIP_VISIBLE_DEVICES), may be empty
};

// A record as the coordinator sees it.
struct OpBrief {
  uint8_t kind = 0;
  uint8_t state = 0;
  uint8_t pad[6] = {};
  uint64_t comm = 0;  // communicator id (not index)
  uint64_t seq = 0;
  int32_t peer = -1;
  int32_t peer2 = -1;
  uint64_t bytes = 0;
  int64_t enq_ns = 0;
  int64_t end_ns = 0;
};

struct CommProgress {
  uint64_t comm = 0;
  int32_t size = 0;
  int32_t pad = 0;
  uint64_t entered = 0;
  uint64_t left = 0;
};

// A finished collective: its arrival (start) and end on this rank.
struct CollSample {
  uint64_t comm = 0;
  uint64_t seq = 0;
  uint64_t bytes = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t compute_ns = 0;  // time outside communication since the previous collective
  uint8_t kind = 0;
  uint8_t pad[7] = {};
};

// One half of a point-to-point message: the sender's (ready = when it
// entered the send) or the receiver's (ready = when it was both posted and
// waited for; end = completion). The coordinator pairs the halves by
// (sender, receiver, ordinal).
struct P2pSample {
  int32_t peer = -1;
  uint8_t role = 0;  // 0 send, 1 receive
  uint8_t pad[3] = {};
  uint64_t ordinal = 0;
  uint64_t bytes = 0;
  int64_t ready_ns = 0;
  int64_t end_ns = 0;
};

struct ProbeSample {
  int32_t peer = -1;
  int32_t pad = 0;
  uint64_t number = 0;
  int64_t rtt_ns = 0;
  int64_t t_ns = 0;
};

struct Heartbeat {
  static constexpr uint8_t kFinal = 1;
  static constexpr uint8_t kSuspect = 2;
  static constexpr uint8_t kInOp = 4;
  static constexpr uint8_t kHasLast = 8;

  int32_t rank = -1;
  uint8_t flags = 0;
  int64_t now_ns = 0;
  uint64_t ops_done = 0;         // records finished so far
  OpBrief current;               // kInOp: the oldest blocking operation in progress
  int64_t threshold_ns = 0;      // its hang threshold
  OpBrief last;                  // kHasLast: the last operation finished
  std::vector<OpBrief> pending;  // the oldest non-blocking operations not yet completed
  std::vector<CommProgress> comms;
  std::vector<CollSample> colls;
  std::vector<P2pSample> p2p;
  std::vector<ProbeSample> probes;
};

struct CommInfo {
  uint64_t comm = 0;
  std::vector<int32_t> ranks;  // world ranks, in communicator order
};

struct Ping {
  uint64_t number = 0;
  int64_t sent_ns = 0;     // the prober's clock
  int64_t replied_ns = 0;  // pong: the responder's clock
  int32_t from = -1;
  uint32_t padding = 0;  // bytes of payload after the header (probes of bandwidth)
};

std::string encode(const Hello& m);
bool decode(const char* data, size_t size, Hello* m);
std::string encode(const Heartbeat& m);
bool decode(const char* data, size_t size, Heartbeat* m);
std::string encode(const CommInfo& m);
bool decode(const char* data, size_t size, CommInfo* m);
std::string encode(const Ping& m);
bool decode(const char* data, size_t size, Ping* m);

}  // namespace strata::fault::oob
