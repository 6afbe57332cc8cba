#include "fault/detect/hang.hpp"

#include "fault/detect/diagnosis.hpp"
#include "fault/op_kind.hpp"

#include <algorithm>
#include <deque>
#include <set>

namespace strata::fault {

std::string comm_text(uint64_t comm) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(comm));
  return buf;
}

namespace {

OpKind kind_of(const oob::OpBrief& op) { return static_cast<OpKind>(op.kind); }

bool gone(const RankView& v) {
  return v.liveness == Liveness::dead || v.liveness == Liveness::silent || v.liveness == Liveness::unknown;
}

const char* liveness_text(Liveness l) {
  switch (l) {
    case Liveness::dead: return "dead (its process is gone)";
    case Liveness::silent: return "unresponsive";
    case Liveness::unknown: return "never heard from";
    case Liveness::finished: return "finished (in MPI_Finalize)";
    case Liveness::alive: return "alive";
  }
  return "?";
}

// Who a rank in a blocking point-to-point call sends to and receives from
// (a wait: its pending requests).
struct Directions {
  std::vector<int> to, from;
  bool sends_to(int r) const { return std::find(to.begin(), to.end(), r) != to.end(); }
  bool receives_from(int r) const { return std::find(from.begin(), from.end(), r) != from.end(); }
};

Directions directions(const RankView& v) {
  Directions d;
  if (!v.in_op) return d;
  auto add = [](std::vector<int>& out, int32_t peer) {
    if (peer >= 0 && std::find(out.begin(), out.end(), peer) == out.end()) out.push_back(peer);
  };
  auto add_kind = [&](OpKind k, int32_t peer) {
    if (k == OpKind::send || k == OpKind::isend) add(d.to, peer);
    if (k == OpKind::recv || k == OpKind::irecv) add(d.from, peer);
  };
  const OpKind k = kind_of(v.current);
  if (k == OpKind::sendrecv) {
    add(d.to, v.current.peer);
    add(d.from, v.current.peer2);
  } else if (k == OpKind::wait) {
    if (v.current.peer2 > 0) add_kind(static_cast<OpKind>(v.current.peer2), v.current.peer);
    for (const oob::OpBrief& p : v.pending) add_kind(kind_of(p), p.peer);
  } else {
    add_kind(k, v.current.peer);
  }
  return d;
}

// The peers a rank in a blocking point-to-point call waits for.
std::vector<int> p2p_peers(const RankView& v) {
  if (!v.in_op || is_collective(kind_of(v.current))) return {};
  Directions d = directions(v);
  std::vector<int> out = d.to;
  for (int r : d.from) {
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

std::vector<int32_t> members_of(const HangInput& in, uint64_t comm) {
  auto it = in.members.find(comm);
  if (it != in.members.end()) return it->second;
  std::vector<int32_t> all;
  if (comm == 0) {
    for (size_t r = 0; r < in.ranks.size(); ++r) all.push_back(static_cast<int32_t>(r));
  }
  return all;
}

uint64_t entered(const RankView& v, uint64_t comm) {
  auto it = v.comms.find(comm);
  return it == v.comms.end() ? 0 : it->second.entered;
}

uint64_t left(const RankView& v, uint64_t comm) {
  auto it = v.comms.find(comm);
  return it == v.comms.end() ? 0 : it->second.left;
}

// Members of collective (comm, seq) that never entered it.
std::vector<int> missing_from(const HangInput& in, uint64_t comm, uint64_t seq) {
  std::vector<int> out;
  for (int32_t m : members_of(in, comm)) {
    if (m < 0 || static_cast<size_t>(m) >= in.ranks.size()) continue;
    const RankView& v = in.ranks[static_cast<size_t>(m)];
    if (gone(v) || entered(v, comm) < seq) out.push_back(m);
  }
  return out;
}

std::vector<int> waits_for(const HangInput& in, const RankView& v) {
  if (!v.in_op) return {};
  if (is_collective(kind_of(v.current))) return missing_from(in, v.current.comm, v.current.seq);
  return p2p_peers(v);
}

std::vector<std::string> hosts_of(const HangInput& in, const std::vector<int>& ranks) {
  std::set<std::string> hosts;
  for (int r : ranks) {
    if (r >= 0 && static_cast<size_t>(r) < in.ranks.size() && !in.ranks[static_cast<size_t>(r)].host.empty()) {
      hosts.insert(in.ranks[static_cast<size_t>(r)].host);
    }
  }
  return {hosts.begin(), hosts.end()};
}

}  // namespace

std::string describe_op(const oob::OpBrief& op) {
  const OpKind k = kind_of(op);
  if (is_collective(k)) {
    return std::string(to_string(k)) + " #" + std::to_string(op.seq) + " on comm " + comm_text(op.comm);
  }
  auto peer = [](int32_t p) { return p >= 0 ? std::to_string(p) : std::string(p == -2 ? "any" : "?"); };
  switch (k) {
    case OpKind::send:
    case OpKind::isend: return std::string(to_string(k)) + " to " + peer(op.peer);
    case OpKind::recv:
    case OpKind::irecv: return std::string(to_string(k)) + " from " + peer(op.peer);
    case OpKind::sendrecv: return "sendrecv (to " + peer(op.peer) + ", from " + peer(op.peer2) + ")";
    case OpKind::wait: {
      std::string s = "wait";
      if (op.peer2 > 0 && op.peer >= 0) {
        const OpKind first = static_cast<OpKind>(op.peer2);
        s += std::string(" for ") + to_string(first) + (first == OpKind::isend ? " to " : " from ") + peer(op.peer);
      }
      return s;
    }
    default: return to_string(k);
  }
}

std::string describe(const RankView& v) {
  const std::string who = "rank " + std::to_string(v.rank);
  if (gone(v)) {
    std::string s = who + " " + liveness_text(v.liveness);
    if (v.silent_ns > 0) s += ", last heard " + duration_text(v.silent_ns) + " ago";
    if (v.in_op) s += ", last seen in " + describe_op(v.current);
    return s;
  }
  if (v.in_op) return who + " in " + describe_op(v.current) + " for " + duration_text(v.age_ns);
  std::string s = who + " outside communication for " + duration_text(v.idle_ns);
  s += v.has_last ? " since " + describe_op(v.last) + " ended" : " since start-up";
  return s;
}

namespace {

// The primary suspect: the oldest operation beyond its threshold.
const RankView* oldest_suspect(const HangInput& in) {
  const RankView* primary = nullptr;
  for (const RankView& v : in.ranks) {
    if (!v.suspect || !v.in_op || gone(v)) continue;
    if (primary == nullptr || v.age_ns > primary->age_ns) primary = &v;
  }
  return primary;
}

// One hang's diagnosis as it is put together: the message's head and
// detail, and where the wait-for walk starts.
struct HangReport {
  const HangInput& in;
  Diagnosis& d;
  std::string head;
  std::string detail;
  std::vector<int> start;   // the missing ranks, or the stuck rank
  std::vector<int> inside;  // a collective: members that entered it and never left
  std::set<int> explained;  // ranks already described in the message

  void explain(const std::vector<int>& ranks) {
    for (int r : ranks) {
      if (r < 0 || static_cast<size_t>(r) >= in.ranks.size() || !explained.insert(r).second) continue;
      detail += "; " + describe(in.ranks[static_cast<size_t>(r)]);
    }
  }
};

// A collective: its missing members start the walk.
void frame_collective(const oob::OpBrief& op, HangReport& r) {
  const HangInput& in = r.in;
  Diagnosis& d = r.d;
  d.missing = missing_from(in, op.comm, op.seq);
  for (int32_t m : members_of(in, op.comm)) {
    if (std::find(d.missing.begin(), d.missing.end(), m) != d.missing.end()) continue;
    const RankView& v = in.ranks[static_cast<size_t>(m)];
    if (left(v, op.comm) < op.seq) r.inside.push_back(m);
  }
  r.head += d.missing.empty() ? std::string(": no member missing") : ": ranks " + rank_set(d.missing) + " missing";
  r.start = d.missing;
}

// A point-to-point call: the stuck rank starts the walk.
void frame_p2p(const RankView& primary, HangReport& r) {
  r.head = "rank " + std::to_string(primary.rank) + " stuck in " + r.head + " for " + duration_text(primary.age_ns);
  r.start = {primary.rank};
  r.explained.insert(primary.rank);
}

// The wait-for walk from `start`: the ranks it visits, in order, and those
// it ends at (outside communication, dead or silent; finished ranks are
// not culprits).
struct WaitForWalk {
  std::vector<int> order;
  std::vector<int> sinks;
};

WaitForWalk walk_wait_for(const HangInput& in, const std::vector<int>& start) {
  WaitForWalk w;
  std::set<int> seen(start.begin(), start.end());
  std::deque<int> todo(start.begin(), start.end());
  while (!todo.empty()) {
    const int r = todo.front();
    todo.pop_front();
    if (r < 0 || static_cast<size_t>(r) >= in.ranks.size()) continue;
    w.order.push_back(r);
    const RankView& v = in.ranks[static_cast<size_t>(r)];
    if (gone(v) || !v.in_op) {
      if (v.liveness != Liveness::finished) w.sinks.push_back(r);
      continue;
    }
    for (int next : waits_for(in, v)) {
      if (seen.insert(next).second) todo.push_back(next);
    }
  }
  return w;
}

bool in_p2p(const HangInput& in, int r) {
  const RankView& v = in.ranks[static_cast<size_t>(r)];
  return !gone(v) && v.in_op && !is_collective(kind_of(v.current));
}

// A rank in a send to b while b is in a receive from it or a send to it
// (both stuck).
std::vector<std::pair<int, int>> mutually_stuck(const HangInput& in, const std::vector<int>& order) {
  std::vector<std::pair<int, int>> pairs;
  for (int a : order) {
    if (!in_p2p(in, a)) continue;
    const Directions da = directions(in.ranks[static_cast<size_t>(a)]);
    for (int b : da.to) {
      if (b < 0 || static_cast<size_t>(b) >= in.ranks.size() || !in_p2p(in, b)) continue;
      const Directions db = directions(in.ranks[static_cast<size_t>(b)]);
      if (db.receives_from(a) || db.sends_to(a)) pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  return pairs;
}

// b waits for a message from a rank that has moved on (in a collective b
// is missing from).
std::vector<std::pair<int, int>> waiting_on_moved_on(const HangInput& in, const std::vector<int>& order) {
  std::vector<std::pair<int, int>> pairs;
  for (int b : order) {
    if (!in_p2p(in, b)) continue;
    for (int a : directions(in.ranks[static_cast<size_t>(b)]).from) {
      if (a < 0 || static_cast<size_t>(a) >= in.ranks.size()) continue;
      const RankView& va = in.ranks[static_cast<size_t>(a)];
      if (gone(va) || !va.in_op || !is_collective(kind_of(va.current))) continue;
      const std::vector<int> waited = waits_for(in, va);
      if (std::find(waited.begin(), waited.end(), b) != waited.end())
        pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  return pairs;
}

// Links that do not deliver, sorted, each once.
std::vector<std::pair<int, int>> stuck_links(const HangInput& in, const std::vector<int>& order) {
  std::vector<std::pair<int, int>> pairs = mutually_stuck(in, order);
  if (pairs.empty()) pairs = waiting_on_moved_on(in, order);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

// The walk ended at ranks outside communication, dead or silent.
void blame_sinks(std::vector<int> sinks, HangReport& r) {
  Diagnosis& d = r.d;
  std::sort(sinks.begin(), sinks.end());
  d.fault_class = FaultClass::noncomm_hang;
  d.ranks = sinks;
  r.explain(sinks);
  // Say where the missing ranks are when they are not the culprits themselves.
  for (int m : d.missing) {
    if (std::find(sinks.begin(), sinks.end(), m) == sinks.end()) r.explain({m});
  }
}

// Ranks stuck on each other over point-to-point links.
void blame_links(const std::vector<std::pair<int, int>>& pairs, HangReport& r) {
  Diagnosis& d = r.d;
  d.fault_class = FaultClass::comm_hang;
  d.links = pairs;
  for (const auto& p : pairs) {
    r.explain({p.first, p.second});
    d.ranks.push_back(p.first);
    d.ranks.push_back(p.second);
  }
  std::sort(d.ranks.begin(), d.ranks.end());
  d.ranks.erase(std::unique(d.ranks.begin(), d.ranks.end()), d.ranks.end());
  r.detail += std::string("; ") + (pairs.size() == 1 ? "the link " : "the links ") + link_set(pairs) +
              (pairs.size() == 1 ? " does" : " do") +
              " not deliver (the sender is stuck sending or the receiver waits for a message that never came)";
}

// A collective every member entered: some never left, or none did.
void blame_collective(const oob::OpBrief& op, HangReport& r) {
  Diagnosis& d = r.d;
  d.fault_class = FaultClass::comm_hang;
  const size_t members = members_of(r.in, op.comm).size();
  if (!r.inside.empty() && r.inside.size() < members) {
    d.ranks = r.inside;
    r.detail += "; every member entered it, ranks " + rank_set(r.inside) + " never left";
  } else {
    r.detail += "; all " + std::to_string(members) +
                " members entered it and none left: the operation itself is stuck (inside the MPI library or "
                "the network); no rank can be singled out from outside the library";
  }
}

// Nothing better: the ranks the walk started from.
void blame_start(HangReport& r) {
  r.d.fault_class = FaultClass::comm_hang;
  r.d.ranks = r.start;
  r.explain(r.start);
  r.detail += "; no rank outside communication found";
}

}  // namespace

std::optional<Diagnosis> diagnose_hang(const HangInput& in, int64_t now_ns) {
  const RankView* primary = oldest_suspect(in);
  if (primary == nullptr) return std::nullopt;

  Diagnosis d;
  d.detector = "hang";
  d.detected_ns = now_ns;
  d.onset_ns = now_ns - primary->age_ns;
  const oob::OpBrief& op = primary->current;
  const OpKind kind = kind_of(op);
  d.op = to_string(kind);
  d.comm = comm_text(op.comm);
  d.seq = op.seq;

  HangReport r{in, d, describe_op(op), std::string(), {}, {}, {}};
  if (is_collective(kind)) {
    frame_collective(op, r);
  } else {
    frame_p2p(*primary, r);
  }
  const WaitForWalk walk = walk_wait_for(in, r.start);
  const std::vector<std::pair<int, int>> pairs = stuck_links(in, walk.order);
  if (!walk.sinks.empty()) {
    blame_sinks(walk.sinks, r);
  } else if (!pairs.empty()) {
    blame_links(pairs, r);
  } else if (is_collective(kind) && d.missing.empty()) {
    blame_collective(op, r);
  } else {
    blame_start(r);
  }
  d.hosts = hosts_of(in, d.ranks);
  d.message = r.head + r.detail;
  return d;
}

}  // namespace strata::fault
