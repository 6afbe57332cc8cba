// The tools and benchmarks that write --json FILE write the same shape as
// strata-bench-coll (tools/cli/run_metadata.hpp): the run's metadata (tool,
// version, commit, command, host, UTC time), then "rows", each with the
// keys the tool's docs name. Each CPU-runnable one is run on a tiny case
// (MPI ones as singletons); a GPU-only one (strata-bench-pingpong) only has
// to list --json in its --help, and is skipped where it is not built.
#include "tool_runs.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using strata_test::built_tools;
using strata_test::find;
using strata_test::Outcome;
using strata_test::run;
using strata_test::Tool;

// A scratch folder, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    char name[] = "/tmp/strata-tool-json.XXXXXX";
    if (mkdtemp(name) != nullptr) path_ = name;
  }
  ~ScratchDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `tool` with `arguments` and --json into a scratch file; the parsed
// document (discarded JSON when the run or the file failed, with the
// failure reported).
nlohmann::json run_with_json(const Tool& tool, const std::string& arguments) {
  ScratchDir dir;
  EXPECT_FALSE(dir.path().empty());
  const std::string file = dir.path() + "/out.json";
  const Outcome o = run(tool.path + " " + arguments + " --json " + file);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  std::ifstream in(file);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << "no JSON in " << file << "; the run said:\n" << o.output;
  return doc;
}

// The metadata every tool's JSON starts with, and rows that each hold `keys`.
void expect_metadata_and_rows(const nlohmann::json& doc, const std::string& tool,
                              const std::vector<std::string>& keys) {
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.value("tool", ""), tool);
  EXPECT_EQ(doc.value("version", ""), STRATA_VERSION_TEXT);
  for (const char* key : {"git_commit", "command", "host", "time_utc"}) {
    ASSERT_TRUE(doc.contains(key)) << key;
    EXPECT_FALSE(doc[key].get<std::string>().empty()) << key;
  }
  EXPECT_NE(doc["command"].get<std::string>().find("--json"), std::string::npos);
  ASSERT_TRUE(doc.contains("rows"));
  ASSERT_TRUE(doc["rows"].is_array());
  EXPECT_FALSE(doc["rows"].empty());
  for (const auto& row : doc["rows"]) {
    for (const std::string& key : keys) EXPECT_TRUE(row.contains(key)) << key << " in " << row.dump();
  }
}

TEST(ToolJson, CollModelSweep) {
  const auto tools = built_tools();
  const Tool* tool = find(tools, "strata-coll-model");
  if (tool == nullptr) GTEST_SKIP() << "strata-coll-model not built";
  const nlohmann::json doc =
      run_with_json(*tool, "--machine frontier --ranks 8,16 --sizes 1M,64M --collectives allreduce,allgather");
  expect_metadata_and_rows(doc, "strata-coll-model", {"collective", "ranks", "shape", "bytes", "algorithm", "chosen"});
  EXPECT_EQ(doc.value("buffers", ""), "device");
  EXPECT_FALSE(doc.value("machine", "").empty());
  // 2 collectives x 2 rank counts x 2 sizes x 3 algorithms (device: library,
  // hierarchical, two_level); one chosen per point.
  ASSERT_EQ(doc["rows"].size(), 24u);
  // Every point has the library's prediction (two_level has none on one
  // node) and one choice, which has a prediction.
  int chosen = 0;
  for (const auto& row : doc["rows"]) {
    if (row["algorithm"] == "library") {
      EXPECT_GT(row.value("predicted_us", 0.0), 0.0) << row.dump();
    }
    if (!row["chosen"].get<bool>()) continue;
    ++chosen;
    EXPECT_TRUE(row.contains("predicted_us")) << row.dump();
  }
  EXPECT_EQ(chosen, 8);
}

TEST(ToolJson, CollModelZero) {
  const auto tools = built_tools();
  const Tool* tool = find(tools, "strata-coll-model");
  if (tool == nullptr) GTEST_SKIP() << "strata-coll-model not built";
  const nlohmann::json doc = run_with_json(*tool, "--machine frontier --zero 20e9 --ranks 384");
  expect_metadata_and_rows(
      doc, "strata-coll-model",
      {"ranks", "shape", "scheme", "total_us", "forward_gather_us", "backward_gather_us", "reduce_scatter_us"});
  ASSERT_TRUE(doc.contains("zero"));
  EXPECT_EQ(doc["zero"].value("params", 0.0), 20e9);
  EXPECT_EQ(doc["rows"].size(), 5u);  // the five schemes
}

TEST(ToolJson, BenchFault) {
  const auto tools = built_tools();
  const Tool* tool = find(tools, "strata-bench-fault");
  if (tool == nullptr) GTEST_SKIP() << "strata-bench-fault not built (STRATA_BUILD_BENCH=OFF)";
  const nlohmann::json doc = run_with_json(*tool, "--ops 20 --blocks 4");
  expect_metadata_and_rows(doc, "strata-bench-fault",
                           {"call", "off_us", "on_us", "overhead", "overhead_q25", "overhead_q75"});
  EXPECT_EQ(doc["rows"].size(), 3u);  // allreduce, sendrecv, bcast on host buffers
  EXPECT_EQ(doc.value("ranks", 0), 1);
  ASSERT_TRUE(doc.contains("scope_ns"));
  EXPECT_GT(doc["scope_ns"].value("collective", 0.0), 0.0);
  ASSERT_TRUE(doc.contains("parts_ns"));
}

TEST(ToolJson, BenchFusedOnHostBuffers) {
  const auto tools = built_tools();
  const Tool* tool = find(tools, "strata-bench-fused");
  if (tool == nullptr) GTEST_SKIP() << "strata-bench-fused not built (STRATA_BUILD_BENCH=OFF)";
  const nlohmann::json doc =
      run_with_json(*tool, "--host --tokens 1,5 --hidden 64 --warmup 1 --samples 2 --sample-us 20");
  expect_metadata_and_rows(doc, "strata-bench-fused", {"tokens", "hidden", "bytes", "strata_picks", "path"});
  ASSERT_EQ(doc["rows"].size(), 2u);
  EXPECT_EQ(doc["rows"][1].value("tokens", 0), 5);
  for (const auto& row : doc["rows"]) {
    EXPECT_TRUE(row.contains("peer_us")) << row.dump();
    EXPECT_TRUE(row.contains("strata_us")) << row.dump();
  }
  EXPECT_EQ(doc.value("type", ""), "bfloat16");
  EXPECT_TRUE(doc.contains("crossover_tokens"));
}

// GPU-only: it needs two ranks with GPUs to run at all.
TEST(ToolJson, BenchPingpongListsJson) {
  const auto tools = built_tools();
  const Tool* tool = find(tools, "strata-bench-pingpong");
  if (tool == nullptr) GTEST_SKIP() << "strata-bench-pingpong not built (a CUDA build only)";
  const Outcome o = run(tool->path + " --help");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("--json"), std::string::npos) << o.output;
}

}  // namespace
