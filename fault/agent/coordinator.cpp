#include "fault/agent/coordinator.hpp"

#include "base/log.hpp"
#include "fault/detect/diagnosis.hpp"

#include <algorithm>

namespace strata::fault {
namespace {

constexpr size_t kProbesPerPeriod = 64;
constexpr int64_t kHalfLifetimeNs = 10000000000;  // unpaired message halves are dropped after this

}  // namespace

const char* to_string(Action a) {
  switch (a) {
    case Action::report: return "report";
    case Action::abort: return "abort";
    case Action::exclude: return "exclude";
  }
  return "?";
}

Coordinator::Coordinator(const Settings& settings, int size, int me, std::vector<std::string> hosts,
                         std::vector<std::string> gpus, int64_t now_ns)
    : settings_(settings),
      size_(size),
      me_(me),
      hosts_(std::move(hosts)),
      gpus_(std::move(gpus)),
      ranks_(static_cast<size_t>(size)),
      skew_(size, settings.slow),
      links_(size, settings.slow),
      start_ns_(now_ns),
      next_probe_ns_(now_ns + settings.probe_period_ns) {
  skew_.set_hosts(hosts_);
  links_.set_hosts(hosts_);
}

void Coordinator::set_offset(int rank, int64_t offset_ns) {
  if (rank >= 0 && rank < size_) ranks_[static_cast<size_t>(rank)].offset_ns = offset_ns;
}

void Coordinator::on_comm_info(const oob::CommInfo& info) {
  if (info.comm == 0 || members_.count(info.comm)) return;
  members_[info.comm] = info.ranks;
  skew_.set_members(info.comm, info.ranks);
}

void Coordinator::on_heartbeat(const oob::Heartbeat& hb, int64_t now_ns) {
  if (hb.rank < 0 || hb.rank >= size_) return;
  RankInfo& r = ranks_[static_cast<size_t>(hb.rank)];
  r.heard = true;
  r.heard_ns = now_ns;
  r.silence_reported = false;
  if (hb.flags & oob::Heartbeat::kFinal) r.final = true;
  const int64_t off = r.offset_ns;
  for (oob::CollSample s : hb.colls) {
    s.start_ns -= off;
    s.end_ns -= off;
    skew_.add(hb.rank, s);
  }
  for (oob::P2pSample s : hb.p2p) {
    s.ready_ns -= off;
    s.end_ns -= off;
    links_.add(hb.rank, s, now_ns);
  }
  for (oob::ProbeSample s : hb.probes) {
    s.t_ns -= off;
    links_.add_probe(hb.rank, s);
  }
  r.last = hb;
  r.last.colls.clear();
  r.last.p2p.clear();
  r.last.probes.clear();
}

void Coordinator::on_lost(int rank, int64_t now_ns) {
  if (rank < 0 || rank >= size_) return;
  RankInfo& info = ranks_[static_cast<size_t>(rank)];
  if (!info.lost) info.lost_ns = now_ns;
  info.lost = true;
  if (!info.heard) info.heard_ns = now_ns;
}

bool Coordinator::all_final() const {
  for (int r = 0; r < size_; ++r) {
    const RankInfo& i = ranks_[static_cast<size_t>(r)];
    if (!i.final && !i.lost) return false;
  }
  return true;
}

HangInput Coordinator::views(int64_t now_ns) const {
  HangInput in;
  in.members = members_;
  in.ranks.resize(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const RankInfo& info = ranks_[static_cast<size_t>(r)];
    RankView& v = in.ranks[static_cast<size_t>(r)];
    v.rank = r;
    v.host = static_cast<size_t>(r) < hosts_.size() ? hosts_[static_cast<size_t>(r)] : std::string();
    v.gpu = static_cast<size_t>(r) < gpus_.size() ? gpus_[static_cast<size_t>(r)] : std::string();
    const int64_t since = now_ns - info.heard_ns;
    if (info.final) {
      v.liveness = Liveness::finished;
    } else if (info.lost) {
      v.liveness = Liveness::dead;
    } else if (!info.heard) {
      v.liveness = Liveness::unknown;
    } else if (since > settings_.heartbeat_timeout_ns && r != me_) {
      v.liveness = Liveness::silent;
    } else {
      v.liveness = Liveness::alive;
    }
    if (!info.heard) continue;
    v.silent_ns = since;
    const oob::Heartbeat& hb = info.last;
    v.ops_done = hb.ops_done;
    v.in_op = hb.flags & oob::Heartbeat::kInOp;
    if (v.in_op) {
      v.current = hb.current;
      v.age_ns = hb.now_ns - hb.current.enq_ns + since;
      v.threshold_ns = hb.threshold_ns;
      v.suspect = v.age_ns > v.threshold_ns && v.threshold_ns > 0;
    }
    v.has_last = hb.flags & oob::Heartbeat::kHasLast;
    if (v.has_last) v.last = hb.last;
    if (!v.in_op) v.idle_ns = v.has_last ? hb.now_ns - hb.last.end_ns + since : now_ns - start_ns_;
    v.pending = hb.pending;
    for (const oob::CommProgress& c : hb.comms) v.comms[c.comm] = c;
  }
  return in;
}

Diagnosis Coordinator::death(int rank, int64_t now_ns) const {
  const HangInput in = views(now_ns);
  Diagnosis d;
  d.fault_class = FaultClass::noncomm_hang;
  d.detector = "death";
  d.ranks = {rank};
  if (static_cast<size_t>(rank) < hosts_.size()) d.hosts = {hosts_[static_cast<size_t>(rank)]};
  d.detected_ns = now_ns;
  d.onset_ns = ranks_[static_cast<size_t>(rank)].heard_ns;
  const RankView& v = in.ranks[static_cast<size_t>(rank)];
  d.message = "rank " + std::to_string(rank) + " died: its out-of-band connection closed before MPI_Finalize";
  const std::string when = ranks_[static_cast<size_t>(rank)].heard
                               ? " at its last heartbeat, " + duration_text(v.silent_ns) + " before"
                               : std::string();
  if (v.in_op) {
    d.op = to_string(static_cast<OpKind>(v.current.kind));
    d.comm = comm_text(v.current.comm);
    d.seq = v.current.seq;
    d.message += "; last seen" + when + ", in " + describe_op(v.current);
  } else if (v.has_last) {
    d.message += "; last seen" + when + ", outside communication after " + describe_op(v.last);
  } else if (!ranks_[static_cast<size_t>(rank)].heard) {
    d.message += "; it sent this coordinator no heartbeat (it was the coordinator before, or died at start-up)";
  }
  return d;
}

Coordinator::Actions Coordinator::tick(int64_t now_ns) {
  Actions out;
  // Deaths and silences first: they explain the hangs that follow.
  detect_deaths(now_ns, &out.diagnoses);
  detect_silences(now_ns, &out.diagnoses);
  detect_hang(now_ns, &out.diagnoses);
  take_slow_alarms(now_ns, &out.diagnoses);
  links_.expire(now_ns - kHalfLifetimeNs);
  plan_probes(now_ns, &out.probes);
  return out;
}

void Coordinator::detect_deaths(int64_t now_ns, std::vector<Diagnosis>* out) {
  // A job one of whose ranks died is torn down by its launcher (SIGTERM to
  // the others), so the deaths that follow the first within the heartbeat
  // timeout are that teardown, not new faults: logged, not diagnosed. The
  // first is the earliest connection to close, whatever the rank numbers.
  std::vector<int> newly_dead;
  for (int r = 0; r < size_; ++r) {
    const RankInfo& info = ranks_[static_cast<size_t>(r)];
    if (info.lost && !info.final && dead_reported_.insert(r).second) newly_dead.push_back(r);
  }
  std::sort(newly_dead.begin(), newly_dead.end(), [this](int a, int b) {
    return ranks_[static_cast<size_t>(a)].lost_ns < ranks_[static_cast<size_t>(b)].lost_ns;
  });
  for (int r : newly_dead) {
    if (first_death_ns_ != 0 &&
        ranks_[static_cast<size_t>(r)].lost_ns - first_death_ns_ < settings_.heartbeat_timeout_ns) {
      STRATA_LOG(info, kFault, "rank %d ended %.1f ms after the first death: the job's teardown, not a new fault", r,
                 1e-6 * static_cast<double>(ranks_[static_cast<size_t>(r)].lost_ns - first_death_ns_));
      continue;
    }
    if (first_death_ns_ == 0) first_death_ns_ = ranks_[static_cast<size_t>(r)].lost_ns;
    out->push_back(death(r, now_ns));
  }
}

void Coordinator::detect_silences(int64_t now_ns, std::vector<Diagnosis>* out) {
  for (int r = 0; r < size_; ++r) {
    RankInfo& info = ranks_[static_cast<size_t>(r)];
    if (r != me_ && info.heard && !info.final && !info.lost && !info.silence_reported &&
        now_ns - info.heard_ns > settings_.heartbeat_timeout_ns) {
      info.silence_reported = true;
      out->push_back(silence(r, now_ns));
    }
  }
}

Diagnosis Coordinator::silence(int rank, int64_t now_ns) const {
  Diagnosis d;
  d.fault_class = FaultClass::noncomm_hang;
  d.detector = "silence";
  d.ranks = {rank};
  if (static_cast<size_t>(rank) < hosts_.size()) d.hosts = {hosts_[static_cast<size_t>(rank)]};
  d.detected_ns = now_ns;
  d.onset_ns = ranks_[static_cast<size_t>(rank)].heard_ns;
  d.message = describe(views(now_ns).ranks[static_cast<size_t>(rank)]) +
              ": its agent stopped answering (process "
              "stopped, node frozen, or the out-of-band network is down)";
  return d;
}

void Coordinator::detect_hang(int64_t now_ns, std::vector<Diagnosis>* out) {
  // The oldest suspect, confirmed when it is still in the same operation a
  // tick later.
  const HangInput in = views(now_ns);
  const RankView* primary = nullptr;
  for (const RankView& v : in.ranks) {
    if (v.suspect && v.liveness == Liveness::alive && (primary == nullptr || v.age_ns > primary->age_ns)) primary = &v;
  }
  if (primary == nullptr) {
    suspect_rank_ = -1;
  } else if (primary->rank != suspect_rank_ || primary->current.enq_ns != suspect_enq_) {
    suspect_rank_ = primary->rank;
    suspect_enq_ = primary->current.enq_ns;
    suspect_since_ = now_ns;
  } else if (now_ns - suspect_since_ >= settings_.tick_ns &&
             hangs_reported_.insert({suspect_rank_, suspect_enq_}).second) {
    if (std::optional<Diagnosis> d = diagnose_hang(in, now_ns)) {
      const bool explained =
          d->fault_class == FaultClass::noncomm_hang && !d->ranks.empty() &&
          std::all_of(d->ranks.begin(), d->ranks.end(), [&](int r) { return dead_reported_.count(r); });
      if (!explained) out->push_back(std::move(*d));
    }
  }
}

void Coordinator::take_slow_alarms(int64_t now_ns, std::vector<Diagnosis>* out) {
  for (Diagnosis& d : skew_.take_alarms()) {
    d.detected_ns = now_ns;
    out->push_back(std::move(d));
  }
  for (Diagnosis& d : links_.take_alarms()) {
    d.detected_ns = now_ns;
    out->push_back(std::move(d));
  }
}

void Coordinator::plan_probes(int64_t now_ns, std::vector<std::pair<int, std::vector<int>>>* out) {
  // Probes of the links the traffic does not cover.
  if (settings_.probe_period_ns <= 0 || now_ns < next_probe_ns_ || size_ > 512) return;
  next_probe_ns_ = now_ns + settings_.probe_period_ns;
  const int64_t horizon = std::max<int64_t>(3 * settings_.probe_period_ns, 2000000000);
  std::vector<std::pair<int, int>> todo = links_.uncovered(now_ns, horizon);
  std::map<int, std::vector<int>> by_rank;
  auto usable = [&](int r) {
    const RankInfo& i = ranks_[static_cast<size_t>(r)];
    return i.heard && !i.lost && !i.final;
  };
  for (size_t n = 0; n < std::min(todo.size(), kProbesPerPeriod); ++n) {
    const auto& link = todo[(probe_cursor_ + n) % todo.size()];
    if (usable(link.first) && usable(link.second)) by_rank[link.first].push_back(link.second);
  }
  if (!todo.empty()) probe_cursor_ = (probe_cursor_ + kProbesPerPeriod) % todo.size();
  for (auto& [rank, peers] : by_rank) out->emplace_back(rank, std::move(peers));
}

}  // namespace strata::fault
