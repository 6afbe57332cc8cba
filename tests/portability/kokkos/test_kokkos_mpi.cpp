// MPI send and receive of Kokkos subviews (strata::kokkos::isend / irecv /
// send / recv), run with 2 and 4 ranks. Every rank sends a random subview
// (every layout, ranks 1, 2, 3, 5 and 8, 1- and 8-byte elements) to every
// other rank, which receives it into a subview of the same extents of a
// differently shaped View (other padding, offsets and, for LayoutStride,
// dimension order). The receiver rebuilds the sender's View from the shared
// seed and checks its whole allocation against the naive oracle: the
// sender's elements in the sender's packing order, placed in the receiver's
// order, nothing else touched. Variants: nonblocking with wait_all, test()
// polling, blocking send against a posted receive, forced host staging,
// messages split into many pieces, contiguous Views (sent in place), empty
// subviews, MPI_PROC_NULL, and a receive whose message is too short.
// STRATA_TEST_SEED=<seed> replays a run (all ranks use rank 0's seed).
#include "portability/kokkos/kokkos_message_util.hpp"
#include "portability/kokkos/kokkos_test_util.hpp"
#include "support/mpi_test.hpp"

#include "portability/kokkos/testing.hpp"
#include "portability/mover/counters.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

namespace {

using namespace strata_test;
namespace sk = strata::kokkos;

// Elements of a sender's View at most (send_spec).
constexpr int64_t kBudget = 1500;

// How a round moves its messages.
enum class Mode { nonblocking, polling, blocking_send, staged, pieces, explicit_order };
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::nonblocking: return "nonblocking";
    case Mode::polling: return "polling";
    case Mode::blocking_send: return "blocking_send";
    case Mode::staged: return "staged";
    case Mode::pieces: return "pieces";
    case Mode::explicit_order: return "explicit_order";
  }
  return "?";
}

// One round of all-to-all exchanges of subviews of type (T, R, L).
template <class Where, class T, int R, class L>
void exchange_round(int round, Mode mode) {
  using Space = typename Where::space;
  using Mem = typename Space::memory_space;
  using V = ViewOf<T, R, L, Mem>;
  constexpr bool strided = std::is_same<L, Kokkos::LayoutStride>::value;
  const uint64_t seed = shared_seed("test_kokkos_mpi");
  const int me = world_rank();
  const int n = world_size();
  Space space;
  sk::CommOptions options;
  if (mode == Mode::staged) options.device_path = sk::DevicePath::staged;
  if (mode == Mode::explicit_order) options.order = round % 2 ? sk::Order::left : sk::Order::right;
  if (mode == Mode::pieces) sk::detail::set_max_piece_bytes(1 + (round % 7) * 13);

  std::ostringstream what;
  what << mode_name(mode) << " round " << round << " " << (strided ? "LayoutStride" : typeid(L).name()) << " rank " << R
       << " " << sizeof(T) << "-byte elements; replay: STRATA_TEST_SEED=" << seed;
  SCOPED_TRACE(what.str());

  // My send View (rebuildable by everyone).
  const SendSpec mine = send_spec<T, R, L>(seed, round, me, kBudget);
  V send_base = make_view<V>("send", mine.shape);
  upload<Mem>(send_base.data(), contents_of(seed, round, me, send_base));
  auto send_sub = make_subview(send_base, mine.bounds);

  // One receive View per peer.
  std::vector<int> senders;
  for (int p = 0; p < n; ++p) {
    if (p != me) senders.push_back(p);
  }
  std::vector<Incoming<V>> in = receive_views<T, R, L, V>(seed, round, kBudget, senders);

  // Post, move, complete.
  std::vector<sk::Request> requests;
  for (Incoming<V>& x : in) {
    auto r = sk::irecv(space, make_subview(x.base, x.bounds), x.from, round * 16 + x.from, MPI_COMM_WORLD, options);
    ASSERT_TRUE(r.ok()) << strata::to_string(r.status());
    requests.push_back(std::move(r).value());
  }
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    if (mode == Mode::blocking_send) {
      ASSERT_EQ(sk::send(space, send_sub, p, round * 16 + me, MPI_COMM_WORLD, options), strata::Status::ok);
    } else {
      auto r = sk::isend(space, send_sub, p, round * 16 + me, MPI_COMM_WORLD, options);
      ASSERT_TRUE(r.ok()) << strata::to_string(r.status());
      requests.push_back(std::move(r).value());
    }
  }
  if (mode == Mode::polling) {
    for (sk::Request& r : requests) {
      bool done = false;
      while (!done) ASSERT_EQ(r.test(&done), strata::Status::ok);
      EXPECT_FALSE(r.active());
    }
  } else {
    ASSERT_EQ(sk::wait_all(requests.data(), requests.size()), strata::Status::ok);
  }
  if (mode == Mode::pieces) sk::detail::set_max_piece_bytes(0);

  // Check every receive against the oracle.
  for (const Incoming<V>& x : in) {
    ASSERT_EQ((received_difference<T, R, L>(seed, round, kBudget, x, options.order)), "") << "from rank " << x.from;
  }
}

template <class Where, class T, int R>
void exchange_layouts(int round, Mode mode) {
  exchange_round<Where, T, R, Kokkos::LayoutLeft>(round, mode);
  exchange_round<Where, T, R, Kokkos::LayoutRight>(round, mode);
  exchange_round<Where, T, R, Kokkos::LayoutStride>(round, mode);
}

template <class Where>
void exchange_all(Mode mode, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    exchange_layouts<Where, double, 1>(round, mode);
    exchange_layouts<Where, double, 2>(round, mode);
    exchange_layouts<Where, uint8_t, 3>(round, mode);
    exchange_layouts<Where, double, 5>(round, mode);
    exchange_layouts<Where, uint8_t, 8>(round, mode);
  }
}

template <class Where>
class KokkosMpi : public testing::Test {};
using Spaces = testing::Types<Host, Device>;
TYPED_TEST_SUITE(KokkosMpi, Spaces, SpaceNames);

#define STRATA_KOKKOS_MPI_START()        \
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam); \
  STRATA_REQUIRE_RANKS(2)

TYPED_TEST(KokkosMpi, NonblockingAllToAll) {
  STRATA_KOKKOS_MPI_START();
  exchange_all<TypeParam>(Mode::nonblocking, 6);
}
TYPED_TEST(KokkosMpi, TestPolling) {
  STRATA_KOKKOS_MPI_START();
  exchange_all<TypeParam>(Mode::polling, 2);
}
TYPED_TEST(KokkosMpi, BlockingSend) {
  STRATA_KOKKOS_MPI_START();
  exchange_all<TypeParam>(Mode::blocking_send, 2);
}
TYPED_TEST(KokkosMpi, ForcedHostStaging) {
  STRATA_KOKKOS_MPI_START();
  exchange_all<TypeParam>(Mode::staged, 3);
}
TYPED_TEST(KokkosMpi, ManyPieces) {
  STRATA_KOKKOS_MPI_START();
  exchange_all<TypeParam>(Mode::pieces, 2);
}
TYPED_TEST(KokkosMpi, ExplicitOrder) {
  STRATA_KOKKOS_MPI_START();
  exchange_all<TypeParam>(Mode::explicit_order, 2);
}

// Contiguous Views go to MPI in place (host) or staged (device without a
// GPU-aware MPI); empty Views send empty messages; MPI_PROC_NULL completes
// at once without touching the View; the View outlives the caller's handle.
TYPED_TEST(KokkosMpi, ContiguousEmptyAndProcNull) {
  STRATA_KOKKOS_MPI_START();
  using Space = typename TypeParam::space;
  using Mem = typename Space::memory_space;
  Space space;
  const int me = world_rank();
  const int n = world_size();
  const int right = (me + 1) % n;
  const int left = (me + n - 1) % n;
  for (const sk::DevicePath path : {sk::DevicePath::automatic, sk::DevicePath::staged}) {
    sk::CommOptions o;
    o.device_path = path;
    Kokkos::View<int**, Kokkos::LayoutRight, Mem> got("got", 5, 7);
    sk::Request recv;
    {
      auto r = sk::irecv(space, Kokkos::subview(got, std::make_pair(1, 4), Kokkos::ALL), left, 7, MPI_COMM_WORLD, o);
      ASSERT_TRUE(r.ok());
      recv = std::move(r).value();
    }
    {
      Kokkos::View<int*, Mem> out("out", 21);  // dropped right after isend: the request keeps it
      auto h = Kokkos::create_mirror_view(out);
      for (int i = 0; i < 21; ++i) h(i) = 1000 * me + i;
      Kokkos::deep_copy(out, h);
      auto r = sk::isend(space, out, right, 7, MPI_COMM_WORLD, o);
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r.value().wait(), strata::Status::ok);
    }
    ASSERT_EQ(recv.wait(), strata::Status::ok);
    auto hg = Kokkos::create_mirror_view(got);
    Kokkos::deep_copy(hg, got);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 7; ++j) {
        const int want = (i >= 1 && i < 4) ? 1000 * left + (i - 1) * 7 + j : 0;
        ASSERT_EQ(hg(i, j), want) << i << "," << j;
      }
    // Empty: a zero-byte message matches.
    Kokkos::View<double*, Mem> none("none", 0);
    auto er = sk::irecv(space, none, left, 8, MPI_COMM_WORLD, o);
    ASSERT_TRUE(er.ok());
    ASSERT_EQ(sk::send(space, none, right, 8, MPI_COMM_WORLD, o), strata::Status::ok);
    ASSERT_EQ(er.value().wait(), strata::Status::ok);
    // MPI_PROC_NULL: nothing moves, the View is untouched.
    ASSERT_EQ(sk::recv(space, got, MPI_PROC_NULL, 9, MPI_COMM_WORLD, o), strata::Status::ok);
    ASSERT_EQ(sk::send(space, got, MPI_PROC_NULL, 9, MPI_COMM_WORLD, o), strata::Status::ok);
    Kokkos::deep_copy(hg, got);
    ASSERT_EQ(hg(1, 0), 1000 * left);
  }
}

// Host staging comes from the device data mover's pools
// (portability/mover/staging.hpp, shared with the interposer and the
// collectives): a staged exchange takes one buffer for the send and one for
// the receive, and a second exchange of the same size reuses the first
// one's (the pools keep them) instead of allocating.
TYPED_TEST(KokkosMpi, HostStagingComesFromTheMoverPools) {
  STRATA_KOKKOS_MPI_START();
  using Space = typename TypeParam::space;
  using Mem = typename Space::memory_space;
  Space space;
  const int me = world_rank();
  const int n = world_size();
  const int right = (me + 1) % n;
  const int left = (me + n - 1) % n;
  sk::CommOptions o;
  o.device_path = sk::DevicePath::staged;
  constexpr int kCount = 1000;
  auto exchange = [&](int tag) {
    Kokkos::View<int*, Mem> out("out", kCount);
    Kokkos::View<int*, Mem> got("got", kCount);
    auto h = Kokkos::create_mirror_view(out);
    for (int i = 0; i < kCount; ++i) h(i) = 1000 * me + tag * 7 + i;
    Kokkos::deep_copy(out, h);
    auto r = sk::irecv(space, got, left, tag, MPI_COMM_WORLD, o);
    ASSERT_TRUE(r.ok());
    sk::Request recv = std::move(r).value();
    ASSERT_EQ(sk::send(space, out, right, tag, MPI_COMM_WORLD, o), strata::Status::ok);
    ASSERT_EQ(recv.wait(), strata::Status::ok);
    Kokkos::deep_copy(h, got);
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(h(i), 1000 * left + tag * 7 + i) << i;
  };
  const strata::mover::Counters& c = strata::mover::counters();
  exchange(1);
  const uint64_t acquired = c.staging_acquired.load();
  const uint64_t allocated = c.staging_allocated.load();
  exchange(2);
  EXPECT_EQ(c.staging_acquired.load() - acquired, 2u) << "one staging buffer for the send, one for the receive";
  EXPECT_EQ(c.staging_allocated.load() - allocated, 0u) << "the first exchange's buffers, kept by the pools";
}

// A message shorter than the receiving View is an error of the receive (MPI
// itself does not see one). (A longer one is MPI's truncation error, which
// the library reports; it is not tested here: Open MPI 4.1 under
// MPI_THREAD_MULTIPLE, which the test main asks for, hangs in MPI_Waitall on
// a truncated receive, also in a plain MPI program.)
TYPED_TEST(KokkosMpi, ShortMessage) {
  STRATA_KOKKOS_MPI_START();
  using Space = typename TypeParam::space;
  using Mem = typename Space::memory_space;
  Space space;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int me = world_rank();
  if (me < 2) {
    const int peer = 1 - me;
    Kokkos::View<double**, Kokkos::LayoutLeft, Mem> a("a", 6, 6);
    auto narrow = Kokkos::subview(a, std::make_pair(0, 3), std::make_pair(1, 4));  // 9 doubles
    auto wide = Kokkos::subview(a, std::make_pair(0, 4), std::make_pair(1, 4));    // 12 doubles
    if (me == 0) {
      ASSERT_EQ(sk::send(space, narrow, peer, 1, comm), strata::Status::ok);
    } else {
      EXPECT_EQ(sk::recv(space, wide, peer, 1, comm), strata::Status::invalid_argument);
    }
  }
  MPI_Comm_free(&comm);
}

// An invalid peer is the library's error, returned as Status::mpi_error
// (MPI_ERRORS_RETURN on a duplicate communicator).
TEST(KokkosMpiArguments, InvalidPeerIsAnMpiError) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  Kokkos::View<double*, Kokkos::HostSpace> v("v", 4);
  auto r = sk::isend(Kokkos::DefaultHostExecutionSpace(), v, world_size() + 5, 0, comm);
  EXPECT_EQ(r.status(), strata::Status::mpi_error);
  MPI_Comm_free(&comm);
}

}  // namespace
