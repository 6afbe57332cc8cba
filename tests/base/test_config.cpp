// The STRATA_* registry: typed parsing, defaults, warnings for invalid values
// and unknown names, and the rule that docs/ lists every variable.
#include "base/config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using strata::config::BoolParam;
using strata::config::ChoiceParam;
using strata::config::IntParam;
using strata::config::StringParam;

enum class Fruit { apple, pear };

BoolParam g_flag{"STRATA_TEST_ONLY_FLAG", false, "a test flag"};
IntParam g_size{"STRATA_TEST_ONLY_SIZE", 4096, "a test size", 0, int64_t{1} << 40, true};
IntParam g_bounded{"STRATA_TEST_ONLY_BOUNDED", 5, "a bounded int", 1, 10};
StringParam g_text{"STRATA_TEST_ONLY_TEXT", "hello", "a test string"};
ChoiceParam<Fruit> g_fruit{
    "STRATA_TEST_ONLY_FRUIT", Fruit::apple, {{"apple", Fruit::apple}, {"pear", Fruit::pear}}, "a test choice"};

class Config : public testing::Test {
 protected:
  void TearDown() override {
    for (const char* n : {"STRATA_TEST_ONLY_FLAG", "STRATA_TEST_ONLY_SIZE", "STRATA_TEST_ONLY_BOUNDED",
                          "STRATA_TEST_ONLY_TEXT", "STRATA_TEST_ONLY_FRUIT", "STRATA_HOST_PAK", "STRATA_ZZZZZZZZZ"}) {
      unsetenv(n);
    }
    strata::config::load(true);
  }
  static bool warned_about(const std::string& needle) {
    auto w = strata::config::load_warnings();
    return std::any_of(w.begin(), w.end(), [&](const std::string& s) { return s.find(needle) != std::string::npos; });
  }
};

TEST_F(Config, DefaultsWithoutEnvironment) {
  strata::config::load(true);
  EXPECT_FALSE(g_flag.get());
  EXPECT_EQ(g_size.get(), 4096);
  EXPECT_EQ(g_text.get(), "hello");
  EXPECT_EQ(g_fruit.get(), Fruit::apple);
  EXPECT_FALSE(g_flag.from_environment());
}

TEST_F(Config, ParsesEveryType) {
  setenv("STRATA_TEST_ONLY_FLAG", "Yes", 1);
  setenv("STRATA_TEST_ONLY_SIZE", "3M", 1);
  setenv("STRATA_TEST_ONLY_TEXT", "a b", 1);
  setenv("STRATA_TEST_ONLY_FRUIT", "PEAR", 1);
  strata::config::load(true);
  EXPECT_TRUE(g_flag.get());
  EXPECT_TRUE(g_flag.from_environment());
  EXPECT_EQ(g_size.get(), 3 << 20);
  EXPECT_EQ(g_text.get(), "a b");
  EXPECT_EQ(g_fruit.get(), Fruit::pear);
  setenv("STRATA_TEST_ONLY_SIZE", "2KiB", 1);
  setenv("STRATA_TEST_ONLY_FLAG", "off", 1);
  strata::config::load(true);
  EXPECT_EQ(g_size.get(), 2048);
  EXPECT_FALSE(g_flag.get());
}

TEST_F(Config, InvalidValuesWarnAndKeepTheDefault) {
  setenv("STRATA_TEST_ONLY_FLAG", "maybe", 1);
  setenv("STRATA_TEST_ONLY_BOUNDED", "11", 1);  // above the maximum
  setenv("STRATA_TEST_ONLY_FRUIT", "plum", 1);
  setenv("STRATA_TEST_ONLY_SIZE", "12Q", 1);
  strata::config::load(true);
  EXPECT_FALSE(g_flag.get());
  EXPECT_EQ(g_bounded.get(), 5);
  EXPECT_EQ(g_fruit.get(), Fruit::apple);
  EXPECT_EQ(g_size.get(), 4096);
  EXPECT_TRUE(warned_about("invalid value 'maybe' for STRATA_TEST_ONLY_FLAG"));
  EXPECT_TRUE(warned_about("STRATA_TEST_ONLY_BOUNDED"));
  EXPECT_TRUE(warned_about("apple|pear"));
  EXPECT_TRUE(warned_about("STRATA_TEST_ONLY_SIZE"));
}

TEST_F(Config, UnknownNamesWarnWithASuggestion) {
  setenv("STRATA_HOST_PAK", "always", 1);
  setenv("STRATA_ZZZZZZZZZ", "1", 1);
  strata::config::load(true);
  EXPECT_TRUE(warned_about("unknown variable STRATA_HOST_PAK; did you mean STRATA_HOST_PACK?"));
  EXPECT_TRUE(warned_about("unknown variable STRATA_ZZZZZZZZZ"));
  EXPECT_FALSE(warned_about("STRATA_ZZZZZZZZZ; did you mean"));
}

TEST_F(Config, ListsEveryParameterSortedOnce) {
  auto params = strata::config::parameters();
  EXPECT_TRUE(
      std::is_sorted(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.name < b.name; }));
  for (size_t i = 1; i < params.size(); ++i) EXPECT_NE(params[i - 1].name, params[i].name) << "declared twice";
  for (const auto& p : params) {
    EXPECT_EQ(p.name.rfind("STRATA_", 0), 0u) << p.name;
    EXPECT_FALSE(p.help.empty()) << p.name;
  }
}

// Every variable the library declares appears in docs/configuration.md.
TEST_F(Config, EveryVariableIsDocumented) {
  std::ifstream in(STRATA_SOURCE_DIR "/docs/configuration.md");
  ASSERT_TRUE(in) << "docs/configuration.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  const std::string docs = text.str();
  size_t library_params = 0;
  for (const auto& p : strata::config::parameters()) {
    if (p.name.rfind("STRATA_TEST_", 0) == 0) continue;  // this test's own
    ++library_params;
    EXPECT_NE(docs.find("`" + p.name + "`"), std::string::npos) << p.name << " is not in docs/configuration.md";
  }
  EXPECT_GT(library_params, 5u);
}

}  // namespace
