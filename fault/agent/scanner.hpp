// The agent's reader of the ring: each tick it looks at the records
// written since the last tick and at those still active, and turns what
// finished into learned durations and the samples the coordinator's
// detectors need; it also says which blocking operation is in progress
// (the hang candidate) and which non-blocking ones are pending.
#pragma once

#include "fault/oob/messages.hpp"
#include "fault/recorder/device_times.hpp"
#include "fault/recorder/record.hpp"
#include "fault/settings.hpp"
#include "fault/stats/window.hpp"

#include <cstdint>
#include <vector>

namespace strata::fault {

struct ProcessState;

class Scanner {
 public:
  explicit Scanner(const Settings& settings) : settings_(settings) {}

  // Reads the ring; adds samples to `out` (colls, p2p) and fills its state
  // fields (flags, current, threshold, last, pending, ops_done).
  void scan(ProcessState& p, int64_t now_ns, oob::Heartbeat* out);
  uint64_t dropped_samples() const { return dropped_; }
  // The stride of recorded collectives on a stream (ProcessState::
  // stream_stride) for a tick in which `collectives` were entered: the
  // smallest power of two that brings them within a heartbeat's budget,
  // the same rule by which the heartbeat thins what it ships.
  static uint64_t stream_stride(uint64_t collectives);

 private:
  void finished(ProcessState& p, const Record& r, oob::Heartbeat* out);
  oob::OpBrief brief(const ProcessState& p, const Record& r) const;
  int64_t threshold_ns(const Record& r) const;
  void resolve_device(ProcessState& p);

  Settings settings_;
  uint64_t next_ = 0;                // the next new index to look at
  std::vector<uint64_t> active_;     // indices seen active
  std::vector<PendingMarks> marks_;  // device timer marks to resolve
  stats::TypicalDurations typical_;
  uint64_t ops_done_ = 0;
  bool has_last_ = false;
  Record last_;
  uint64_t dropped_ = 0;
};

}  // namespace strata::fault
