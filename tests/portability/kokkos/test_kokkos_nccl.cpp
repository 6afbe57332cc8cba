// Kokkos Views through strata/kokkos_nccl.hpp (isend / irecv / send / recv
// over the collectives' point-to-point calls), run with 1 rank (a rank
// sending to itself in a group) and 2 ranks. Written once for two spaces:
// Host (the MPI path of coll::send; what CI runs) and Device (NCCL on the
// space's stream; the _gpu variants). The Device cases skip, on every rank
// alike and with the reason, when Kokkos has no GPU backend, when no NCCL
// library loads, or when two ranks share a GPU (NCCL refuses that; the
// collectives would stage through host memory instead).
//
// Every rank sends random subviews (LayoutLeft, LayoutRight, LayoutStride;
// rank 1-3; 1-, 4- and 8-byte elements, so odd byte counts too) and
// receives each into a subview of the same extents of a differently shaped,
// randomly filled View. The receiver rebuilds the sender's View from the
// shared seed and checks its whole allocation, on a host mirror, against
// the naive element loop: the sender's elements in the sender's packing
// order placed in the receiver's, nothing else touched.
// STRATA_TEST_SEED=<seed> replays a run (all ranks use rank 0's seed).
#include <strata/kokkos_nccl.hpp>

#include "portability/kokkos/kokkos_message_util.hpp"
#include "portability/kokkos/kokkos_test_util.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace {

using namespace strata_test;
namespace sk = strata::kokkos;
namespace skn = strata::kokkos::nccl;
using strata::Status;

// Elements of a sender's View at most (send_spec).
constexpr int64_t kBudget = 1200;

// --- why a Device case cannot run here ------------------------------------

bool nccl_loadable() {
  std::vector<std::string> names;
  if (const char* p = std::getenv("STRATA_NCCL_LIBRARY"); p != nullptr && *p != '\0') {
    names.emplace_back(p);
  } else {
    names = {"libnccl.so.2", "libnccl.so", "librccl.so.1", "librccl.so"};
  }
  for (const std::string& name : names) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      dlclose(h);
      return true;
    }
  }
  return false;
}

// The GPU Kokkos runs this rank on (-1 for host spaces).
template <class Space>
int gpu_of(const Space& space) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<Space, Kokkos::Cuda>::value) return space.cuda_device();
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
  if constexpr (std::is_same<Space, Kokkos::HIP>::value) return space.hip_device();
#endif
  (void)space;
  return -1;
}

// Collective: do two ranks of one host run on the same GPU?
bool ranks_share_a_gpu(int gpu) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  const int n = world_size();
  std::vector<char> names(static_cast<size_t>(n) * MPI_MAX_PROCESSOR_NAME);
  std::vector<int> gpus(static_cast<size_t>(n));
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Allgather(&gpu, 1, MPI_INT, gpus.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::set<std::pair<std::string, int>> seen;
  for (int r = 0; r < n; ++r) {
    const std::string host(names.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME);
    if (gpus[static_cast<size_t>(r)] >= 0 && !seen.emplace(host, gpus[static_cast<size_t>(r)]).second) return true;
  }
  return false;
}

// "" when the case can run; decided alike on every rank (collective).
template <class Where>
std::string skip_reason() {
  if (!std::is_same<Where, Device>::value) return "";
  if (!kHaveDeviceSpace) {
    return std::string("Kokkos has no GPU backend in this build (default space ") +
           Kokkos::DefaultExecutionSpace::name() + ")";
  }
  std::string reason;
  if (!nccl_loadable()) reason = "no NCCL library loads (libnccl.so.2, librccl.so.1 or STRATA_NCCL_LIBRARY)";
  const bool shared = ranks_share_a_gpu(gpu_of(typename Where::space()));
  if (reason.empty() && shared) reason = "two ranks share a GPU (NCCL refuses one communicator over them)";
  if (!all_ranks_agree(reason.empty()) && reason.empty()) reason = "another rank cannot run it (see its reason)";
  return reason;
}

#define STRATA_NCCL_START(Where)                                 \
  do {                                                           \
    const std::string strata_reason_ = skip_reason<Where>();     \
    if (!strata_reason_.empty()) GTEST_SKIP() << strata_reason_; \
  } while (0)

// --- the messages -----------------------------------------------------------

// How a round posts its transfers.
enum class Mode {
  grouped,  // every receive and send in one group, then wait_all
  polling,  // grouped, then test() until done
  blocking  // pairs (0,1), (2,3)...: blocking send and recv, the even rank first
};
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::grouped: return "grouped";
    case Mode::polling: return "polling";
    case Mode::blocking: return "blocking";
  }
  return "?";
}

// Who a rank sends to and receives from.
enum class Pattern { self, ring, all };

std::vector<int> peers(Pattern p, bool sending) {
  const int me = world_rank(), n = world_size();
  switch (p) {
    case Pattern::self: return {me};
    case Pattern::ring: return {sending ? (me + 1) % n : (me + n - 1) % n};
    case Pattern::all: {
      std::vector<int> all;
      for (int r = 0; r < n; ++r) all.push_back(r);
      return all;
    }
  }
  return {};
}

template <class Where, class T, int R, class L>
void run_round(int round, Pattern pattern, Mode mode) {
  using Space = typename Where::space;
  using Mem = typename Space::memory_space;
  using V = ViewOf<T, R, L, Mem>;
  constexpr bool strided = std::is_same<L, Kokkos::LayoutStride>::value;
  const uint64_t seed = shared_seed("test_kokkos_nccl");
  const int me = world_rank();
  Space space;

  std::ostringstream what;
  what << mode_name(mode) << " round " << round << " " << (strided ? "LayoutStride" : typeid(L).name()) << " rank " << R
       << " " << sizeof(T) << "-byte elements; replay: STRATA_TEST_SEED=" << seed;
  SCOPED_TRACE(what.str());

  const SendSpec mine = send_spec<T, R, L>(seed, round, me, kBudget);
  V send_base = make_view<V>("send", mine.shape);
  upload<Mem>(send_base.data(), contents_of(seed, round, me, send_base));
  auto send_sub = make_subview(send_base, mine.bounds);

  std::vector<Incoming<V>> in = receive_views<T, R, L, V>(seed, round, kBudget, peers(pattern, false));

  if (mode == Mode::blocking) {
    // Pairs: the even rank sends, then receives; the odd one the other way.
    ASSERT_EQ(in.size(), 1u);
    const int partner = in[0].from;
    auto recv_sub = make_subview(in[0].base, in[0].bounds);
    if (me % 2 == 0) {
      ASSERT_EQ(skn::send(space, send_sub, partner, MPI_COMM_WORLD), Status::ok);
      ASSERT_EQ(skn::recv(space, recv_sub, partner, MPI_COMM_WORLD), Status::ok);
    } else {
      ASSERT_EQ(skn::recv(space, recv_sub, partner, MPI_COMM_WORLD), Status::ok);
      ASSERT_EQ(skn::send(space, send_sub, partner, MPI_COMM_WORLD), Status::ok);
    }
  } else {
    std::vector<sk::Request> requests;
    ASSERT_EQ(skn::group_start(), Status::ok);
    for (Incoming<V>& x : in) {
      auto r = skn::irecv(space, make_subview(x.base, x.bounds), x.from, MPI_COMM_WORLD);
      ASSERT_TRUE(r.ok()) << strata::to_string(r.status());
      requests.push_back(std::move(r).value());
    }
    for (int p : peers(pattern, true)) {
      auto r = skn::isend(space, send_sub, p, MPI_COMM_WORLD);
      ASSERT_TRUE(r.ok()) << strata::to_string(r.status());
      requests.push_back(std::move(r).value());
    }
    ASSERT_EQ(skn::group_end(), Status::ok);
    if (mode == Mode::polling) {
      for (sk::Request& r : requests) {
        bool done = false;
        while (!done) ASSERT_EQ(r.test(&done), Status::ok);
        EXPECT_FALSE(r.active());
      }
    } else {
      ASSERT_EQ(sk::wait_all(requests.data(), requests.size()), Status::ok);
    }
  }

  // Every receive against the oracle, on host copies.
  for (const Incoming<V>& x : in) {
    ASSERT_EQ((received_difference<T, R, L>(seed, round, kBudget, x, sk::Order::layout)), "") << "from rank " << x.from;
  }
  // The send View is only read.
  const Bytes after = download<Mem>(send_base.data(), send_base.span() * sizeof(T));
  const Bytes before = contents_of(seed, round, me, send_base);
  ASSERT_EQ(first_difference(before.data(), after.data(), before.size(), "send View"), "");
}

template <class Where, class T, int R>
void run_layouts(int round, Pattern pattern, Mode mode) {
  run_round<Where, T, R, Kokkos::LayoutLeft>(round, pattern, mode);
  run_round<Where, T, R, Kokkos::LayoutRight>(round, pattern, mode);
  run_round<Where, T, R, Kokkos::LayoutStride>(round, pattern, mode);
}

template <class Where>
void run_all(Pattern pattern, Mode mode, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    run_layouts<Where, double, 1>(round, pattern, mode);
    run_layouts<Where, uint8_t, 1>(round, pattern, mode);
    run_layouts<Where, float, 2>(round, pattern, mode);
    run_layouts<Where, uint8_t, 2>(round, pattern, mode);
    run_layouts<Where, double, 3>(round, pattern, mode);
    run_layouts<Where, uint8_t, 3>(round, pattern, mode);
  }
}

template <class Where>
class KokkosNccl : public testing::Test {};
using Spaces = testing::Types<Host, Device>;
TYPED_TEST_SUITE(KokkosNccl, Spaces, SpaceNames);

// A rank sends to itself: a receive and a send in one group (one GPU is
// enough for NCCL).
TYPED_TEST(KokkosNccl, SelfGrouped) {
  STRATA_NCCL_START(TypeParam);
  run_all<TypeParam>(Pattern::self, Mode::grouped, 4);
}

TYPED_TEST(KokkosNccl, SelfPolling) {
  STRATA_NCCL_START(TypeParam);
  run_all<TypeParam>(Pattern::self, Mode::polling, 1);
}

TYPED_TEST(KokkosNccl, RingGrouped) {
  STRATA_REQUIRE_RANKS(2);
  STRATA_NCCL_START(TypeParam);
  run_all<TypeParam>(Pattern::ring, Mode::grouped, 4);
}

// Every rank to every rank, itself included, in one group per View type.
TYPED_TEST(KokkosNccl, AllPairsGrouped) {
  STRATA_REQUIRE_RANKS(2);
  STRATA_NCCL_START(TypeParam);
  run_all<TypeParam>(Pattern::all, Mode::grouped, 2);
}

TYPED_TEST(KokkosNccl, BlockingPairs) {
  STRATA_REQUIRE_RANKS(2);
  if (world_size() % 2 != 0) GTEST_SKIP() << "pairs need an even number of ranks";
  STRATA_NCCL_START(TypeParam);
  // The partner is the ring neighbour: with 2 ranks, the other rank.
  if (world_size() != 2) GTEST_SKIP() << "the blocking round pairs the two ranks of a 2-rank job";
  run_all<TypeParam>(Pattern::ring, Mode::blocking, 2);
}

// Contiguous Views go in place; an empty View and MPI_PROC_NULL move
// nothing; the request keeps a View whose last handle the caller dropped; a
// request cannot complete inside its own group (invalid_argument, still
// active) and does once it has ended; blocking calls are refused in a group.
TYPED_TEST(KokkosNccl, ContiguousEmptyProcNullAndGroups) {
  STRATA_NCCL_START(TypeParam);
  using Space = typename TypeParam::space;
  using Mem = typename Space::memory_space;
  Space space;
  const int me = world_rank();
  const int n = world_size();
  const int right = (me + 1) % n;
  const int left = (me + n - 1) % n;
  Kokkos::View<int**, Kokkos::LayoutRight, Mem> got("got", 5, 7);
  sk::Request recv, send;
  ASSERT_EQ(skn::group_start(), Status::ok);
  {
    auto r = skn::irecv(space, Kokkos::subview(got, std::make_pair(1, 4), Kokkos::ALL), left, MPI_COMM_WORLD);
    ASSERT_TRUE(r.ok());
    recv = std::move(r).value();
  }
  {
    Kokkos::View<int*, Mem> out("out", 21);  // dropped right after isend: the request keeps it
    auto h = Kokkos::create_mirror_view(out);
    for (int i = 0; i < 21; ++i) h(i) = 1000 * me + i;
    Kokkos::deep_copy(out, h);
    auto r = skn::isend(space, out, right, MPI_COMM_WORLD);
    ASSERT_TRUE(r.ok());
    send = std::move(r).value();
  }
  EXPECT_EQ(skn::send(space, got, right, MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(recv.wait(), Status::invalid_argument);  // its group is still open
  EXPECT_TRUE(recv.active());
  bool done = true;
  EXPECT_EQ(recv.test(&done), Status::ok);
  EXPECT_FALSE(done);
  ASSERT_EQ(skn::group_end(), Status::ok);
  ASSERT_EQ(send.wait(), Status::ok);
  ASSERT_EQ(recv.wait(), Status::ok);
  EXPECT_FALSE(recv.active());
  auto hg = Kokkos::create_mirror_view(got);
  Kokkos::deep_copy(hg, got);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 7; ++j) {
      const int want = (i >= 1 && i < 4) ? 1000 * left + (i - 1) * 7 + j : 0;
      ASSERT_EQ(hg(i, j), want) << i << "," << j;
    }
  }
  // Empty Views and MPI_PROC_NULL: nothing moves, the View is untouched.
  Kokkos::View<double*, Mem> none("none", 0);
  auto er = skn::irecv(space, none, left, MPI_COMM_WORLD);
  ASSERT_TRUE(er.ok());
  EXPECT_FALSE(er.value().active());
  ASSERT_EQ(skn::send(space, none, right, MPI_COMM_WORLD), Status::ok);
  ASSERT_EQ(skn::recv(space, got, MPI_PROC_NULL, MPI_COMM_WORLD), Status::ok);
  ASSERT_EQ(skn::send(space, got, MPI_PROC_NULL, MPI_COMM_WORLD), Status::ok);
  Kokkos::deep_copy(hg, got);
  ASSERT_EQ(hg(1, 0), 1000 * left);
  // Outside a group, a message to oneself is refused (it needs a group).
  EXPECT_EQ(skn::send(space, got, me, MPI_COMM_WORLD), Status::invalid_argument);
}

// Requests destroyed while their group is still open cannot complete: they
// keep their temporaries (logged) so that the transfers group_end posts
// later write into live memory (AddressSanitizer checks it in the asan
// stage); the receive's unpack never runs.
TYPED_TEST(KokkosNccl, RequestsDestroyedInsideTheirGroup) {
  STRATA_NCCL_START(TypeParam);
  using Space = typename TypeParam::space;
  using Mem = typename Space::memory_space;
  Space space;
  const int me = world_rank();
  Kokkos::View<double**, Kokkos::LayoutLeft, Mem> a("a", 8, 8), b("b", 8, 8);
  Kokkos::deep_copy(a, 1.5);
  ASSERT_EQ(skn::group_start(), Status::ok);
  {
    auto r = skn::irecv(space, Kokkos::subview(b, 3, Kokkos::ALL), me, MPI_COMM_WORLD);  // strided: a temporary
    auto s = skn::isend(space, Kokkos::subview(a, 2, Kokkos::ALL), me, MPI_COMM_WORLD);
    ASSERT_TRUE(r.ok() && s.ok());
    EXPECT_TRUE(r.value().active());
  }
  ASSERT_EQ(skn::group_end(), Status::ok);
  space.fence();
  auto hb = Kokkos::create_mirror_view(b);
  Kokkos::deep_copy(hb, b);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) ASSERT_EQ(hb(i, j), 0.0) << i << "," << j;
  }
}

}  // namespace
