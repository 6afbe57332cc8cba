#include "fault/detect/skew.hpp"

#include "fault/detect/diagnosis.hpp"
#include "fault/detect/rank_view.hpp"
#include "fault/op_kind.hpp"
#include "fault/stats/robust.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

namespace strata::fault {
namespace {

constexpr size_t kMaxPending = 4096;    // collectives waiting for members' samples
constexpr size_t kFewestForSpread = 4;  // members needed to estimate their spread (median/MAD)

}  // namespace

SkewDetector::SkewDetector(int world_size, SlowParams params)
    : size_(world_size), params_(params), ranks_(static_cast<size_t>(world_size)) {
  for (RankState& r : ranks_) r.cusum = stats::Cusum(params.cusum);
}

void SkewDetector::set_members(uint64_t comm, std::vector<int32_t> world_ranks) {
  if (comm == 0 || members_.count(comm)) return;
  members_[comm] = std::move(world_ranks);
  auto it = waiting_.find(comm);
  if (it == waiting_.end()) return;
  auto samples = std::move(it->second);
  waiting_.erase(it);
  for (const auto& s : samples) add(s.first, s.second);
}

const std::vector<int32_t>* SkewDetector::members(uint64_t comm) const {
  auto it = members_.find(comm);
  return it == members_.end() ? nullptr : &it->second;
}

void SkewDetector::add(int rank, const oob::CollSample& s) {
  size_t n = static_cast<size_t>(size_);
  size_t position = static_cast<size_t>(rank);
  if (s.comm != 0) {
    const std::vector<int32_t>* m = members(s.comm);
    if (m == nullptr) {
      auto& w = waiting_[s.comm];
      if (w.size() < kMaxPending) w.emplace_back(rank, s);
      return;
    }
    n = m->size();
    auto it = std::find(m->begin(), m->end(), rank);
    if (it == m->end()) return;
    position = static_cast<size_t>(it - m->begin());
  }
  if (n < 2 || position >= n) return;  // one rank: nobody to compare with
  const auto key = std::make_pair(s.comm, s.seq);
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());  // the oldest never completed
    Pending p;
    p.kind = s.kind;
    p.bytes = s.bytes;
    p.start.assign(n, INT64_MIN);
    p.compute.assign(n, 0);
    it = pending_.emplace(key, std::move(p)).first;
  }
  Pending& p = it->second;
  if (p.start[position] != INT64_MIN) return;
  p.start[position] = s.start_ns;
  p.compute[position] = s.compute_ns;
  if (++p.have == n) {
    evaluate(s.comm, s.seq, p);
    pending_.erase(it);
  }
}

namespace {

// Each member's lateness: its compute time before the collective against
// the members' median (with the spread, ref, from four members up).
std::vector<double> lateness_of(const std::vector<double>& compute, double median_compute, stats::Robust* ref) {
  const size_t n = compute.size();
  std::vector<double> lateness(n);
  if (n >= kFewestForSpread) {
    for (size_t i = 0; i < n; ++i) lateness[i] = compute[i] - median_compute;
    *ref = stats::robust(lateness);
    return lateness;
  }
  // Two or three members tell no spread apart from a slow one (of two,
  // each is half the difference from the median): each is measured
  // against the median of the others, scored on the minimum shift alone.
  std::vector<double> others;
  for (size_t i = 0; i < n; ++i) {
    others.clear();
    for (size_t j = 0; j < n; ++j) {
      if (j != i) others.push_back(compute[j]);
    }
    lateness[i] = compute[i] - (others.empty() ? compute[i] : stats::median(others));
  }
  return lateness;
}

}  // namespace

void SkewDetector::evaluate(uint64_t comm, uint64_t seq, Pending& p) {
  ++evaluated_;
  std::vector<double> compute(p.compute.begin(), p.compute.end());
  Evaluation e;
  e.comm = comm;
  e.seq = seq;
  e.kind = p.kind;
  e.median_compute = stats::median(compute);
  stats::Robust ref;
  const std::vector<double> lateness = lateness_of(compute, e.median_compute, &ref);
  e.spread = ref.sigma();
  e.min_shift = std::max(params_.min_shift_ns, params_.rel_shift * e.median_compute);
  std::vector<double> arrival(p.start.begin(), p.start.end());
  const std::vector<Alarm> raised = update_ranks(p, lateness, stats::median(arrival), ref, e);
  if (!raised.empty()) raise(raised, e);
}

std::vector<SkewDetector::Alarm> SkewDetector::update_ranks(const Pending& p, const std::vector<double>& lateness,
                                                            double median_arrival, const stats::Robust& ref,
                                                            const Evaluation& e) {
  std::vector<Alarm> raised;
  const std::vector<int32_t>* m = e.comm == 0 ? nullptr : members(e.comm);
  for (size_t i = 0; i < lateness.size(); ++i) {
    const int rank = m == nullptr ? static_cast<int>(i) : (*m)[i];
    if (rank < 0 || rank >= size_) continue;
    RankState& r = ranks_[static_cast<size_t>(rank)];
    const double z = stats::robust_z(lateness[i], ref, e.min_shift);
    const bool was_zero = r.cusum.value() == 0;
    const bool alarm = r.cusum.update(z, e.seq);
    if (r.cusum.value() == 0) {
      r.flagged = false;  // the episode is over
      r.run_sum = 0;
      r.run_count = 0;
      continue;
    }
    if (was_zero) {
      r.onset_ns = p.start[i];
      r.run_sum = 0;
      r.run_arrival = 0;
      r.run_count = 0;
    }
    r.run_sum += lateness[i];
    r.run_arrival += static_cast<double>(p.start[i]) - median_arrival;
    ++r.run_count;
    if (alarm && !r.flagged) raised.push_back({rank, r.run_sum / r.run_count});
  }
  return raised;
}

void SkewDetector::raise(const std::vector<Alarm>& raised, const Evaluation& e) {
  double worst = 0;
  for (const Alarm& a : raised) worst = std::max(worst, a.mean_late);
  for (const Alarm& a : raised) {
    RankState& r = ranks_[static_cast<size_t>(a.rank)];
    r.flagged = true;  // the weaker ones too: they wait for the worst
    if (a.mean_late >= params_.dominance * worst) alarms_.push_back(diagnosis_of(a, r, e));
  }
}

Diagnosis SkewDetector::diagnosis_of(const Alarm& a, const RankState& r, const Evaluation& e) const {
  Diagnosis d;
  d.fault_class = FaultClass::noncomm_slow;
  d.detector = "skew";
  d.ranks = {a.rank};
  if (static_cast<size_t>(a.rank) < hosts_.size()) d.hosts = {hosts_[static_cast<size_t>(a.rank)]};
  d.op = to_string(static_cast<OpKind>(e.kind));
  d.comm = comm_text(e.comm);
  d.seq = e.seq;
  d.onset_seq = r.cusum.run_start();
  d.detect_seq = e.seq;
  d.onset_ns = r.onset_ns;
  d.message = "rank " + std::to_string(a.rank) + " computes " + duration_text(static_cast<int64_t>(a.mean_late)) +
              " longer than its peers before each " + d.op + " on comm " + d.comm + " (mean of " +
              std::to_string(r.run_count) + " since #" + std::to_string(d.onset_seq) + "; it arrives " +
              duration_text(static_cast<int64_t>(r.run_arrival / r.run_count)) +
              " after the median arrival; peers' median compute " +
              duration_text(static_cast<int64_t>(e.median_compute)) + ", spread " +
              duration_text(static_cast<int64_t>(e.spread)) + ", min shift " +
              duration_text(static_cast<int64_t>(e.min_shift)) + ")";
  return d;
}

std::vector<Diagnosis> SkewDetector::take_alarms() {
  std::vector<Diagnosis> out;
  out.swap(alarms_);
  return out;
}

}  // namespace strata::fault
