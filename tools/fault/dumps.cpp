#include "dumps.hpp"

#include "fault/detect/diagnosis.hpp"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>

namespace strata::fault::tool {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "<job>.rank<R>.jsonl" -> job and R.
bool split_dump_name(const std::string& name, std::string* job, int* rank) {
  if (!ends_with(name, ".jsonl")) return false;
  const size_t dot = name.rfind(".rank");
  if (dot == std::string::npos || dot == 0) return false;
  const std::string digits = name.substr(dot + 5, name.size() - 6 - dot - 5);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return false;
  *job = name.substr(0, dot);
  *rank = std::stoi(digits);
  return true;
}

uint64_t hex(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 16); }

void read_line(const nlohmann::json& j, RankDump* d, bool* header);

bool read_dump(const std::string& path, RankDump* d, std::vector<std::string>* problems) {
  std::ifstream in(path);
  if (!in) {
    problems->push_back(path + ": cannot open");
    return false;
  }
  d->file = path;
  std::string line;
  size_t n = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      problems->push_back(path + ":" + std::to_string(n) + ": not JSON");
      continue;
    }
    try {
      read_line(j, d, &header);
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
      problems->push_back(path + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  if (!header) problems->push_back(path + ": no header line");
  return header;
}

void read_line(const nlohmann::json& j, RankDump* d, bool* header) {
  {
    const std::string type = j.value("type", "");
    if (type == "header") {
      *header = true;
      d->job = j.value("job", "");
      d->rank = j.value("rank", -1);
      d->size = j.value("size", 0);
      d->host = j.value("host", "");
      d->pid = j.value("pid", int64_t{0});
      d->reason = j.value("reason", "");
      d->offset_ns = j.value("clock_offset_ns", int64_t{0});
      d->start_ns = j.value("start_ns", int64_t{0});
      d->dumped_ns = j.value("dumped_ns", int64_t{0});
      d->capacity = j.value("ring_capacity", uint64_t{0});
      d->total = j.value("records_total", uint64_t{0});
      d->dropped = j.value("records_dropped", uint64_t{0});
      d->inject = j.value("inject", "");
    } else if (type == "comm") {
      CommLine c;
      c.id = hex(j.value("id", "0"));
      c.size = j.value("size", 0);
      c.rank = j.value("rank", 0);
      c.freed = j.value("freed", false);
      c.started = j.value("coll_started", uint64_t{0});
      c.left = j.value("coll_left", uint64_t{0});
      if (j.contains("ranks") && j["ranks"].is_array()) c.ranks = j["ranks"].get<std::vector<int>>();
      d->comms.push_back(std::move(c));
    } else if (type == "op") {
      OpLine o;
      o.index = j.value("i", uint64_t{0});
      o.kind = j.value("kind", "");
      o.state = j.value("state", "");
      o.has_comm = j.contains("comm");
      o.comm = hex(j.value("comm", "0"));
      o.seq = j.value("seq", uint64_t{0});
      o.seq2 = j.value("seq2", uint64_t{0});
      o.peer = j.value("peer", -1);
      o.peer2 = j.value("peer2", -1);
      o.bytes = j.contains("requests") ? j.value("requests", uint64_t{0}) : j.value("bytes", uint64_t{0});
      o.first_request = j.value("first_request", "");
      o.enq_ns = j.value("enq_ns", int64_t{0});
      o.start_ns = j.value("start_ns", int64_t{0});
      o.end_ns = j.value("end_ns", int64_t{0});
      o.compute_ns = j.value("compute_ns", int64_t{0});
      o.dev_ns = j.value("dev_ns", int64_t{-1});
      d->ops.push_back(std::move(o));
    }
  }
}

}  // namespace

std::vector<std::string> jobs_in(const std::string& dir) {
  std::map<std::string, int64_t> newest;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string job;
      int rank = 0;
      if (!split_dump_name(e->d_name, &job, &rank)) continue;
      struct stat st {};
      const std::string path = dir + "/" + e->d_name;
      const int64_t t = stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
      newest[job] = std::max(newest[job], t);
    }
    closedir(d);
  }
  std::vector<std::pair<int64_t, std::string>> order;
  order.reserve(newest.size());
  for (const auto& [job, t] : newest) order.emplace_back(t, job);
  std::sort(order.rbegin(), order.rend());
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const auto& o : order) out.push_back(o.second);
  return out;
}

bool load_job(const std::string& dir, const std::string& job, JobFiles* out, std::string* error) {
  out->dir = dir;
  out->job = job;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name_job;
      int rank = 0;
      if (!split_dump_name(e->d_name, &name_job, &rank) || name_job != job) continue;
      RankDump dump;
      if (read_dump(dir + "/" + e->d_name, &dump, &out->problems)) {
        out->size = std::max(out->size, dump.size);
        out->ranks[dump.rank] = std::move(dump);
      }
    }
    closedir(d);
  } else {
    *error = "cannot read the folder " + dir;
    return false;
  }
  if (out->ranks.empty()) {
    *error = "no flight record of job " + job + " in " + dir;
    return false;
  }
  std::ifstream diag(dir + "/" + job + ".diagnosis.jsonl");
  std::string line;
  while (std::getline(diag, line)) {
    Diagnosis d;
    if (from_json(line, &d)) {
      out->online.push_back(std::move(d));
    } else if (!line.empty()) {
      out->problems.push_back(job + ".diagnosis.jsonl: a line that is not a diagnosis");
    }
  }
  std::ifstream links(dir + "/" + job + ".links.json");
  if (links) {
    std::string text((std::istreambuf_iterator<char>(links)), std::istreambuf_iterator<char>());
    if (nlohmann::json::parse(text, nullptr, false).is_discarded()) {
      out->problems.push_back(job + ".links.json: not JSON");
    } else {
      out->links_json = text;
    }
  }
  return true;
}

}  // namespace strata::fault::tool
