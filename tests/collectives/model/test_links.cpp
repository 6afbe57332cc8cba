// Link figures: STRATA_COLL_LINKS, the model file's "links" section, the
// defaults, in that order; malformed input warns and falls back. The
// registry parses the environment once: each test sets it, then reloads.
#include "collectives/model/cost_model.hpp"

#include "base/config.hpp"
#include <strata/config.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace strata::coll::model {
namespace {

class Links : public testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/strata_links_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    setenv("STRATA_CACHE_DIR", dir_.c_str(), 1);
    unsetenv("STRATA_COLL_LINKS");
    config::load(true);
  }
  void TearDown() override {
    std::remove((dir_ + "/model.json").c_str());
    rmdir(dir_.c_str());
    unsetenv("STRATA_COLL_LINKS");
    unsetenv("STRATA_CACHE_DIR");
    config::load(true);
  }
  void set_links(const char* spec) {
    setenv("STRATA_COLL_LINKS", spec, 1);
    config::load(true);
  }
  void write_model(const std::string& text) { std::ofstream(dir_ + "/model.json") << text; }
  std::string dir_;
};

void expect_same(const LinkFigures& a, const LinkFigures& b) {
  EXPECT_EQ(a.gbps, b.gbps);
  EXPECT_EQ(a.alpha_us, b.alpha_us);
  EXPECT_EQ(a.call_us, b.call_us);
  EXPECT_EQ(a.per_node, b.per_node);
}

TEST(LinkSpec, ParsesValidSpecs) {
  Result<std::vector<LinkEntry>> e = parse_link_spec("gcd:200:2, device.package:50:3:4 ,host.shm:5.5:0.5");
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e.value().size(), 3u);
  EXPECT_EQ(e.value()[0].key, "gcd");
  EXPECT_EQ(e.value()[0].scope, "");
  EXPECT_EQ(e.value()[0].link.gbps, 200);
  EXPECT_EQ(e.value()[0].link.alpha_us, 2);
  EXPECT_FALSE(e.value()[0].has_call);
  EXPECT_EQ(e.value()[1].scope, "device");
  EXPECT_EQ(e.value()[1].key, "package");
  EXPECT_TRUE(e.value()[1].has_call);
  EXPECT_EQ(e.value()[1].link.call_us, 4);
  EXPECT_EQ(e.value()[2].scope, "host");
  EXPECT_EQ(e.value()[2].link.gbps, 5.5);
  EXPECT_TRUE(parse_link_spec("").ok());
  EXPECT_TRUE(parse_link_spec("").value().empty());
}

TEST(LinkSpec, RejectsMalformedSpecs) {
  for (const char* bad : {"gcd", "gcd:200", "gcd:x:2", "gcd:0:2", "gcd:-5:2", "gcd:200:-1", ":200:2", "rack.gcd:200:2",
                          "gcd:200:2:1:9", "gcd:200:2,,node:25:5", "gcd:200:2,", "gcd:inf:2", "gcd:200:2x"}) {
    EXPECT_EQ(parse_link_spec(bad).status(), Status::invalid_argument) << bad;
  }
}

TEST(LinksJson, ParsesTheSection) {
  Result<std::vector<LinkEntry>> e = parse_links_json(
      R"({"host": {}, "links": {"host": {"shm": {"gbps": 7, "alpha_us": 0.7}},
                                "device": {"gpu": {"gbps": 300, "alpha_us": 2, "call_us": 6}}}})");
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e.value().size(), 2u);
  EXPECT_EQ(e.value()[0].scope, "host");
  EXPECT_EQ(e.value()[0].key, "shm");
  EXPECT_FALSE(e.value()[0].has_call);
  EXPECT_EQ(e.value()[1].scope, "device");
  EXPECT_EQ(e.value()[1].link.call_us, 6);
  EXPECT_EQ(parse_links_json(R"({"device": {}})").status(), Status::not_supported);
  for (const char* bad :
       {"{", "[]", R"({"links": 3})", R"({"links": {"host": {"shm": {"gbps": 0, "alpha_us": 1}}}})",
        R"({"links": {"host": {"shm": {"gbps": 5}}}})", R"({"links": {"host": {"shm": {"gbps": "5", "alpha_us": 1}}}})",
        R"({"links": {"device": {"gpu": {"gbps": 5, "alpha_us": -1}}}})"}) {
    EXPECT_EQ(parse_links_json(bad).status(), Status::invalid_argument) << bad;
  }
}

// A device entry's low-latency regime ("small"), written by strata-measure.
TEST(LinksJson, ParsesTheSmallMessageRegime) {
  Result<std::vector<LinkEntry>> e = parse_links_json(
      R"({"links": {"device": {"gpu": {"gbps": 190, "alpha_us": 1, "call_us": 9,
                                       "small": {"gbps": 30, "alpha_us": 0.5, "call_us": 6}}}}})");
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e.value().size(), 1u);
  EXPECT_EQ(e.value()[0].link.gbps, 190);
  EXPECT_EQ(e.value()[0].link.small.gbps, 30);
  EXPECT_EQ(e.value()[0].link.small.alpha_us, 0.5);
  EXPECT_EQ(e.value()[0].link.small.call_us, 6);
  Result<std::vector<LinkEntry>> own = parse_links_json(
      R"({"links": {"device": {"gpu": {"gbps": 190, "alpha_us": 1, "call_us": 9,
                                       "collectives": {"broadcast": {"gbps": 320, "alpha_us": 1, "call_us": 8,
                                                                     "small": {"gbps": 60, "alpha_us": 1, "call_us": 5},
                                                                     "small_below_bytes": 1048576},
                                                       "reduce_scatter": {"gbps": 210, "alpha_us": 0, "call_us": 12}}}}}})");
  ASSERT_TRUE(own.ok());
  const LinkFigures& l = own.value()[0].link;
  EXPECT_TRUE(l.by_collective[static_cast<size_t>(Collective::broadcast)].set);
  EXPECT_EQ(l.by_collective[static_cast<size_t>(Collective::broadcast)].bulk.gbps, 320);
  EXPECT_EQ(l.by_collective[static_cast<size_t>(Collective::broadcast)].small.gbps, 60);
  EXPECT_EQ(l.by_collective[static_cast<size_t>(Collective::broadcast)].small_below_bytes, 1048576);
  EXPECT_EQ(l.by_collective[static_cast<size_t>(Collective::reduce_scatter)].bulk.call_us, 12);
  EXPECT_EQ(l.by_collective[static_cast<size_t>(Collective::reduce_scatter)].small_below_bytes, 0);
  EXPECT_FALSE(l.by_collective[static_cast<size_t>(Collective::allreduce)].set);
  for (const char* bad : {R"({"links": {"device": {"gpu": {"gbps": 5, "alpha_us": 1, "small": 3}}}})",
                          R"({"links": {"device": {"gpu": {"gbps": 5, "alpha_us": 1,
                              "collectives": {"alltoall": {"gbps": 5, "alpha_us": 1, "call_us": 1}}}}}})",
                          R"({"links": {"device": {"gpu": {"gbps": 5, "alpha_us": 1,
                              "collectives": {"reduce": {"gbps": 5, "alpha_us": 1}}}}}})",
                          R"({"links": {"device": {"gpu": {"gbps": 5, "alpha_us": 1,
                              "collectives": {"reduce": {"gbps": 5, "alpha_us": 1, "call_us": 1,
                                                         "small_below_bytes": -1}}}}}})",
                          R"({"links": {"device": {"gpu": {"gbps": 5, "alpha_us": 1, "small": {"gbps": 2}}}}})",
                          R"({"links": {"device": {"gpu": {"gbps": 5, "alpha_us": 1,
                                                            "small": {"gbps": 0, "alpha_us": 1, "call_us": 1}}}}})"}) {
    EXPECT_EQ(parse_links_json(bad).status(), Status::invalid_argument) << bad;
  }
}

TEST_F(Links, DefaultsWithoutEnvironmentOrFile) {
  expect_same(link_figures("package", "gpu", true), default_link_figures("gpu", true));
  expect_same(link_figures("gcd", "die", false), default_link_figures("die", false));
  EXPECT_TRUE(link_figures("node", "network", true).per_node);
  EXPECT_FALSE(link_figures("package", "gpu", true).per_node);
  // An unknown class gets the slowest figures (the network's).
  EXPECT_EQ(default_link_figures("warp-drive", true).gbps, default_link_figures("network", true).gbps);
}

TEST_F(Links, EnvironmentByNameClassAndScope) {
  set_links("device.gpu:100:1,node:40:7:2,package:222:3");
  // The level name beats the class.
  EXPECT_EQ(link_figures("package", "gpu", true).gbps, 222);
  // The class, device scope; no call cost given: the class default's.
  const LinkFigures gpu = link_figures("other", "gpu", true);
  EXPECT_EQ(gpu.gbps, 100);
  EXPECT_EQ(gpu.alpha_us, 1);
  EXPECT_EQ(gpu.call_us, default_link_figures("gpu", true).call_us);
  // A device entry does not apply to host buffers.
  expect_same(link_figures("other", "gpu", false), default_link_figures("gpu", false));
  // The network's figure is per node, whatever the key.
  const LinkFigures node = link_figures("node", "network", false);
  EXPECT_EQ(node.gbps, 40);
  EXPECT_EQ(node.call_us, 2);
  EXPECT_TRUE(node.per_node);
}

TEST_F(Links, ScopedEntryBeatsUnscopedForTheSameKey) {
  set_links("gpu:100:1,device.gpu:300:2");
  EXPECT_EQ(link_figures("package", "gpu", true).gbps, 300);
  EXPECT_EQ(link_figures("package", "gpu", false).gbps, 100);
}

TEST_F(Links, MalformedEnvironmentFallsBack) {
  write_model(R"({"links": {"device": {"gpu": {"gbps": 123, "alpha_us": 4}}}})");
  set_links("gpu:fast:1");
  testing::internal::CaptureStderr();
  const LinkFigures f = link_figures("package", "gpu", true);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(f.gbps, 123);  // the model file, the next source
  EXPECT_NE(err.find("STRATA_COLL_LINKS"), std::string::npos) << err;
}

TEST_F(Links, ModelFileSection) {
  write_model(R"({"strata_model": 1, "links": {"host": {"shm": {"gbps": 7, "alpha_us": 0.7, "call_us": 0.3}},
                                               "device": {"network": {"gbps": 100, "alpha_us": 6}}}})");
  const LinkFigures shm = link_figures("package", "shm", false);
  EXPECT_EQ(shm.gbps, 7);
  EXPECT_EQ(shm.alpha_us, 0.7);
  EXPECT_EQ(shm.call_us, 0.3);
  const LinkFigures net = link_figures("node", "network", true);
  EXPECT_EQ(net.gbps, 100);
  EXPECT_TRUE(net.per_node);
  expect_same(link_figures("node", "network", false), default_link_figures("network", false));
  // The environment beats the file.
  set_links("host.shm:9:1");
  EXPECT_EQ(link_figures("package", "shm", false).gbps, 9);
}

TEST_F(Links, ModelFileWithoutOrWithBrokenSection) {
  write_model(R"({"strata_model": 1, "host": {"memcpy_gbps": 10}})");
  expect_same(link_figures("package", "shm", false), default_link_figures("shm", false));
  write_model(R"({"links": {"host": {"shm": {"gbps": -7, "alpha_us": 0.7}}}})");
  testing::internal::CaptureStderr();
  expect_same(link_figures("package", "shm", false), default_link_figures("shm", false));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("model.json"), std::string::npos);
}

}  // namespace
}  // namespace strata::coll::model
