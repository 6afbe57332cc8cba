// Helpers of the tests that move Kokkos subviews between ranks (MPI:
// test_kokkos_mpi, NCCL: test_kokkos_nccl): a seed shared by all ranks, the
// sender's View as a function of (seed, round, sender) so that any rank can
// rebuild any sender's, receive Views shaped after a sender's subview, and
// the check of a received View against the naive element-loop oracle.
#pragma once

#include "portability/kokkos/kokkos_test_util.hpp"
#include "support/mpi_test.hpp"

#include <mpi.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace strata_test {

// Rank 0's test_seed(), on every rank; printed once for replay.
inline uint64_t shared_seed(const char* program) {
  static const uint64_t seed = [program] {
    unsigned long long s = test_seed();
    MPI_Bcast(&s, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (world_rank() == 0) std::printf("%s seed %llu (replay: STRATA_TEST_SEED=%llu)\n", program, s, s);
    return static_cast<uint64_t>(s);
  }();
  return seed;
}

// A sender's View: its shape and the bounds of the subview it sends (now
// and then empty: nothing moves).
struct SendSpec {
  Shape shape;
  Bounds bounds{};
};

template <class T, int R, class L>
SendSpec send_spec(uint64_t seed, int round, int sender, int64_t budget) {
  Rng rng(seed * 1000003u + static_cast<uint64_t>(round) * 7919u + static_cast<uint64_t>(sender));
  SendSpec s;
  s.shape = random_shape(rng, R, budget, std::is_same<L, Kokkos::LayoutStride>::value);
  s.bounds = random_bounds(rng, s.shape, R, true);
  return s;
}

// The contents of a sender's whole View.
template <class V>
Bytes contents_of(uint64_t seed, int round, int sender, const V& v) {
  Rng rng(seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(round * 64 + sender + 1)));
  Bytes b(v.span() * sizeof(typename V::value_type));
  fill_random(b.data(), b.size(), rng);
  return b;
}

// A receive View: the extents of the sender's subview, other padding and
// offsets (and, for LayoutStride, dimension order), randomly filled.
template <class V>
struct Incoming {
  V base;  // NOLINT
  Bounds bounds{};
  Bytes original;
  int from = 0;
};

template <class T, int R, class L, class V>
std::vector<Incoming<V>> receive_views(uint64_t seed, int round, int64_t budget, const std::vector<int>& senders) {
  using Mem = typename V::memory_space;
  const int me = world_rank();
  std::vector<Incoming<V>> in;
  Rng rng(seed + 31 * static_cast<uint64_t>(me) + 1000 * static_cast<uint64_t>(round));
  for (int p : senders) {
    const SendSpec theirs = send_spec<T, R, L>(seed, round, p, budget);
    Shape shape;
    Bounds bounds{};
    for (int d = 0; d < R; ++d) {
      const size_t e = theirs.bounds[d].second - theirs.bounds[d].first;
      const size_t lo = static_cast<size_t>(uniform(rng, 0, 2));
      shape.extent[d] = e + lo + static_cast<size_t>(uniform(rng, 0, 2));
      bounds[d] = {lo, lo + e};
    }
    if (std::is_same<L, Kokkos::LayoutStride>::value) random_strides(rng, R, &shape);
    Incoming<V> x;
    x.base = make_view<V>("recv", shape);
    x.bounds = bounds;
    x.original.resize(x.base.span() * sizeof(T));
    fill_random(x.original.data(), x.original.size(), rng);
    upload<Mem>(x.base.data(), x.original);
    x.from = p;
    in.push_back(std::move(x));
  }
  return in;
}

// "" when x's whole allocation holds its original bytes with the sender's
// subview (packed in `order`) unpacked into x's bounds, else the first
// difference.
template <class T, int R, class L, class V>
std::string received_difference(uint64_t seed, int round, int64_t budget, const Incoming<V>& x,
                                strata::kokkos::Order order) {
  using HostV = Kokkos::View<typename Nest<T, R>::type, L, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const SendSpec theirs = send_spec<T, R, L>(seed, round, x.from, budget);
  // The sender's View as the sender built it, on the host.
  ViewOf<T, R, L, Kokkos::HostSpace> shape_only = make_view<ViewOf<T, R, L, Kokkos::HostSpace>>("s", theirs.shape);
  Bytes their_contents = contents_of(seed, round, x.from, shape_only);
  HostV their_base(reinterpret_cast<T*>(their_contents.data()), shape_only.layout());
  const Bytes message = oracle_pack(make_subview(their_base, theirs.bounds), order);
  Bytes expect = x.original;
  HostV expect_base(reinterpret_cast<T*>(expect.data()), x.base.layout());
  oracle_unpack(make_subview(expect_base, x.bounds), message.data(), order);
  const Bytes got = download<typename V::memory_space>(x.base.data(), expect.size());
  return first_difference(expect.data(), got.data(), expect.size(), "received View");
}

}  // namespace strata_test
