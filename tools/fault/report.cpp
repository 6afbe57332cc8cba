#include "report.hpp"

#include "fault/detect/diagnosis.hpp"
#include "fault/detect/hang.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <set>

namespace strata::fault::tool {
namespace {

struct Event {
  int64_t t;  // enq on the common clock
  int rank;
  const OpLine* op;
};

int64_t origin(const JobFiles& job) {
  int64_t t0 = INT64_MAX;
  for (const auto& [r, d] : job.ranks) {
    for (const OpLine& o : d.ops) t0 = std::min(t0, o.enq_ns - d.offset_ns);
  }
  return t0 == INT64_MAX ? 0 : t0;
}

std::vector<Event> timeline(const JobFiles& job, size_t last) {
  std::vector<Event> all;
  for (const auto& [r, d] : job.ranks) {
    for (const OpLine& o : d.ops) all.push_back({o.enq_ns - d.offset_ns, r, &o});
  }
  std::sort(all.begin(), all.end(),
            [](const Event& a, const Event& b) { return a.t != b.t ? a.t < b.t : a.rank < b.rank; });
  if (all.size() > last) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(last));
  return all;
}

std::string op_text(const OpLine& o) {
  std::string s = o.kind;
  if (o.kind == "send" || o.kind == "isend") s += " to " + std::to_string(o.peer);
  if (o.kind == "recv" || o.kind == "irecv") s += " from " + (o.peer >= 0 ? std::to_string(o.peer) : "any");
  if (o.kind == "sendrecv") s += " to " + std::to_string(o.peer) + " from " + std::to_string(o.peer2);
  if (o.kind == "wait") s += " (" + std::to_string(o.bytes) + " requests)";
  if (o.has_comm && o.seq > 0 && o.kind != "send" && o.kind != "recv" && o.kind != "sendrecv" && o.kind != "isend" &&
      o.kind != "irecv") {
    s += " #" + std::to_string(o.seq) + " comm " + comm_text(o.comm);
  }
  return s;
}

std::string ms(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}

const char* liveness_word(Liveness l) {
  switch (l) {
    case Liveness::alive: return "stopped";
    case Liveness::finished: return "finished";
    case Liveness::silent: return "silent";
    case Liveness::dead: return "dead";
    case Liveness::unknown: return "no dump";
  }
  return "?";
}

nlohmann::json diagnosis_json(const Diagnosis& d) { return nlohmann::json::parse(to_json(d)); }

}  // namespace

std::string text_report(const JobFiles& job, const Analysis& a, const ReportOptions& o) {
  std::string out;
  std::set<std::string> hosts;
  for (const auto& [r, d] : job.ranks) hosts.insert(d.host);
  out += "strata-fault: job " + job.job + ", " + std::to_string(job.size) + " ranks, flight records of " +
         std::to_string(job.ranks.size()) + " on " + std::to_string(hosts.size()) + " host(s), in " + job.dir + "\n";
  if (!job.ranks.empty() && !job.ranks.begin()->second.inject.empty()) {
    out += "injected faults: " + job.ranks.begin()->second.inject + "\n";
  }
  out += "\nranks:\n";
  for (const RankView& v : a.views) {
    auto it = job.ranks.find(v.rank);
    char line[512];
    if (it == job.ranks.end()) {
      std::snprintf(line, sizeof(line), "  rank %-4d no flight record (killed before it could write one?)\n", v.rank);
      out += line;
      continue;
    }
    const RankDump& d = it->second;
    std::snprintf(line, sizeof(line),
                  "  rank %-4d %-12s pid %-8lld dump: %-10s %s, %llu records (%llu dropped): ", v.rank, d.host.c_str(),
                  static_cast<long long>(d.pid), d.reason.c_str(), liveness_word(v.liveness),
                  static_cast<unsigned long long>(d.total), static_cast<unsigned long long>(d.dropped));
    out += line;
    if (v.in_op) {
      out += "in " + describe_op(v.current) + " for " + duration_text(v.age_ns);
    } else if (v.has_last) {
      out += "outside communication for " + duration_text(v.idle_ns) + " after " + describe_op(v.last);
    } else {
      out += "no communication recorded";
    }
    out += "\n";
    const size_t first = d.ops.size() > o.per_rank ? d.ops.size() - o.per_rank : 0;
    for (size_t i = first; i < d.ops.size(); ++i) {
      const OpLine& op = d.ops[i];
      out += "           " + op_text(op) + "  " + op.state;
      if (op.end_ns > 0) out += " in " + ms(op.end_ns - op.enq_ns) + " ms";
      out += "\n";
    }
  }
  out += "\ndiagnoses during the run (" + std::to_string(job.online.size()) + "):\n";
  if (job.online.empty()) out += "  none\n";
  for (const Diagnosis& d : job.online) out += "  " + to_text(d) + "\n";
  out += "\npost-mortem, from the flight records (" + std::to_string(a.diagnoses.size()) + "; " +
         std::to_string(a.collectives) + " collectives and " + std::to_string(a.messages) +
         " messages recorded at both ends):\n";
  if (a.diagnoses.empty()) out += "  none\n";
  for (const Diagnosis& d : a.diagnoses) out += "  " + to_text(d) + "\n";
  const nlohmann::json links = nlohmann::json::parse(job.links_json, nullptr, false);
  if (links.is_object() && links.contains("links") && links["links"].is_array()) {
    size_t flagged = 0;
    for (const auto& l : links["links"]) flagged += l.value("flagged", false) ? 1 : 0;
    out += "\nlink matrix at the end: " + std::to_string(links["links"].size()) + " links measured, " +
           std::to_string(flagged) + " flagged\n";
    for (const auto& l : links["links"]) {
      if (!l.value("flagged", false)) continue;
      out += "  " + std::to_string(l.value("src", -1)) + (l.value("probe", false) ? "<->" : "->") +
             std::to_string(l.value("dst", -1)) + ": median " + duration_text(l.value("median_ns", int64_t{0})) + "\n";
    }
  }
  const int64_t t0 = origin(job);
  out += "\ntimeline (the last " + std::to_string(o.timeline) + " operations, ms since the first record):\n";
  for (const Event& e : timeline(job, o.timeline)) {
    char line[256];
    std::snprintf(line, sizeof(line), "  %12s  rank %-4d %-40s %-7s %s\n", ms(e.t - t0).c_str(), e.rank,
                  op_text(*e.op).c_str(), e.op->state.c_str(),
                  e.op->end_ns > 0 ? (ms(e.op->end_ns - e.op->enq_ns) + " ms").c_str() : "");
    out += line;
  }
  for (const std::string& p : job.problems) out += "warning: " + p + "\n";
  return out;
}

std::string json_report(const JobFiles& job, const Analysis& a, const ReportOptions& o) {
  nlohmann::json j;
  j["job"] = job.job;
  j["dir"] = job.dir;
  j["size"] = job.size;
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankView& v : a.views) {
    nlohmann::json r;
    r["rank"] = v.rank;
    r["state"] = liveness_word(v.liveness);
    auto it = job.ranks.find(v.rank);
    if (it != job.ranks.end()) {
      r["host"] = it->second.host;
      r["pid"] = it->second.pid;
      r["reason"] = it->second.reason;
      r["records"] = it->second.total;
      r["dropped"] = it->second.dropped;
    }
    r["in_op"] = v.in_op;
    if (v.in_op) {
      r["op"] = describe_op(v.current);
      r["op_age_ns"] = v.age_ns;
    } else if (v.has_last) {
      r["last_op"] = describe_op(v.last);
      r["idle_ns"] = v.idle_ns;
    }
    ranks.push_back(r);
  }
  j["ranks"] = ranks;
  j["diagnoses"] = nlohmann::json::array();
  for (const Diagnosis& d : job.online) j["diagnoses"].push_back(diagnosis_json(d));
  j["post_mortem"] = nlohmann::json::array();
  for (const Diagnosis& d : a.diagnoses) j["post_mortem"].push_back(diagnosis_json(d));
  j["collectives_matched"] = a.collectives;
  j["messages_matched"] = a.messages;
  if (!job.links_json.empty()) j["links"] = nlohmann::json::parse(job.links_json, nullptr, false);
  const int64_t t0 = origin(job);
  nlohmann::json tl = nlohmann::json::array();
  for (const Event& e : timeline(job, o.timeline)) {
    tl.push_back({{"t_ns", e.t - t0},
                  {"rank", e.rank},
                  {"op", op_text(*e.op)},
                  {"state", e.op->state},
                  {"duration_ns", e.op->end_ns > 0 ? e.op->end_ns - e.op->enq_ns : -1}});
  }
  j["timeline"] = tl;
  j["problems"] = job.problems;
  return j.dump(1);
}

}  // namespace strata::fault::tool
