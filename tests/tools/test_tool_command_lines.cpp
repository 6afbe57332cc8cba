// Every tool, benchmark and app answers --version and --help with exit code
// 0 and a wrong option with exit code 2 (tools/cli/command_line.hpp); the
// byte-size options take K/M/G suffixes. The programs are run as they are
// built (MPI ones as singletons), their output read back.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Tool {
  std::string name;  // the file name, e.g. strata-topo
  std::string path;
};

std::vector<Tool> built_tools() {
  std::vector<Tool> tools;
  const std::string list = STRATA_TOOLS;
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string entry = list.substr(at, end - at);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) tools.push_back({entry.substr(0, eq), entry.substr(eq + 1)});
    at = end + 1;
  }
  return tools;
}

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Outcome run(const std::string& command) {
  Outcome o;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return o;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) o.output.append(buffer, n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

const Tool* find(const std::vector<Tool>& tools, const std::string& name) {
  for (const Tool& t : tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

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

}  // namespace
