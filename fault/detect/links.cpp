#include "fault/detect/links.hpp"

#include "fault/detect/diagnosis.hpp"
#include "fault/stats/robust.hpp"

#include <algorithm>

namespace strata::fault {
namespace {

constexpr size_t kMinReference = 16;  // samples in the reference before links are scored
constexpr size_t kMaxHalves = 1 << 16;
constexpr int kRecheckEvery = 4;  // samples between checks of a held-back alarm: the CUSUM's shortest run

}  // namespace

LinkDetector::LinkDetector(int world_size, SlowParams params)
    : size_(world_size),
      params_(params),
      traffic_adjacency_(static_cast<size_t>(world_size)),
      probe_adjacency_(static_cast<size_t>(world_size)) {
  probe_reference_.window = stats::Window(256);
}

const stats::Robust& LinkDetector::Reference::current() {
  constexpr size_t kRefresh = 32;
  if (since_refresh == 0 || since_refresh >= kRefresh) {
    robust = window.robust();
    since_refresh = 0;
  }
  ++since_refresh;
  return robust;
}

LinkDetector::Link& LinkDetector::link_of(LinkMap& map,
                                          std::vector<std::vector<std::pair<std::pair<int, int>, Link*>>>& adjacency,
                                          std::pair<int, int> key) {
  auto it = map.find(key);
  if (it != map.end()) return it->second;
  Link& link = map[key];
  link.cusum = stats::Cusum(params_.cusum);
  adjacency[static_cast<size_t>(key.first)].emplace_back(key, &link);
  adjacency[static_cast<size_t>(key.second)].emplace_back(key, &link);
  return link;
}

double LinkDetector::neighbour_level(const std::vector<std::vector<std::pair<std::pair<int, int>, Link*>>>& adjacency,
                                     std::pair<int, int> key) const {
  const auto pair = std::minmax(key.first, key.second);
  double level = 0;
  std::vector<double> levels;
  for (int end : {key.first, key.second}) {
    levels.clear();
    for (const auto& [k, link] : adjacency[static_cast<size_t>(end)]) {
      if (std::minmax(k.first, k.second) == pair || link->current.size() < 4) continue;
      levels.push_back(link->level);
    }
    if (!levels.empty()) level = std::max(level, stats::median(levels));
  }
  return level;
}

void LinkDetector::add(int rank, const oob::P2pSample& s, int64_t now_ns) {
  if (s.peer < 0 || s.peer >= size_ || rank < 0 || rank >= size_ || s.peer == rank || s.ordinal == 0) return;
  const bool send = s.role == 0;
  const int src = send ? rank : s.peer;
  const int dst = send ? s.peer : rank;
  const auto key = std::make_tuple(src, dst, s.ordinal);
  auto it = halves_.find(key);
  if (it == halves_.end()) {
    if (halves_.size() >= kMaxHalves) return;
    it = halves_.emplace(key, Half{}).first;
    it->second.added_ns = now_ns;
  }
  Half& h = it->second;
  if (send) {
    h.have_send = true;
    h.send_ready = s.ready_ns;
    h.bytes = s.bytes;
  } else {
    h.have_recv = true;
    h.recv_ready = s.ready_ns;
    h.recv_end = s.end_ns;
    if (h.bytes == 0) h.bytes = s.bytes;
  }
  if (!h.have_send || !h.have_recv) return;
  const int64_t latency = std::max<int64_t>(0, h.recv_end - std::max(h.send_ready, h.recv_ready));
  const uint64_t bytes = h.bytes;
  const int64_t t = h.recv_end;
  halves_.erase(it);
  ++paired_;
  const auto link_key = std::make_pair(src, dst);
  Link& link = link_of(traffic_, traffic_adjacency_, link_key);
  link.last_ns = std::max(link.last_ns, now_ns);
  score(link, link_key, false, static_cast<double>(latency), reference_[static_cast<size_t>(size_class(bytes))],
        s.ordinal, t, "messages");
}

void LinkDetector::add_probe(int rank, const oob::ProbeSample& s) {
  if (s.peer < 0 || s.peer >= size_ || rank < 0 || rank >= size_ || s.peer == rank || s.rtt_ns < 0) return;
  const auto key = std::minmax(rank, s.peer);
  Link& link = link_of(probes_, probe_adjacency_, key);
  link.last_ns = s.t_ns;
  score(link, key, true, static_cast<double>(s.rtt_ns), probe_reference_, s.number, s.t_ns, "probes");
}

void LinkDetector::score(Link& link, std::pair<int, int> key, bool probe, double value, Reference& reference,
                         uint64_t tag, int64_t t_ns, const char* what) {
  const bool enough = reference.window.size() >= kMinReference;
  stats::Robust ref;
  double min_shift = params_.min_shift_ns;
  if (enough) {
    ref = reference.current();
    link.late.add(t_ns, value - ref.median);
    ref.median = std::max(ref.median, neighbour_level(probe ? probe_adjacency_ : traffic_adjacency_, key));
    min_shift = std::max(min_shift, params_.rel_shift * ref.median);
  }
  reference.window.add(value);
  link.recent.add(value);
  link.current.add(value);
  link.level = link.current.median();
  if (!enough) return;
  const double z = stats::robust_z(value, ref, min_shift);
  const bool was_zero = link.cusum.value() == 0;
  const bool alarm = link.cusum.update(z, tag);
  const auto undirected = std::minmax(key.first, key.second);
  if (link.cusum.value() == 0) {
    unflag(probe ? probes_ : traffic_, key);
    link.run_sum = 0;
    link.run_count = 0;
    return;
  }
  if (was_zero) {
    link.onset_ns = t_ns;
    link.run_sum = 0;
    link.run_count = 0;
    link.recheck_at = 0;
  }
  link.run_sum += value;
  ++link.run_count;
  if (!alarm || link.flagged || link.run_count < link.recheck_at) return;
  const stats::TimedWindow::Span late = link.late.between(link.onset_ns, t_ns);
  if (machine_wide(probe, key, late, min_shift)) {
    // Held back. A check scans every link: not at each of its samples.
    link.recheck_at = link.run_count + kRecheckEvery;
    return;
  }
  link.flagged = true;
  if (reported_[undirected]) return;  // the other direction said it already
  reported_[undirected] = true;
  Diagnosis d;
  d.fault_class = FaultClass::comm_slow;
  d.detector = probe ? "probe" : "link";
  d.links = {undirected};
  for (int r : {undirected.first, undirected.second}) {
    if (static_cast<size_t>(r) < hosts_.size()) d.hosts.push_back(hosts_[static_cast<size_t>(r)]);
  }
  std::sort(d.hosts.begin(), d.hosts.end());
  d.hosts.erase(std::unique(d.hosts.begin(), d.hosts.end()), d.hosts.end());
  d.op = probe ? "probe" : "p2p";
  d.seq = tag;
  d.onset_seq = link.cusum.run_start();
  d.detect_seq = tag;
  d.onset_ns = link.onset_ns;
  const std::string dir = probe ? std::to_string(key.first) + "<->" + std::to_string(key.second)
                                : std::to_string(key.first) + "->" + std::to_string(key.second);
  d.message =
      "link " + std::to_string(undirected.first) + "-" + std::to_string(undirected.second) + " slow: " + what + " " +
      dir + (probe ? " round trip " : " take ") + duration_text(static_cast<int64_t>(link.run_sum / link.run_count)) +
      " (mean of " + std::to_string(link.run_count) + " since #" + std::to_string(d.onset_seq) + ") against " +
      duration_text(static_cast<int64_t>(ref.median)) + " for its ends' other links and all " +
      (probe ? "probed links" : "links") + " (min shift " + duration_text(static_cast<int64_t>(min_shift)) + ")";
  candidates_.push_back({std::move(d), key, link.run_sum / link.run_count, probe, 0, late, min_shift});
}

bool LinkDetector::machine_wide(bool probe, std::pair<int, int> key, const stats::TimedWindow::Span& own,
                                double min_shift) const {
  const size_t enough = std::max<size_t>(2, own.count / 2);  // a level, not one hiccup
  double level = 0;
  for (const auto& [k, other] : probe ? probes_ : traffic_) {
    const bool shares_rank =
        k.first == key.first || k.first == key.second || k.second == key.first || k.second == key.second;
    if (shares_rank || other.cusum.alarmed()) continue;
    const stats::TimedWindow::Span span = other.late.between(own.first_ns, own.last_ns);
    if (span.count >= enough) level = std::max(level, span.mean());
  }
  return own.mean() - level <= min_shift;
}

void LinkDetector::unflag(LinkMap& map, std::pair<int, int> key) {
  auto it = map.find(key);
  if (it == map.end() || !it->second.flagged) return;
  it->second.flagged = false;
  auto reverse = map.find({key.second, key.first});  // none for probes (undirected)
  if (reverse == map.end() || !reverse->second.flagged) reported_.erase(std::minmax(key.first, key.second));
}

bool LinkDetector::explained_by_neighbour(const Candidate& c) const {
  if (c.probe) return false;
  for (const auto& [k, other] : traffic_) {
    if (k.first != c.key.second || k.second == c.key.first || other.cusum.value() <= 0 || other.run_count == 0) {
      continue;
    }
    // Over the candidate's period where the other link has samples in it:
    // runs' means start wherever noise happened to start them.
    const stats::TimedWindow::Span span = other.late.between(c.late.first_ns, c.late.last_ns);
    const bool as_slow = span.count > 0 ? span.mean() >= params_.dominance * c.late.mean()
                                        : other.run_sum / other.run_count >= params_.dominance * c.mean;
    if (as_slow) return true;
  }
  return false;
}

void LinkDetector::expire(int64_t older_than_ns) {
  for (auto it = halves_.begin(); it != halves_.end();) {
    it = it->second.added_ns < older_than_ns ? halves_.erase(it) : std::next(it);
  }
}

std::vector<Diagnosis> LinkDetector::take_alarms() {
  std::vector<Diagnosis> out;
  size_t keep = 0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    Candidate& c = candidates_[i];
    if (c.ticks++ == 0) {  // one more tick for the neighbours' samples to come in
      if (keep != i) candidates_[keep] = std::move(c);
      ++keep;
      continue;
    }
    if (explained_by_neighbour(c)) continue;  // stays flagged, never reported
    // Again with the other links' samples of the period that came in since.
    if (machine_wide(c.probe, c.key, c.late, c.min_shift)) {
      // Held back, as in score(); the other direction too if its alarm was
      // silenced by this one.
      LinkMap& map = c.probe ? probes_ : traffic_;
      unflag(map, {c.key.second, c.key.first});
      unflag(map, c.key);
      continue;
    }
    out.push_back(std::move(c.d));
  }
  candidates_.resize(keep);
  return out;
}

std::vector<std::pair<int, int>> LinkDetector::uncovered(int64_t now_ns, int64_t horizon_ns) const {
  std::vector<std::pair<int, int>> out;
  auto covered = [&](int a, int b) {
    auto it = traffic_.find({a, b});
    return it != traffic_.end() && it->second.last_ns >= now_ns - horizon_ns;
  };
  for (int a = 0; a < size_; ++a) {
    for (int b = a + 1; b < size_; ++b) {
      if (!covered(a, b) && !covered(b, a)) out.emplace_back(a, b);
    }
  }
  return out;
}

std::vector<LinkDetector::LinkStat> LinkDetector::matrix() const {
  std::vector<LinkStat> out;
  for (const auto& [key, link] : traffic_) {
    out.push_back({key.first, key.second, link.recent.median(), link.recent.size(), false, link.flagged});
  }
  for (const auto& [key, link] : probes_) {
    out.push_back({key.first, key.second, link.recent.median(), link.recent.size(), true, link.flagged});
  }
  return out;
}

}  // namespace strata::fault
