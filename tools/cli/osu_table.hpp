// OSU micro-benchmark style output (--osu of strata-bench-pack and
// strata-bench-pingpong): "# " comment lines, a "# Size" header, then one
// line per message size, the size left-aligned in 10 characters and each
// value right-aligned with 2 decimals, as osu_latency and osu_bw print
// them; here the peer's and Strata's columns side by side and the ratio.
// Scripts that read OSU output (skip lines starting with '#', split on
// blanks) read these.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::tools {

class OsuTable {
 public:
  // `columns`: the value columns' names, e.g. "Latency (us)".
  explicit OsuTable(std::vector<std::string> columns);
  // A "# " line above the header (the benchmark and the layout).
  void comment(const std::string& text);
  // One line: `values` in the columns' order; a value that is not finite
  // or not positive prints as "-" (a point that did not run).
  void add_row(int64_t size, const std::vector<double>& values);
  std::string str() const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::string> comments_;
  std::vector<std::string> rows_;
  std::vector<int> widths_;
};

// MB/s as OSU prints it (10^6 bytes per second): bytes / microseconds.
double osu_mbps(int64_t bytes, double us);

}  // namespace strata::tools
