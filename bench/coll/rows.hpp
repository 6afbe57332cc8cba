// strata-bench-coll's results: one row per size, collective and algorithm
// (the peer's first), printed as nccl-tests' table with its closing lines,
// and written as JSON (after the run's metadata) and CSV. With --in-place
// each row also has the same call in place (nccl-tests' in-place columns),
// as columns after all the others: the table's, JSON's and CSV's first
// columns stay as they were.
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
  Timing in_place;  // --in-place, has_in_place collectives: the call with MPI_IN_PLACE
};

// nccl-tests' algbw and busbw, GB/s, of a timing that ran.
double algo_bandwidth(const Case& c, const Timing& t);
double bus_bandwidth(const Case& c, const Timing& t, int ranks);

// The table: its header, one line per row, nccl-tests' closing lines (the
// average bus bandwidth per algorithm, #wrong). `in_place`: the in-place
// columns are there.
void print_header(bool in_place);
void print_row(const Row& r, int ranks, bool in_place);
void print_closing_lines(const std::vector<Row>& rows, int ranks, bool in_place);

nlohmann::json to_json(const std::vector<Row>& rows, int ranks, bool in_place, int argc, char** argv);
// The rows that ran; false (said on stderr) when the file cannot be written.
bool write_csv(const std::string& path, const std::vector<Row>& rows, int ranks, bool in_place);

}  // namespace strata_bench
