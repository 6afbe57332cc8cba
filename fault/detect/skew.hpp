// Arrival skew: which rank reaches the collectives late because it
// computes longer than its peers (non-comm slow). For each collective (#N
// on comm C) whose members all reported, a member's lateness is the time it
// spent outside communication since its previous collective (its compute
// time, Record::compute_ns) minus the members' median of it. A rank that
// arrives late because its point-to-point traffic was slow is not late by
// this measure (that is the link detector's business); arrival times are
// only quoted in the message. Lateness is scored against the members'
// median/MAD with robust_z (min shift: max(STRATA_FAULT_SLOW_MIN_US, rel x
// median compute time)) and each rank's scores feed its CUSUM. Two or three
// members are too few for a spread (of two, each is half their difference
// from the median): each is measured against the median of the others and
// scored on the minimum shift alone. An alarm
// names the rank, the first late collective of the run (onset) and the one
// that raised it.
#pragma once

#include "fault/detect/slow_params.hpp"
#include "fault/oob/messages.hpp"
#include "fault/stats/cusum.hpp"
#include "fault/stats/window.hpp"

#include <strata/fault.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace strata::fault {

class SkewDetector {
 public:
  SkewDetector(int world_size, SlowParams params);

  void set_members(uint64_t comm, std::vector<int32_t> world_ranks);
  // `s` from world rank `rank`, its times already on the coordinator's clock.
  void add(int rank, const oob::CollSample& s);
  // Alarms raised since the last call.
  std::vector<Diagnosis> take_alarms();
  void set_hosts(std::vector<std::string> hosts) { hosts_ = std::move(hosts); }
  // Collectives evaluated so far.
  uint64_t evaluated() const { return evaluated_; }

 private:
  struct Pending {
    uint8_t kind = 0;
    uint64_t bytes = 0;
    std::vector<int64_t> start;  // by member position; INT64_MIN: not yet
    std::vector<int64_t> compute;
    size_t have = 0;
  };
  struct RankState {
    stats::Cusum cusum;
    bool flagged = false;
    int64_t onset_ns = 0;
    double run_sum = 0;      // lateness over the current run
    double run_arrival = 0;  // arrival after the median, over the run
    int run_count = 0;
  };
  // A member whose CUSUM alarmed on this collective, and its mean lateness
  // over its current run.
  struct Alarm {
    int rank;
    double mean_late;
  };
  // One evaluated collective, as its diagnoses describe it.
  struct Evaluation {
    uint64_t comm = 0, seq = 0;
    uint8_t kind = 0;
    double median_compute = 0, spread = 0, min_shift = 0;
  };
  void evaluate(uint64_t comm, uint64_t seq, Pending& p);
  // Feeds each member's lateness to its rank's CUSUM; the new alarms.
  std::vector<Alarm> update_ranks(const Pending& p, const std::vector<double>& lateness, double median_arrival,
                                  const stats::Robust& ref, const Evaluation& e);
  // Flags every alarmed rank; reports those near the worst (the others wait for it).
  void raise(const std::vector<Alarm>& raised, const Evaluation& e);
  Diagnosis diagnosis_of(const Alarm& a, const RankState& r, const Evaluation& e) const;
  const std::vector<int32_t>* members(uint64_t comm) const;

  int size_;
  SlowParams params_;
  std::map<uint64_t, std::vector<int32_t>> members_;
  std::map<std::pair<uint64_t, uint64_t>, Pending> pending_;
  std::map<uint64_t, std::vector<std::pair<int, oob::CollSample>>> waiting_;  // comms whose members are unknown yet
  std::vector<RankState> ranks_;
  std::vector<Diagnosis> alarms_;
  std::vector<std::string> hosts_;
  uint64_t evaluated_ = 0;
};

}  // namespace strata::fault
