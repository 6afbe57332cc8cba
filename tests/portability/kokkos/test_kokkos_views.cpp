// Pack and unpack of Kokkos subviews (strata::kokkos::describe + pack /
// unpack) against a naive element loop over Kokkos' own indexing
// (kokkos_test_util.hpp), for LayoutLeft, LayoutRight and LayoutStride
// (random dimension orders with padding), every rank 1-8, random subview
// bounds (now and then empty or whole), several element sizes (1, 2, 4, 8
// and 16 bytes), both kernels on host spaces, packed pointers misaligned by
// 0-15 bytes, outputs poisoned twice with guard bytes on both sides, and the
// whole allocation checked after an unpack (nothing outside the subview
// changes). Seeds are fresh per run; STRATA_TEST_SEED=<seed> replays one.
// Written once for two spaces: Host (CI) and Device (skips without a GPU
// backend in Kokkos).
#include "portability/kokkos/kokkos_test_util.hpp"

#include "portability/kokkos/testing.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

namespace {

using namespace strata_test;
namespace sk = strata::kokkos;

constexpr size_t kGuard = 64;

uint64_t master_seed() {
  static const uint64_t seed = [] {
    const uint64_t s = test_seed();
    std::printf("test_kokkos_views seed %llu (replay: STRATA_TEST_SEED=%llu)\n", static_cast<unsigned long long>(s),
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

template <class L>
const char* layout_name() {
  if (std::is_same<L, Kokkos::LayoutLeft>::value) return "LayoutLeft";
  if (std::is_same<L, Kokkos::LayoutRight>::value) return "LayoutRight";
  return "LayoutStride";
}

const char* order_name(sk::Order o) {
  return o == sk::Order::left ? "left" : o == sk::Order::right ? "right" : "layout";
}

// One combination: element type T, rank R, layout L, on Where's space.
template <class Where, class T, int R, class L>
void check_combination(int cases, std::vector<sk::Kernel> kernels) {
  using Space = typename Where::space;
  using Mem = typename Space::memory_space;
  using V = ViewOf<T, R, L, Mem>;
  using HostV = Kokkos::View<typename Nest<T, R>::type, L, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr bool strided = std::is_same<L, Kokkos::LayoutStride>::value;
  const uint64_t seed = master_seed() ^ (std::hash<std::string>{}(typeid(T).name()) + 1000003u * R +
                                         7919u * (strided ? 2 : std::is_same<L, Kokkos::LayoutLeft>::value));
  Rng rng(seed);
  Space space;
  for (int c = 0; c < cases; ++c) {
    const Shape shape = random_shape(rng, R, 2500, strided);
    V base = make_view<V>("base", shape);
    const size_t span_bytes = base.span() * sizeof(T);
    Bytes original(span_bytes);
    fill_random(original.data(), original.size(), rng);
    upload<Mem>(base.data(), original);

    const Bounds bounds = random_bounds(rng, shape, R, true);
    auto sub = make_subview(base, bounds);
    sk::Order order = sk::Order::layout;
    if (uniform(rng, 0, 4) == 0) order = uniform(rng, 0, 1) ? sk::Order::left : sk::Order::right;

    std::ostringstream what;
    what << layout_name<L>() << " rank " << R << " " << typeid(T).name() << " (" << sizeof(T) << " B) extents";
    for (int d = 0; d < R; ++d) what << " " << shape.extent[d];
    what << " bounds";
    for (int d = 0; d < R; ++d) what << " [" << bounds[d].first << "," << bounds[d].second << ")";
    what << " order " << order_name(order) << " case " << c << "; replay: STRATA_TEST_SEED=" << master_seed();
    SCOPED_TRACE(what.str());

    // The oracle on a host copy with the same mapping.
    HostV host_base(reinterpret_cast<T*>(original.data()), base.layout());
    auto host_sub = make_subview(host_base, bounds);
    const Bytes want = oracle_pack(host_sub, order);

    strata::Result<strata::StridedBlock> layout = sk::describe(sub, order);
    ASSERT_TRUE(layout.ok());
    ASSERT_EQ(layout->packed_bytes(), static_cast<int64_t>(want.size())) << layout->to_string();
    // A contiguous subview of a LayoutLeft/Right View packs as one block
    // (its strides follow the parent's order, whatever its layout type).
    if (!strided && order == sk::Order::layout && sub.span_is_contiguous() && sub.span() == sub.size()) {
      EXPECT_TRUE(layout->contiguous()) << "a contiguous subview must be one block: " << layout->to_string();
    }
    EXPECT_LE(static_cast<int>(layout->dims.size()), R) << layout->to_string();

    for (sk::Kernel kernel : kernels) {
      upload<Mem>(base.data(), original);  // the previous kernel's unpack changed it
      const size_t misalign = static_cast<size_t>(uniform(rng, 0, 15));
      Kokkos::View<unsigned char*, Mem> packed("packed", want.size() + 2 * kGuard + 16);
      unsigned char* at = packed.data() + kGuard + misalign;
      const size_t total = packed.extent(0);
      // Pack, twice with different poison: a byte left unwritten shows.
      for (unsigned char poison : {static_cast<unsigned char>(0xa5), static_cast<unsigned char>(0x5a)}) {
        upload<Mem>(packed.data(), Bytes(total, poison));
        ASSERT_EQ(sk::pack(space, *layout, sub.data(), at, sk::PackOptions{kernel}), strata::Status::ok);
        space.fence();
        const Bytes got = download<Mem>(packed.data(), total);
        for (size_t i = 0; i < kGuard + misalign; ++i) ASSERT_EQ(got[i], poison) << "guard before, byte " << i;
        for (size_t i = kGuard + misalign + want.size(); i < total; ++i)
          ASSERT_EQ(got[i], poison) << "guard after, byte " << i;
        const std::string diff = first_difference(want.data(), got.data() + kGuard + misalign, want.size(), "pack");
        ASSERT_EQ(diff, "") << "kernel " << static_cast<int>(kernel) << " " << layout->to_string();
      }
      // Unpack random bytes into the subview: exactly the subview's elements
      // change, to the packed values in order.
      Bytes source(want.size());
      fill_random(source.data(), source.size(), rng);
      upload<Mem>(at, source);
      upload<Mem>(base.data(), original);
      ASSERT_EQ(sk::unpack(space, *layout, at, sub.data(), sk::PackOptions{kernel}), strata::Status::ok);
      space.fence();
      Bytes expect = original;
      HostV expect_base(reinterpret_cast<T*>(expect.data()), base.layout());
      oracle_unpack(make_subview(expect_base, bounds), source.data(), order);
      const Bytes got = download<Mem>(base.data(), span_bytes);
      ASSERT_EQ(first_difference(expect.data(), got.data(), span_bytes, "unpack"), "")
          << "kernel " << static_cast<int>(kernel) << " " << layout->to_string();
    }
  }
}

template <class Where, class T, int R>
void check_layouts(int cases, const std::vector<sk::Kernel>& kernels) {
  check_combination<Where, T, R, Kokkos::LayoutLeft>(cases, kernels);
  check_combination<Where, T, R, Kokkos::LayoutRight>(cases, kernels);
  check_combination<Where, T, R, Kokkos::LayoutStride>(cases, kernels);
}

template <class Where, class T>
void check_all_ranks(int cases, const std::vector<sk::Kernel>& kernels) {
  check_layouts<Where, T, 1>(cases, kernels);
  check_layouts<Where, T, 2>(cases, kernels);
  check_layouts<Where, T, 3>(cases, kernels);
  check_layouts<Where, T, 4>(cases, kernels);
  check_layouts<Where, T, 5>(cases, kernels);
  check_layouts<Where, T, 6>(cases, kernels);
  check_layouts<Where, T, 7>(cases, kernels);
  check_layouts<Where, T, 8>(cases, kernels);
}

template <class Where>
std::vector<sk::Kernel> kernels_of() {
  if (std::is_same<Where, Host>::value) return {sk::Kernel::host_engine, sk::Kernel::words};
  return {sk::Kernel::automatic, sk::Kernel::words};  // the native kernels on the space's stream, the Kokkos one
}

template <class Where>
class KokkosViews : public testing::Test {};
using Spaces = testing::Types<Host, Device>;
TYPED_TEST_SUITE(KokkosViews, Spaces, SpaceNames);

TYPED_TEST(KokkosViews, DoubleEveryRankAndLayout) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  check_all_ranks<TypeParam, double>(40, kernels_of<TypeParam>());
}

TYPED_TEST(KokkosViews, BytesEveryRankAndLayout) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  check_all_ranks<TypeParam, uint8_t>(40, kernels_of<TypeParam>());
}

TYPED_TEST(KokkosViews, OtherElementSizes) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  const auto k = kernels_of<TypeParam>();
  check_layouts<TypeParam, int16_t, 2>(30, k);
  check_layouts<TypeParam, int16_t, 3>(30, k);
  check_layouts<TypeParam, float, 2>(30, k);
  check_layouts<TypeParam, float, 4>(30, k);
  check_layouts<TypeParam, Kokkos::complex<double>, 2>(30, k);
  check_layouts<TypeParam, Kokkos::complex<double>, 3>(30, k);
}

// The device kernel's 64-bit index path (taken for layouts of 2^32 words and
// more) on small layouts.
TYPED_TEST(KokkosViews, WideIndexPath) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  strata::kokkos::detail::set_force_wide_index(true);
  check_layouts<TypeParam, double, 3>(20, {sk::Kernel::words});
  check_layouts<TypeParam, uint8_t, 5>(20, {sk::Kernel::words});
  strata::kokkos::detail::set_force_wide_index(false);
}

// pack_view / unpack_view: the View-level entry points and their checks.
TYPED_TEST(KokkosViews, PackViewRoundTripAndChecks) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  using Space = typename TypeParam::space;
  using Mem = typename Space::memory_space;
  Space space;
  Kokkos::View<double***, Kokkos::LayoutRight, Mem> a("a", 6, 7, 9);
  auto h = Kokkos::create_mirror(a);
  for (size_t i = 0; i < 6; ++i)
    for (size_t j = 0; j < 7; ++j)
      for (size_t k = 0; k < 9; ++k) h(i, j, k) = static_cast<double>(100 * i + 10 * j + k);
  Kokkos::deep_copy(a, h);
  auto sub = Kokkos::subview(a, std::make_pair(1, 5), Kokkos::ALL, std::make_pair(2, 4));
  Kokkos::View<double*, Mem> packed("packed", sub.size());
  ASSERT_EQ(sk::pack_view(space, sub, packed), strata::Status::ok);
  space.fence();
  auto hp = Kokkos::create_mirror(packed);
  Kokkos::deep_copy(hp, packed);
  size_t n = 0;
  for (size_t i = 1; i < 5; ++i)
    for (size_t j = 0; j < 7; ++j)
      for (size_t k = 2; k < 4; ++k) ASSERT_EQ(hp(n++), static_cast<double>(100 * i + 10 * j + k));
  // Round trip into a zeroed View.
  Kokkos::View<double***, Kokkos::LayoutRight, Mem> b("b", 6, 7, 9);
  auto bsub = Kokkos::subview(b, std::make_pair(1, 5), Kokkos::ALL, std::make_pair(2, 4));
  ASSERT_EQ(sk::unpack_view(space, packed, bsub), strata::Status::ok);
  space.fence();
  auto hb = Kokkos::create_mirror(b);
  Kokkos::deep_copy(hb, b);
  for (size_t i = 0; i < 6; ++i)
    for (size_t j = 0; j < 7; ++j)
      for (size_t k = 0; k < 9; ++k) {
        const bool inside = i >= 1 && i < 5 && k >= 2 && k < 4;
        ASSERT_EQ(hb(i, j, k), inside ? h(i, j, k) : 0.0) << i << " " << j << " " << k;
      }
  // Too small a packed View is refused, nothing is written.
  Kokkos::View<double*, Mem> small("small", sub.size() - 1);
  EXPECT_EQ(sk::pack_view(space, sub, small), strata::Status::invalid_argument);
  // Rank 0 and empty Views.
  Kokkos::View<double, Mem> scalar("scalar");
  auto r0 = sk::describe(scalar);
  ASSERT_TRUE(r0.ok());
  EXPECT_EQ(r0->packed_bytes(), 8);
  EXPECT_TRUE(r0->contiguous());
  auto empty = Kokkos::subview(a, std::make_pair(2, 2), Kokkos::ALL, Kokkos::ALL);
  auto re = sk::describe(empty);
  ASSERT_TRUE(re.ok());
  EXPECT_TRUE(re->empty());
  EXPECT_EQ(sk::pack_view(space, empty, small), strata::Status::ok);
}

// describe() merges what is contiguous: a column slab of a LayoutRight
// matrix is one dimension of rows, a LayoutLeft one is one block.
TEST(KokkosDescribe, CanonicalBlocks) {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> r("r", 10, 16);
  auto slab = Kokkos::subview(r, Kokkos::ALL, std::make_pair(4, 7));
  auto b = sk::describe(slab);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->offset, 0);
  EXPECT_EQ(b->block, 24);
  ASSERT_EQ(b->dims.size(), 1u);
  EXPECT_EQ(b->dims[0].count, 10);
  EXPECT_EQ(b->dims[0].stride, 128);
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> l("l", 10, 16);
  auto cols = Kokkos::subview(l, Kokkos::ALL, std::make_pair(4, 7));
  auto c = sk::describe(cols);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->contiguous());
  EXPECT_EQ(c->block, 240);
  // The same slab packed in the other order: 3 columns of 10 blocks of 8.
  auto t = sk::describe(slab, sk::Order::left);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->block, 8);
  ASSERT_EQ(t->dims.size(), 2u);
  EXPECT_EQ(t->dims[0].count, 10);
  EXPECT_EQ(t->dims[0].stride, 128);
  EXPECT_EQ(t->dims[1].count, 3);
  EXPECT_EQ(t->dims[1].stride, 8);
}

}  // namespace
