// The interception table (mpi/calls/mpi_calls.hpp): its rendering in
// docs/interposer.md is the generated one, and this build's calls are
// exactly the documented calls its MPI has.
#include "interposer/calls/call_ids.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using strata::calls::Id;
using strata::calls::kCallCount;
using strata::calls::kDocumentedCallCount;
using strata::calls::kDocumentedCalls;
using strata::calls::name_of;

TEST(CallTable, DocsHoldTheGeneratedTable) {
  std::ifstream in(STRATA_SOURCE_DIR "/docs/interposer.md");
  ASSERT_TRUE(in) << "docs/interposer.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  const std::string docs = text.str();
  const std::string begin = "<!-- generated: strata-config --calls -->\n";
  const std::string end = "<!-- end of generated table -->";
  const size_t b = docs.find(begin);
  const size_t e = docs.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(docs.substr(b + begin.size(), e - b - begin.size()), strata::calls::calls_markdown())
      << "regenerate the table in docs/interposer.md with `strata-config --calls`";
}

// Which documented sections this build's MPI has.
bool built(int section) {
  if (section == 1) return MPI_VERSION >= 4;
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
  if (section == 2) return MPI_VERSION < 4;
#else
  if (section == 2) return false;
#endif
  return true;
}

TEST(CallTable, BuildHasExactlyTheDocumentedCallsOfItsMpi) {
  std::set<std::string> expected;
  for (size_t i = 0; i < kDocumentedCallCount; ++i) {
    const auto& c = kDocumentedCalls[i];
    if (!built(c.section)) continue;
    expected.insert(c.name);
    if (c.large_count && MPI_VERSION >= 4) expected.insert(std::string(c.name) + "_c");
  }
  std::set<std::string> actual;
  for (size_t i = 0; i < kCallCount; ++i) {
    EXPECT_TRUE(actual.insert(name_of(static_cast<Id>(i))).second) << name_of(static_cast<Id>(i)) << " twice";
  }
  EXPECT_EQ(actual, expected);
  EXPECT_GT(actual.size(), 150u);
}

TEST(CallTable, KindsOfLargeCountFormsAndFlushes) {
  using strata::calls::Kind;
  EXPECT_EQ(strata::calls::kind_of(Id::MPI_Allreduce), Kind::routed);
  EXPECT_EQ(strata::calls::kind_of(Id::MPI_Alltoallv), Kind::packed);
  EXPECT_EQ(strata::calls::kind_of(Id::MPI_Waitall), Kind::completion);
  EXPECT_EQ(strata::calls::kind_of(Id::MPI_Gatherv), Kind::routed);
  EXPECT_EQ(strata::calls::kind_of(Id::MPI_Scan), Kind::coll);
  EXPECT_FALSE(strata::calls::flushes(Kind::irecv));
  EXPECT_TRUE(strata::calls::flushes(Kind::coll));
#if MPI_VERSION >= 4
  // The routed collectives are staged in their large-count form.
  EXPECT_EQ(strata::calls::kind_of(Id::MPI_Allreduce_c), Kind::coll);
  EXPECT_EQ(strata::calls::kind_of(Id::MPI_Send_c), Kind::send);
  EXPECT_TRUE(strata::calls::is_large_count(Id::MPI_Send_c));
#endif
  EXPECT_FALSE(strata::calls::is_large_count(Id::MPI_Send));
}

}  // namespace
