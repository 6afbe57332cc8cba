// Every tool, benchmark and app answers --version and --help with exit code
// 0 and a wrong option with exit code 2 (tools/cli/command_line.hpp); the
// byte-size options take K/M/G suffixes. The programs are run as they are
// built (MPI ones as singletons), their output read back.
#include "tool_runs.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using strata_test::built_tools;
using strata_test::find;
using strata_test::Outcome;
using strata_test::run;
using strata_test::Tool;

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// strata-bench-coll's CSV columns before --in-place added any.
constexpr const char* kCsvHeader =
    "collective,bytes,count,type,redop,algorithm,time_us,algbw_gbps,busbw_gbps,model_us,peer_us,verified";

TEST(ToolCommandLines, TheMainToolsAreBuilt) {
  const auto tools = built_tools();
  for (const char* name : {"strata-config", "strata-topo", "strata-coll-model", "strata-fault", "strata-measure"}) {
    EXPECT_NE(find(tools, name), nullptr) << name;
  }
}

TEST(ToolCommandLines, VersionNamesTheToolTheVersionAndTheCommit) {
  for (const Tool& t : built_tools()) {
    SCOPED_TRACE(t.path);
    const Outcome o = run(t.path + " --version");
    EXPECT_EQ(o.exit_code, 0) << o.output;
    const std::string expected = t.name + " " + STRATA_VERSION_TEXT + " (git ";
    EXPECT_EQ(o.output.rfind(expected, 0), 0u) << o.output;
    EXPECT_NE(o.output.find(")\n"), std::string::npos) << o.output;
  }
}

TEST(ToolCommandLines, HelpExitsZeroAndListsVersion) {
  for (const Tool& t : built_tools()) {
    SCOPED_TRACE(t.path);
    const Outcome o = run(t.path + " --help");
    EXPECT_EQ(o.exit_code, 0) << o.output;
    EXPECT_NE(o.output.find("--version"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find(t.name), std::string::npos) << "usage line without the tool's name:\n" << o.output;
  }
}

TEST(ToolCommandLines, AWrongOptionExitsTwoAndSaysWhich) {
  for (const Tool& t : built_tools()) {
    SCOPED_TRACE(t.path);
    const Outcome o = run(t.path + " --no-such-option-xyz");
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_NE(o.output.find("no-such-option-xyz"), std::string::npos) << o.output;
  }
}

TEST(ToolCommandLines, ASizeTakesSuffixesAndABadOneIsAUsageError) {
  const auto tools = built_tools();
  const Tool* coll = find(tools, "strata-bench-coll");
  if (coll == nullptr) GTEST_SKIP() << "strata-bench-coll not built (STRATA_BUILD_BENCH=OFF)";
  // 64K is accepted: the run goes past the command line and stops at the
  // wrong --type, before any timing.
  Outcome o = run(coll->path + " -b 8 -e 64K --type no-such-type");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("bad --type"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("max-bytes"), std::string::npos) << o.output;
  o = run(coll->path + " -e 64Q");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("max-bytes"), std::string::npos) << o.output;
}

// strata-bench-coll's results as nccl-tests users read them (sizes in bytes,
// the closing bus-bandwidth and #wrong lines) and as files for plots: JSON
// with the run's metadata, and CSV. One rank (a singleton), tiny sizes.
TEST(ToolCommandLines, BenchCollWritesJsonAndCsv) {
  const auto tools = built_tools();
  const Tool* coll = find(tools, "strata-bench-coll");
  if (coll == nullptr) GTEST_SKIP() << "strata-bench-coll not built (STRATA_BUILD_BENCH=OFF)";
  char dir[] = "/tmp/strata-bench-coll.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string json_path = std::string(dir) + "/out.json", csv_path = std::string(dir) + "/out.csv";
  const Outcome o = run(coll->path + " -b 64 -e 1K -f 4 -n 3 -w 1 --sample-us 10 --collectives allreduce" +
                        " --algorithms ring --json " + json_path + " --csv " + csv_path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("| allreduce | 1024 |"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("# Avg bus bandwidth"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("# #wrong (results that failed verification) : 0"), std::string::npos) << o.output;

  std::ifstream json_in(json_path);
  const nlohmann::json doc = nlohmann::json::parse(json_in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << "not JSON: " << json_path;
  EXPECT_EQ(doc.value("tool", ""), "strata-bench-coll");
  EXPECT_EQ(doc.value("version", ""), STRATA_VERSION_TEXT);
  EXPECT_FALSE(doc.value("git_commit", "").empty());
  EXPECT_NE(doc.value("command", "").find("--json"), std::string::npos);
  ASSERT_TRUE(doc.contains("rows"));
  std::vector<size_t> sizes;
  int ran = 0;
  for (const auto& row : doc["rows"]) {
    sizes.push_back(row.at("bytes").get<size_t>());
    if (!row.at("ran").get<bool>()) continue;
    ++ran;
    EXPECT_TRUE(row.at("verified").get<bool>()) << row.dump();
    EXPECT_GT(row.at("time_us").get<double>(), 0.0) << row.dump();
  }
  // 64, 256 and 1024 bytes, the peer and the ring at each.
  EXPECT_EQ(sizes, (std::vector<size_t>{64, 64, 256, 256, 1024, 1024}));
  std::ifstream csv_in(csv_path);
  std::string line;
  int lines = 0;
  while (std::getline(csv_in, line)) {
    if (lines++ == 0) {
      EXPECT_EQ(line, kCsvHeader);
    }
  }
  EXPECT_EQ(lines, ran + 1) << "a header and one line per row that ran";
  // No in-place columns unless asked for.
  EXPECT_EQ(o.output.find("in-place"), std::string::npos) << o.output;
  EXPECT_FALSE(doc["rows"][0].contains("in_place_ran"));
  std::system((std::string("rm -rf ") + dir).c_str());
}

// --in-place: nccl-tests' in-place columns after all the others, in the
// table, the JSON and the CSV, for allreduce (and allgather,
// reduce_scatter), "-" for the collectives without them (broadcast).
TEST(ToolCommandLines, BenchCollInPlaceColumnsComeLast) {
  const auto tools = built_tools();
  const Tool* coll = find(tools, "strata-bench-coll");
  if (coll == nullptr) GTEST_SKIP() << "strata-bench-coll not built (STRATA_BUILD_BENCH=OFF)";
  char dir[] = "/tmp/strata-bench-coll.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string json_path = std::string(dir) + "/out.json", csv_path = std::string(dir) + "/out.csv";
  const Outcome o = run(coll->path + " -b 64 -e 256 -f 4 -n 2 -w 1 --sample-us 10 --collectives allreduce,broadcast" +
                        " --algorithms ring --in-place --json " + json_path + " --csv " + csv_path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("| peer / this | verified | in-place µs | in-place algbw GB/s | in-place busbw GB/s | "
                          "in-place verified |\n"),
            std::string::npos)
      << o.output;
  // Each allreduce row ends with its in-place cells, verified; broadcast's are "-".
  int allreduce_rows = 0, broadcast_rows = 0;
  std::istringstream table(o.output);
  for (std::string row; std::getline(table, row);) {
    if (row.rfind("| allreduce |", 0) == 0) {
      ++allreduce_rows;
      EXPECT_TRUE(ends_with(row, "| yes |")) << row;
      EXPECT_EQ(std::count(row.begin(), row.end(), '|'), 18) << row;
    } else if (row.rfind("| broadcast |", 0) == 0) {
      ++broadcast_rows;
      EXPECT_TRUE(ends_with(row, "| - | - | - | - |")) << row;
    }
  }
  EXPECT_EQ(allreduce_rows, 4);  // 64 and 256 bytes, the peer and the ring
  EXPECT_EQ(broadcast_rows, 4);
  EXPECT_NE(o.output.find("ring in place (2 sizes)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("# #wrong (results that failed verification) : 0"), std::string::npos) << o.output;

  std::ifstream json_in(json_path);
  const nlohmann::json doc = nlohmann::json::parse(json_in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << "not JSON: " << json_path;
  for (const auto& row : doc["rows"]) {
    if (row.at("collective") == "allreduce") {
      EXPECT_TRUE(row.at("in_place_ran").get<bool>()) << row.dump();
      EXPECT_TRUE(row.at("in_place_verified").get<bool>()) << row.dump();
      EXPECT_GT(row.at("in_place_time_us").get<double>(), 0.0) << row.dump();
      EXPECT_TRUE(row.contains("in_place_busbw_gbps")) << row.dump();
    } else {
      EXPECT_FALSE(row.contains("in_place_ran")) << row.dump();
    }
  }
  std::ifstream csv_in(csv_path);
  std::string line;
  ASSERT_TRUE(std::getline(csv_in, line));
  EXPECT_EQ(line, std::string(kCsvHeader) +
                      ",in_place_time_us,in_place_algbw_gbps,in_place_busbw_gbps,"
                      "in_place_verified");
  while (std::getline(csv_in, line)) {
    const long commas = std::count(line.begin(), line.end(), ',');
    EXPECT_EQ(commas, 15) << line;
    if (line.rfind("allreduce,", 0) == 0) {
      EXPECT_TRUE(ends_with(line, ",1")) << line;
    } else {
      EXPECT_TRUE(ends_with(line, ",,,,")) << line;  // broadcast: not timed in place
    }
  }
  std::system((std::string("rm -rf ") + dir).c_str());
}

// nccl-tests' #wrong counts the results that failed verification: here the
// MPI library's allreduce (the peer row) under a preloaded MPI_Allreduce
// that flips a byte of every result. Strata's ring (not the library's
// allreduce) still verifies.
TEST(ToolCommandLines, BenchCollCountsWrongResults) {
  const auto tools = built_tools();
  const Tool* coll = find(tools, "strata-bench-coll");
  if (coll == nullptr) GTEST_SKIP() << "strata-bench-coll not built (STRATA_BUILD_BENCH=OFF)";
  const Outcome o = run(std::string("LD_PRELOAD=") + STRATA_WRONG_ALLREDUCE + " " + coll->path +
                        " -b 64 -e 256 -f 4 -n 2 -w 1 --sample-us 10 --collectives allreduce --algorithms ring");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("| allreduce | 64 | 16 | float32 | sum | MPI library (peer) | - |"), std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("wrong result |"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("# #wrong (results that failed verification) : 2"), std::string::npos) << o.output;
}

}  // namespace
