// Slow links (comm slow): a rank-to-rank delivery-latency matrix from the
// recorded point-to-point traffic, plus probes over the out-of-band
// channel for links the traffic does not cover.
//
// A message from s to d is paired by (s, d, ordinal): its delivery latency
// is the receive's completion minus the later of the send's entry and the
// receive's readiness (posted and waited for). Taking the later of the two
// removes the time either side spent arriving late, so a late rank does
// not make its links look slow. Each latency is scored against the recent
// latencies of every link in the same size class (median/MAD, robust_z)
// and feeds the directed link's CUSUM. The reference level is the larger of
// that median and the current level (median of the last 16) of the other
// links at either end: a rank that is slow to answer on all its links (a
// busy or descheduled process, the coordinator's own agent) raises its own
// baseline, so only a link slower than both of its ends' other links
// counts. Probe round trips are scored the
// same way against the other probed links.
//
// A call that both sends and receives (MPI_Sendrecv) ends when its slower
// half does, so a slow link r->y also delays the messages r receives in
// the same calls: an alarm on x->r waits one tick and is dropped when a
// link r->y (y != x) in a run was, over the same period, at least
// `dominance` as late (lateness: a sample's excess over its size class's
// median).
//
// A machine that slows down as a whole (CPU oversubscription: processes
// descheduled for a scheduler quantum or several) delays messages on many
// links at once, a few at a time; the references above are medians of the
// past and follow such a burst too late, so a link that happens to take
// several late samples in a row alarms. The guard is contemporaneous: a
// fault on a link delays no message between two other ranks (a sendrecv
// passes it on only to links into the link's own ends), so when a link
// sharing no rank with the alarmed one was, over the same period, late by
// at least the alarmed link's mean lateness less the minimum shift (the
// scores' own tolerance), the cause is common to the machine. An alarm
// must pass this check when raised and again a tick later, when the period's
// other samples are in; one that fails is held back, not dropped, and
// checked again every few samples while the link stays alarmed, so a slow
// link is reported once it stands out. Links alarmed themselves do not
// count as the machine's: two slow links at once are both reported.
// Neither a spread over ticks (under load such bursts last seconds) nor a
// floor at the scheduler quantum (the delays grow with the load: 16 to
// 100 ms were seen) separates the two; and ranks blocked behind a hung
// rank complete no messages, so a hang adds no samples to hold back.
#pragma once

#include "fault/detect/slow_params.hpp"
#include "fault/oob/messages.hpp"
#include "fault/op_kind.hpp"
#include "fault/stats/cusum.hpp"
#include "fault/stats/window.hpp"

#include <strata/fault.hpp>

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace strata::fault {

class LinkDetector {
 public:
  LinkDetector(int world_size, SlowParams params);

  // A half of a message reported by world rank `rank` (times already on the
  // coordinator's clock); `now_ns` ages unpaired halves.
  void add(int rank, const oob::P2pSample& s, int64_t now_ns);
  // A probe round trip `rank` measured to s.peer.
  void add_probe(int rank, const oob::ProbeSample& s);
  // Drops halves waiting for their other half since before `older_than_ns`.
  void expire(int64_t older_than_ns);
  std::vector<Diagnosis> take_alarms();
  void set_hosts(std::vector<std::string> hosts) { hosts_ = std::move(hosts); }

  // Links (a < b) with no paired message in the `horizon_ns` before `now_ns`.
  std::vector<std::pair<int, int>> uncovered(int64_t now_ns, int64_t horizon_ns) const;

  struct LinkStat {
    int src = 0, dst = 0;  // probes: src < dst, undirected
    double median_ns = 0;  // recent latencies (probes: round trips)
    size_t samples = 0;
    bool probe = false;
    bool flagged = false;
  };
  std::vector<LinkStat> matrix() const;
  uint64_t paired() const { return paired_; }

 private:
  struct Half {
    bool have_send = false, have_recv = false;
    int64_t send_ready = 0, recv_ready = 0, recv_end = 0;
    uint64_t bytes = 0;
    int64_t added_ns = 0;
  };
  struct Link {
    stats::Cusum cusum;
    bool flagged = false;
    int64_t onset_ns = 0;
    double run_sum = 0;
    int run_count = 0;
    int recheck_at = 0;  // run_count at which an alarm held back by machine_wide is checked again
    stats::Window recent{64};
    stats::Window current{16};
    double level = 0;             // median of `current`
    stats::TimedWindow late{16};  // excess of the last samples over their size class's median, at their times
    int64_t last_ns = 0;
  };
  using LinkMap = std::map<std::pair<int, int>, Link>;
  Link& link_of(LinkMap& map, std::vector<std::vector<std::pair<std::pair<int, int>, Link*>>>& adjacency,
                std::pair<int, int> key);
  double neighbour_level(const std::vector<std::vector<std::pair<std::pair<int, int>, Link*>>>& adjacency,
                         std::pair<int, int> key) const;
  // The cross-link references, with their median/MAD recomputed every
  // kRefresh samples (not per sample: a message rate of 10^5/s must not
  // cost the coordinator a 512-value median each).
  struct Reference {
    stats::Window window{512};
    stats::Robust robust;
    size_t since_refresh = 0;
    const stats::Robust& current();
  };
  void score(Link& link, std::pair<int, int> key, bool probe, double value, Reference& reference, uint64_t tag,
             int64_t t_ns, const char* what);

  int size_;
  SlowParams params_;
  std::vector<std::vector<std::pair<std::pair<int, int>, Link*>>> traffic_adjacency_, probe_adjacency_;
  std::map<std::tuple<int, int, uint64_t>, Half> halves_;
  std::map<std::pair<int, int>, Link> traffic_;  // directed
  std::map<std::pair<int, int>, Link> probes_;   // undirected, a < b
  std::array<Reference, kSizeClasses> reference_;
  Reference probe_reference_;
  std::map<std::pair<int, int>, bool> reported_;  // undirected links already reported in this episode
  struct Candidate {
    Diagnosis d;
    std::pair<int, int> key;  // directed
    double mean = 0;
    bool probe = false;
    int ticks = 0;
    stats::TimedWindow::Span late;  // the link's lateness over its run, for machine_wide
    double min_shift = 0;
  };
  // Ends the episode of a direction; the undirected link's ends with the
  // episode of its last flagged direction.
  void unflag(LinkMap& map, std::pair<int, int> key);
  bool explained_by_neighbour(const Candidate& c) const;
  // True when a link sharing no rank with `key` (and not alarmed itself) was
  // late by at least `own`'s mean less `min_shift` over `own`'s period.
  bool machine_wide(bool probe, std::pair<int, int> key, const stats::TimedWindow::Span& own, double min_shift) const;
  std::vector<Candidate> candidates_;
  std::vector<std::string> hosts_;
  uint64_t paired_ = 0;
};

}  // namespace strata::fault
