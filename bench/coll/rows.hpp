// strata-bench-coll's results: one row per size, collective and algorithm
// (the peer's first), printed as nccl-tests' table with its closing lines,
// and written as JSON (after the run's metadata) and CSV.
#pragma once

#include "bench/coll/bench_coll.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace strata_bench {

struct Row {
  Case c;
  std::string algorithm;
  Timing timing;
  double predicted_us = -1;
  double peer_us = 0;
};

// nccl-tests' algbw and busbw, GB/s, of a row that ran.
double algo_bandwidth(const Row& r);
double bus_bandwidth(const Row& r, int ranks);

// The table: its header, one line per row, nccl-tests' closing lines (the
// average bus bandwidth per algorithm, #wrong).
void print_header();
void print_row(const Row& r, int ranks);
void print_closing_lines(const std::vector<Row>& rows, int ranks);

nlohmann::json to_json(const std::vector<Row>& rows, int ranks, int argc, char** argv);
// The rows that ran; false (said on stderr) when the file cannot be written.
bool write_csv(const std::string& path, const std::vector<Row>& rows, int ranks);

}  // namespace strata_bench
