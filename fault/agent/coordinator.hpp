// The coordinator (the lowest live rank's agent): gathers every rank's
// heartbeats and samples, keeps each rank's view, and runs the detectors:
// hang (a suspect confirmed for two ticks), death (a connection closed
// without MPI_Finalize), silence (no heartbeat for the timeout), arrival
// skew, slow links and probes. It decides; the agent does the talking.
#pragma once

#include "fault/detect/hang.hpp"
#include "fault/detect/links.hpp"
#include "fault/detect/skew.hpp"
#include "fault/oob/messages.hpp"
#include "fault/settings.hpp"

#include <strata/fault.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace strata::fault {

class Coordinator {
 public:
  Coordinator(const Settings& settings, int size, int me, std::vector<std::string> hosts, std::vector<std::string> gpus,
              int64_t now_ns);

  void on_heartbeat(const oob::Heartbeat& hb, int64_t now_ns);
  void on_comm_info(const oob::CommInfo& info);
  // `rank`'s connection closed.
  void on_lost(int rank, int64_t now_ns);
  // A death diagnosed at `ns` by the coordinator this one replaces: the
  // deaths that follow it are the job's teardown here too.
  void note_earlier_death(int64_t ns) {
    if (first_death_ns_ == 0) first_death_ns_ = ns;
  }
  // `rank`'s clock minus the coordinator's.
  void set_offset(int rank, int64_t offset_ns);

  struct Actions {
    std::vector<Diagnosis> diagnoses;
    std::vector<std::pair<int, std::vector<int>>> probes;  // rank -> peers it should probe
  };
  Actions tick(int64_t now_ns);

  // Every rank has sent its final heartbeat, or is dead.
  bool all_final() const;
  bool final(int rank) const { return ranks_[static_cast<size_t>(rank)].final; }
  bool lost(int rank) const { return ranks_[static_cast<size_t>(rank)].lost; }
  std::vector<LinkDetector::LinkStat> links() const { return links_.matrix(); }
  uint64_t collectives_evaluated() const { return skew_.evaluated(); }
  uint64_t messages_paired() const { return links_.paired(); }

  // The views the hang detector sees now (also for tests).
  HangInput views(int64_t now_ns) const;

 private:
  struct RankInfo {
    bool heard = false;
    bool final = false;
    bool lost = false;
    bool silence_reported = false;
    int64_t offset_ns = 0;
    int64_t heard_ns = 0;  // when the last heartbeat arrived (coordinator clock)
    int64_t lost_ns = 0;   // when its connection closed
    oob::Heartbeat last;   // the latest heartbeat (samples stripped)
  };
  Diagnosis death(int rank, int64_t now_ns) const;
  Diagnosis silence(int rank, int64_t now_ns) const;
  // One per detector, in tick()'s order.
  void detect_deaths(int64_t now_ns, std::vector<Diagnosis>* out);
  void detect_silences(int64_t now_ns, std::vector<Diagnosis>* out);
  void detect_hang(int64_t now_ns, std::vector<Diagnosis>* out);
  void take_slow_alarms(int64_t now_ns, std::vector<Diagnosis>* out);  // arrival skew, slow links
  void plan_probes(int64_t now_ns, std::vector<std::pair<int, std::vector<int>>>* out);

  Settings settings_;
  int size_;
  int me_;
  std::vector<std::string> hosts_;
  std::vector<std::string> gpus_;
  std::vector<RankInfo> ranks_;
  std::map<uint64_t, std::vector<int32_t>> members_;
  SkewDetector skew_;
  LinkDetector links_;
  int64_t start_ns_;
  int64_t next_probe_ns_;
  size_t probe_cursor_ = 0;
  // Hang confirmation: the suspect (rank, op entry) seen at the last tick.
  int suspect_rank_ = -1;
  int64_t suspect_enq_ = 0;
  int64_t suspect_since_ = 0;
  std::set<std::pair<int, int64_t>> hangs_reported_;
  std::set<int> dead_reported_;
  int64_t first_death_ns_ = 0;  // when the first death was diagnosed (0: none)
};

}  // namespace strata::fault
