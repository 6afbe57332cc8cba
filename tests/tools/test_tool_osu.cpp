// OSU micro-benchmark style output (tools/cli/osu_table.hpp): the layout
// osu_latency and osu_bw print (# Size left in 10 characters, values right
// in 20 with 2 decimals), and strata-bench-pack --osu end to end: one
// section per datatype shape whose bandwidths are the sizes over the
// latencies and whose ratio is the library's latency over Strata's.
#include "tool_runs.hpp"
#include "tools/cli/osu_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using strata_test::built_tools;
using strata_test::find;
using strata_test::Outcome;
using strata_test::run;
using strata_test::Tool;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(OsuTable, HeaderAndRowsAreLaidOutLikeOsu) {
  strata::tools::OsuTable table({"Latency (us)", "Strata Bandwidth (MB/s)"});
  table.comment("vector, blocks of 8 B");
  table.add_row(1024, {1.5, 2048.0 / 3});
  table.add_row(1048576, {12345.678, NAN});
  const auto lines = lines_of(table.str());
  ASSERT_EQ(lines.size(), 4u) << table.str();
  EXPECT_EQ(lines[0], "# vector, blocks of 8 B");
  // "Strata Bandwidth (MB/s)" is 23 characters: its column is 25 wide.
  EXPECT_EQ(lines[1], "# Size            Latency (us)  Strata Bandwidth (MB/s)");
  EXPECT_EQ(lines[2], "1024                      1.50                   682.67");
  EXPECT_EQ(lines[3], "1048576               12345.68                        -");
}

TEST(OsuTable, MegabytesPerSecondAreBytesPerMicrosecond) {
  EXPECT_DOUBLE_EQ(strata::tools::osu_mbps(1 << 20, 100.0), 10485.76);
  EXPECT_TRUE(std::isnan(strata::tools::osu_mbps(64, 0.0)));
}

// One section of strata-bench-pack --osu: its shape line and rows.
struct Section {
  std::string shape;
  std::vector<std::vector<double>> rows;  // size, MPI us, Strata us, MPI MB/s, Strata MB/s, ratio
};

TEST(ToolOsu, BenchPackPrintsOsuColumnsPerShape) {
  const auto tools = built_tools();
  const Tool* tool = find(tools, "strata-bench-pack");
  if (tool == nullptr) GTEST_SKIP() << "strata-bench-pack not built";
  // The progress lines on stderr are not part of the table.
  const Outcome o = run("(" + tool->path +
                        " --quick --osu --types vector,subarray --blocks 8,64 --sizes 4K,64K --memcpy-bytes 4M "
                        "--min-time-ms 1 2>/dev/null)");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  std::vector<Section> sections;
  for (const std::string& line : lines_of(o.output)) {
    if (line.rfind("# vector", 0) == 0 || line.rfind("# subarray", 0) == 0) {
      sections.push_back({line.substr(2), {}});
    } else if (line.rfind("# Size", 0) == 0) {
      ASSERT_FALSE(sections.empty()) << "a header before its shape line:\n" << o.output;
      EXPECT_NE(line.find("MPI Latency (us)"), std::string::npos) << line;
      EXPECT_NE(line.find("Strata Bandwidth (MB/s)"), std::string::npos) << line;
    } else if (!line.empty() && line[0] != '#') {
      ASSERT_FALSE(sections.empty()) << "a row before any shape:\n" << o.output;
      std::istringstream in(line);
      std::vector<double> row;
      for (double v = 0; in >> v;) row.push_back(v);
      EXPECT_TRUE(in.eof()) << "not all numbers: " << line;
      ASSERT_EQ(row.size(), 6u) << line;
      sections.back().rows.push_back(row);
    }
  }
  ASSERT_EQ(sections.size(), 4u) << o.output;  // 2 types x 2 blocks
  EXPECT_EQ(sections[0].shape, "vector, blocks of 8 B at stride 512 B");
  for (const Section& s : sections) {
    ASSERT_EQ(s.rows.size(), 2u) << s.shape;
    EXPECT_EQ(s.rows[0][0], 4096) << s.shape;
    EXPECT_EQ(s.rows[1][0], 65536) << s.shape;
    for (const auto& r : s.rows) {
      // The latencies are printed with 2 decimals (0.005 us off at most):
      // compare within what that rounding allows.
      const double lib = 0.005 / r[1], ours = 0.005 / r[2];
      EXPECT_NEAR(r[3], r[0] / r[1], r[3] * lib * 1.01 + 0.01) << s.shape;
      EXPECT_NEAR(r[4], r[0] / r[2], r[4] * ours * 1.01 + 0.01) << s.shape;
      EXPECT_NEAR(r[5], r[1] / r[2], r[5] * (lib + ours) * 1.01 + 0.01) << s.shape;
    }
  }
  // Nothing of the default table.
  EXPECT_EQ(o.output.find("ratio lib/ours"), std::string::npos) << o.output;
}

TEST(ToolOsu, BenchPackOsuExcludesMarkdown) {
  const auto tools = built_tools();
  const Tool* tool = find(tools, "strata-bench-pack");
  if (tool == nullptr) GTEST_SKIP() << "strata-bench-pack not built";
  const Outcome o = run(tool->path + " --osu --markdown");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("excludes"), std::string::npos) << o.output;
}

}  // namespace
