#include "analysis.hpp"

#include "fault/detect/hang.hpp"
#include "fault/detect/links.hpp"
#include "fault/detect/skew.hpp"
#include "fault/op_kind.hpp"
#include "fault/recorder/record.hpp"
#include "fault/stats/window.hpp"

#include <algorithm>
#include <tuple>

namespace strata::fault::tool {
namespace {

OpKind kind_of(const std::string& name) {
  OpKind k = OpKind::none;
  parse_op_kind(name.c_str(), &k);
  return k;
}

oob::OpBrief brief(const OpLine& o) {
  oob::OpBrief b;
  const OpKind k = kind_of(o.kind);
  b.kind = static_cast<uint8_t>(k);
  b.comm = o.comm;
  b.seq = o.seq;
  b.peer = o.peer;
  b.peer2 = o.peer2;
  if (k == OpKind::wait) b.peer2 = static_cast<int32_t>(kind_of(o.first_request));
  b.bytes = o.bytes;
  b.enq_ns = o.enq_ns;
  b.end_ns = o.end_ns;
  return b;
}

// A rank's state at its dump.
RankView view_of(const RankDump& d, const Settings& settings) {
  RankView v;
  v.rank = d.rank;
  v.host = d.host;
  const std::string& why = d.reason;
  if (why == "exit") {
    v.liveness = Liveness::finished;
  } else if (why.rfind("signal:", 0) == 0 && why != "signal:15") {
    v.liveness = Liveness::dead;  // crashed
  } else if (why == "exit without MPI_Finalize") {
    v.liveness = Liveness::dead;
  } else {
    v.liveness = Liveness::alive;  // api, fault, terminate, SIGTERM from the launcher: the state when it stopped
  }
  stats::TypicalDurations typical;
  const OpLine* current = nullptr;
  const OpLine* last = nullptr;
  std::vector<const OpLine*> pending;
  for (const OpLine& o : d.ops) {
    const OpKind k = kind_of(o.kind);
    if (o.state == "done") {
      ++v.ops_done;
      if (!is_nonblocking(k)) typical.add(k, o.bytes, std::max<int64_t>(0, o.end_ns - o.enq_ns));
      if (last == nullptr || o.end_ns >= last->end_ns) last = &o;
    } else if (o.state == "posted") {
      pending.push_back(&o);
    } else if (o.state == "active" && (current == nullptr || o.enq_ns < current->enq_ns)) {
      current = &o;
    }
  }
  if (current != nullptr) {
    v.in_op = true;
    v.current = brief(*current);
    v.age_ns = d.dumped_ns - current->enq_ns;
    const OpKind k = kind_of(current->kind);
    const double t = typical.typical_ns(k, current->bytes);
    v.threshold_ns = std::max(settings.hang_floor_ns, static_cast<int64_t>(t > 0 ? settings.hang_factor * t : 0));
    v.suspect = v.age_ns > v.threshold_ns;
  }
  if (last != nullptr) {
    v.has_last = true;
    v.last = brief(*last);
    if (!v.in_op) v.idle_ns = d.dumped_ns - last->end_ns;
  } else if (!v.in_op) {
    v.idle_ns = d.dumped_ns - d.start_ns;
  }
  std::sort(pending.begin(), pending.end(), [](const OpLine* a, const OpLine* b) { return a->enq_ns < b->enq_ns; });
  for (size_t i = 0; i < pending.size() && i < 4; ++i) v.pending.push_back(brief(*pending[i]));
  for (const CommLine& c : d.comms) {
    oob::CommProgress p;
    p.comm = c.id;
    p.size = c.size;
    p.entered = c.started;
    p.left = c.left;
    v.comms[c.id] = p;
  }
  return v;
}

}  // namespace

namespace {

// Every rank's view for the hang diagnosis, the communicators' members, and
// the latest dump time on the common clock.
HangInput hang_input(const JobFiles& job, const Settings& settings, int64_t* latest) {
  HangInput in;
  in.ranks.resize(static_cast<size_t>(job.size));
  *latest = 0;
  for (int r = 0; r < job.size; ++r) {
    auto it = job.ranks.find(r);
    if (it == job.ranks.end()) {
      in.ranks[static_cast<size_t>(r)].rank = r;  // no dump: unknown
      continue;
    }
    in.ranks[static_cast<size_t>(r)] = view_of(it->second, settings);
    *latest = std::max(*latest, it->second.dumped_ns - it->second.offset_ns);
    for (const CommLine& c : it->second.comms) {
      if (c.id != 0 && !c.ranks.empty()) in.members[c.id] = std::vector<int32_t>(c.ranks.begin(), c.ranks.end());
    }
  }
  return in;
}

// The finished operations of the records as the fail-slow detectors take
// them: collectives by (communicator, sequence, rank), point-to-point
// halves by completion time, the order the coordinator would have seen.
struct Records {
  struct Coll {
    int rank;
    oob::CollSample s;
  };
  struct Half {
    int64_t t;
    int rank;
    oob::P2pSample s;
  };
  std::vector<Coll> colls;
  std::vector<Half> halves;
};

oob::CollSample coll_sample(const OpLine& o, OpKind k, int64_t offset_ns) {
  oob::CollSample s;
  s.comm = o.comm;
  s.seq = o.seq;
  s.bytes = o.bytes;
  s.start_ns = o.enq_ns - offset_ns;
  s.end_ns = o.end_ns - offset_ns;
  s.compute_ns = o.compute_ns;
  s.kind = static_cast<uint8_t>(k);
  return s;
}

// One point-to-point operation's halves (a send side, a receive side, or
// both for a sendrecv).
void add_halves(const OpLine& o, OpKind k, int rank, int64_t offset_ns, std::vector<Records::Half>* halves) {
  auto half = [&](int peer, uint8_t role, uint64_t ordinal, int64_t ready) {
    if (peer < 0 || ordinal == 0) return;
    oob::P2pSample s;
    s.peer = peer;
    s.role = role;
    s.ordinal = ordinal;
    s.bytes = o.bytes;
    s.ready_ns = ready - offset_ns;
    s.end_ns = o.end_ns - offset_ns;
    halves->push_back({s.end_ns, rank, s});
  };
  if (k == OpKind::send || k == OpKind::isend) half(o.peer, 0, o.seq, o.enq_ns);
  if (k == OpKind::recv || k == OpKind::irecv) half(o.peer, 1, o.seq, std::max(o.enq_ns, o.start_ns));
  if (k == OpKind::sendrecv) {
    half(o.peer, 0, o.seq, o.enq_ns);
    half(o.peer2, 1, o.seq2, o.enq_ns);
  }
}

Records records_of(const JobFiles& job) {
  Records out;
  for (const auto& [r, d] : job.ranks) {
    for (const OpLine& o : d.ops) {
      if (o.state != "done") continue;
      const OpKind k = kind_of(o.kind);
      if (is_collective(k) && o.has_comm && o.seq > 0) {
        out.colls.push_back({r, coll_sample(o, k, d.offset_ns)});
      } else {
        add_halves(o, k, r, d.offset_ns, &out.halves);
      }
    }
  }
  std::sort(out.colls.begin(), out.colls.end(), [](const Records::Coll& x, const Records::Coll& y) {
    return std::tie(x.s.comm, x.s.seq, x.rank) < std::tie(y.s.comm, y.s.seq, y.rank);
  });
  std::sort(out.halves.begin(), out.halves.end(),
            [](const Records::Half& x, const Records::Half& y) { return x.t < y.t; });
  return out;
}

// Fail-slow on the records: the skew and link detectors fed as the
// coordinator would have fed them; their alarms into `a`.
void fail_slow(const JobFiles& job, const HangInput& in, const Settings& settings, Analysis* a) {
  std::vector<std::string> hosts(static_cast<size_t>(job.size));
  for (const auto& [r, d] : job.ranks) {
    if (r >= 0 && r < job.size) hosts[static_cast<size_t>(r)] = d.host;
  }
  SkewDetector skew(job.size, settings.slow);
  LinkDetector links(job.size, settings.slow);
  skew.set_hosts(hosts);
  links.set_hosts(hosts);
  for (const auto& [id, members] : in.members) skew.set_members(id, members);
  const Records records = records_of(job);
  for (const Records::Coll& c : records.colls) skew.add(c.rank, c.s);
  for (const Records::Half& h : records.halves) links.add(h.rank, h.s, h.t);
  links.take_alarms();  // candidates wait one round for their neighbours
  for (Diagnosis& d : skew.take_alarms()) a->diagnoses.push_back(std::move(d));
  for (Diagnosis& d : links.take_alarms()) a->diagnoses.push_back(std::move(d));
  a->collectives = skew.evaluated();
  a->messages = links.paired();
}

}  // namespace

Analysis analyze(const JobFiles& job, const Settings& settings) {
  Analysis a;
  int64_t latest = 0;
  HangInput in = hang_input(job, settings, &latest);
  if (std::optional<Diagnosis> d = diagnose_hang(in, latest)) a.diagnoses.push_back(std::move(*d));
  fail_slow(job, in, settings, &a);
  a.views = std::move(in.ranks);
  return a;
}

}  // namespace strata::fault::tool
