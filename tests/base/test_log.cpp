// The logger's destination and checks: STRATA_LOG_FILE's %h/%p/%r names (one
// file per process, reopened when the rank becomes known), timestamped
// lines, and the warning with a suggestion for a misspelt STRATA_LOG_SUBSYS.
#include "base/closest_name.hpp"
#include "base/config.hpp"
#include "base/log.hpp"
#include "base/log_file.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string host() {
  char name[256] = "?";
  gethostname(name, sizeof name - 1);
  name[sizeof name - 1] = '\0';
  return name;
}

class Log : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/strata-test-log.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const char* n : {"STRATA_LOG_FILE", "STRATA_LOG", "STRATA_LOG_SUBSYS"}) unsetenv(n);
    strata::config::load(true);  // back to stderr
    strata::log::set_rank(-1);
    std::system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
};

TEST(LogFileName, Substitutions) {
  using strata::log::expand_file_name;
  EXPECT_EQ(expand_file_name("s.%h.%p.%r.log", "node7", 4242, 3), "s.node7.4242.3.log");
  EXPECT_EQ(expand_file_name("s.%r", "n", 1, -1), "s.x");
  EXPECT_EQ(expand_file_name("100%%-%q-%", "n", 1, 0), "100%-%q-%");
  EXPECT_EQ(expand_file_name("plain.log", "n", 1, 0), "plain.log");
  EXPECT_EQ(expand_file_name("", "n", 1, 0), "");
}

TEST(ClosestName, SuggestsNearNamesOnly) {
  const std::vector<std::string> names{"base", "coll", "shim", "topo", "fault"};
  EXPECT_EQ(strata::closest_name("colll", names), "coll");
  EXPECT_EQ(strata::closest_name("falt", names), "fault");
  EXPECT_EQ(strata::closest_name("zzzzzzzz", names), "");
  EXPECT_EQ(strata::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(strata::edit_distance("", "abc"), 3u);
}

TEST_F(Log, FilePerProcessReopenedWhenTheRankIsKnown) {
  setenv("STRATA_LOG_FILE", (dir_ + "/log.%h.%p.%r").c_str(), 1);
  setenv("STRATA_LOG", "warn", 1);
  strata::log::set_rank(-1);
  strata::config::load(true);
  STRATA_LOG(warn, kBase, "before the rank %d", 1);
  strata::log::set_rank(5);
  STRATA_LOG(warn, kBase, "after the rank %d", 2);
  STRATA_LOG(info, kBase, "below the level");
  const std::string stem = dir_ + "/log." + host() + "." + std::to_string(getpid()) + ".";
  const std::string before = read_file(stem + "x");
  const std::string after = read_file(stem + "5");
  EXPECT_NE(before.find("before the rank 1"), std::string::npos) << before;
  EXPECT_EQ(before.find("after the rank"), std::string::npos) << before;
  // [seconds.micros strata host:pid:rank LEVEL subsystem] text
  const std::regex line("^\\[[0-9]+\\.[0-9]{6} strata [^:]+:" + std::to_string(getpid()) +
                        ":5 WARN base\\] after the rank 2\n$");
  EXPECT_TRUE(std::regex_match(after, line)) << after;
}

TEST_F(Log, MisspeltSubsystemIsReportedWithASuggestion) {
  setenv("STRATA_LOG_FILE", (dir_ + "/log").c_str(), 1);
  setenv("STRATA_LOG", "warn", 1);
  setenv("STRATA_LOG_SUBSYS", "shim,colll", 1);
  strata::config::load(true);
  const std::string text = read_file(dir_ + "/log");
  EXPECT_NE(text.find("unknown subsystem 'colll'; did you mean 'coll'?"), std::string::npos) << text;
  EXPECT_EQ(text.find("'shim'"), std::string::npos) << text;
  // The known word still selects its subsystem.
  EXPECT_TRUE(strata::log::enabled(strata::log::Level::warn, strata::log::kShim));
  EXPECT_FALSE(strata::log::enabled(strata::log::Level::warn, strata::log::kColl));
}

TEST_F(Log, UnwritableFileLeavesTheLogOnStderr) {
  setenv("STRATA_LOG_FILE", (dir_ + "/no/such/folder/log").c_str(), 1);
  strata::config::load(true);
  EXPECT_EQ(strata::log::destination(), STDERR_FILENO);
}

}  // namespace
