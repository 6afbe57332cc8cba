// Reading the files a job's ranks wrote under STRATA_FAULT_DIR: the flight
// records (<job>.rank<R>.jsonl), the diagnoses (<job>.diagnosis.jsonl) and
// the link matrix (<job>.links.json).
#pragma once

#include <strata/fault.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata::fault::tool {

struct OpLine {
  uint64_t index = 0;
  std::string kind;
  std::string state;
  uint64_t comm = 0;
  bool has_comm = false;
  uint64_t seq = 0, seq2 = 0;
  int peer = -1, peer2 = -1;
  uint64_t bytes = 0;         // waits: requests
  std::string first_request;  // waits
  int64_t enq_ns = 0, start_ns = 0, end_ns = 0, compute_ns = 0, dev_ns = -1;
};

struct CommLine {
  uint64_t id = 0;
  int size = 0, rank = 0;
  bool freed = false;
  uint64_t started = 0, left = 0;
  std::vector<int> ranks;  // empty for the world
};

struct RankDump {
  int rank = -1, size = 0;
  std::string job, host, reason, inject, file;
  int64_t pid = 0, start_ns = 0, dumped_ns = 0, offset_ns = 0;
  uint64_t total = 0, dropped = 0, capacity = 0;
  std::vector<CommLine> comms;
  std::vector<OpLine> ops;
};

struct JobFiles {
  std::string dir, job;
  int size = 0;
  std::map<int, RankDump> ranks;
  std::vector<Diagnosis> online;      // <job>.diagnosis.jsonl
  std::string links_json;             // <job>.links.json (empty when absent)
  std::vector<std::string> problems;  // lines or files that could not be read
};

// The jobs with files in `dir`, newest first (by the files' times).
std::vector<std::string> jobs_in(const std::string& dir);
// Loads one job; false (with `error`) when it has no flight record.
bool load_job(const std::string& dir, const std::string& job, JobFiles* out, std::string* error);

}  // namespace strata::fault::tool
