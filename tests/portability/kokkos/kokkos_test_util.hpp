// Helpers of the Kokkos layer's tests: the spaces a test is written once
// for, seeds, Views of any rank and layout built at run time, and the naive
// element-loop oracle.
#pragma once

#include <strata/kokkos.hpp>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata_test {

// The two spaces every test runs on: the host space (CI) and the default
// space, which is a GPU where Kokkos has CUDA or HIP. Device cases skip
// where the default space is the host space.
struct Host {
  using space = Kokkos::DefaultHostExecutionSpace;
  static constexpr const char* name = "Host";
};
struct Device {
  using space = Kokkos::DefaultExecutionSpace;
  static constexpr const char* name = "Device";
};
constexpr bool kHaveDeviceSpace =
    !std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value;

struct SpaceNames {
  template <class S>
  static std::string GetName(int) {
    return S::name;
  }
};

#define STRATA_SKIP_WITHOUT_DEVICE(Where)                                                      \
  do {                                                                                         \
    if (std::is_same<Where, ::strata_test::Device>::value && !::strata_test::kHaveDeviceSpace) \
      GTEST_SKIP() << "Kokkos has no GPU backend in this build (default space "                \
                   << Kokkos::DefaultExecutionSpace::name() << ")";                            \
  } while (0)

// A fresh seed per run (printed by the caller), or STRATA_TEST_SEED.
inline uint64_t test_seed() {
  if (const char* s = std::getenv("STRATA_TEST_SEED")) {
    if (*s) return std::strtoull(s, nullptr, 0);
  }
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

using Rng = std::mt19937_64;
inline int64_t uniform(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

inline void fill_random(void* p, size_t bytes, Rng& rng) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < bytes; ++i) b[i] = static_cast<unsigned char>(rng());
}

// T with R stars: the data type of a rank-R View.
template <class T, int R>
struct Nest {
  using type = typename Nest<T, R - 1>::type*;
};
template <class T>
struct Nest<T, 0> {
  using type = T;
};

template <class T, int R, class Layout, class Mem>
using ViewOf = Kokkos::View<typename Nest<T, R>::type, Layout, Mem>;

// A random rank-R shape of at most about `budget` elements, and for
// LayoutStride random strides: a random dimension order with padding.
struct Shape {
  std::array<size_t, 8> extent{};
  std::array<size_t, 8> stride{};
};

// LayoutStride strides for s's extents: a random dimension order, each
// dimension padded by 0-2 elements.
inline void random_strides(Rng& rng, int rank, Shape* s) {
  std::vector<int> order(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) order[static_cast<size_t>(d)] = d;
  std::shuffle(order.begin(), order.end(), rng);
  size_t step = 1;
  for (int k = 0; k < rank; ++k) {
    const int d = order[static_cast<size_t>(k)];
    s->stride[d] = step;
    step *= s->extent[d] + static_cast<size_t>(uniform(rng, 0, 2));
  }
}

inline Shape random_shape(Rng& rng, int rank, int64_t budget, bool strided) {
  Shape s;
  int64_t left = budget;
  for (int d = 0; d < rank; ++d) {
    // Per dimension about budget^(1/rank), at least 1, at most what is left.
    const int remaining = rank - d;
    const double per = std::pow(static_cast<double>(left), 1.0 / remaining);
    const int64_t cap = std::max<int64_t>(1, static_cast<int64_t>(per * 1.6));
    const int64_t e = uniform(rng, 1, std::max<int64_t>(1, std::min(cap, left)));
    s.extent[d] = static_cast<size_t>(e);
    left = std::max<int64_t>(1, left / e);
  }
  if (strided) random_strides(rng, rank, &s);
  return s;
}

template <class V, size_t... I>
V make_view_impl(const std::string& label, const Shape& s, std::index_sequence<I...>) {
  if constexpr (std::is_same<typename V::array_layout, Kokkos::LayoutStride>::value) {
    Kokkos::LayoutStride layout;
    for (size_t d = 0; d < sizeof...(I); ++d) {
      layout.dimension[d] = s.extent[d];
      layout.stride[d] = s.stride[d];
    }
    return V(label, layout);
  } else {
    return V(label, s.extent[I]...);
  }
}

template <class V>
V make_view(const std::string& label, const Shape& s) {
  return make_view_impl<V>(label, s, std::make_index_sequence<static_cast<size_t>(V::rank)>{});
}

// Half-open bounds of a subview, per dimension.
using Bounds = std::array<std::pair<size_t, size_t>, 8>;

inline Bounds random_bounds(Rng& rng, const Shape& s, int rank, bool allow_empty) {
  Bounds b{};
  for (int d = 0; d < rank; ++d) {
    const int64_t e = static_cast<int64_t>(s.extent[d]);
    int64_t lo = uniform(rng, 0, e - 1);
    int64_t hi = uniform(rng, lo + 1, e);
    if (allow_empty && uniform(rng, 0, 40) == 0) hi = lo;  // now and then an empty range
    if (uniform(rng, 0, 3) == 0) {                         // a whole dimension now and then
      lo = 0;
      hi = e;
    }
    b[d] = {static_cast<size_t>(lo), static_cast<size_t>(hi)};
  }
  return b;
}

template <class V, size_t... I>
auto subview_impl(const V& v, const Bounds& b, std::index_sequence<I...>) {
  return Kokkos::subview(v, b[I]...);
}

template <class V>
auto make_subview(const V& v, const Bounds& b) {
  return subview_impl(v, b, std::make_index_sequence<static_cast<size_t>(V::rank)>{});
}

template <class V, size_t... I>
auto* element_impl(const V& v, const std::array<size_t, 8>& idx, std::index_sequence<I...>) {
  return &v(idx[I]...);
}

// The address of element idx of v, through Kokkos' own indexing.
template <class V>
auto* element(const V& v, const std::array<size_t, 8>& idx) {
  return element_impl(v, idx, std::make_index_sequence<static_cast<size_t>(V::rank)>{});
}

// Visits every multi-index of v in packing order (left: first index
// fastest), calling f(idx). The naive oracle: no strides, no Strata.
template <class V, class F>
void for_each_index(const V& v, bool left, F&& f) {
  constexpr int rank = static_cast<int>(V::rank);
  for (int d = 0; d < rank; ++d) {
    if (v.extent(d) == 0) return;
  }
  std::array<size_t, 8> idx{};
  while (true) {
    f(idx);
    int k = 0;
    for (; k < rank; ++k) {
      const int d = left ? k : rank - 1 - k;
      if (++idx[d] < v.extent(d)) break;
      idx[d] = 0;
    }
    if (k == rank) return;
  }
}

// The packing-order rule of strata/kokkos.hpp, written out again: by the
// layout; LayoutStride left when the strides of the dimensions of extent > 1
// increase with the index.
template <class V>
bool packs_left(const V& v, strata::kokkos::Order order) {
  if (order == strata::kokkos::Order::left) return true;
  if (order == strata::kokkos::Order::right) return false;
  if (std::is_same<typename V::array_layout, Kokkos::LayoutLeft>::value) return true;
  if (std::is_same<typename V::array_layout, Kokkos::LayoutRight>::value) return false;
  std::vector<size_t> strides;
  for (int d = 0; d < static_cast<int>(V::rank); ++d) {
    if (v.extent(d) > 1) strides.push_back(v.stride(d));
  }
  for (size_t i = 1; i < strides.size(); ++i) {
    if (!(strides[i - 1] < strides[i])) return false;
  }
  return true;
}

// The packed bytes of (host-accessible) v, element by element.
template <class V>
std::vector<unsigned char> oracle_pack(const V& v, strata::kokkos::Order order) {
  using T = typename V::value_type;
  std::vector<unsigned char> out;
  out.reserve(v.size() * sizeof(T));
  for_each_index(v, packs_left(v, order), [&](const std::array<size_t, 8>& idx) {
    const auto* p = reinterpret_cast<const unsigned char*>(element(v, idx));
    out.insert(out.end(), p, p + sizeof(T));
  });
  return out;
}

// Writes packed bytes into (host-accessible) v, element by element.
template <class V>
void oracle_unpack(const V& v, const unsigned char* packed, strata::kokkos::Order order) {
  using T = typename V::value_type;
  size_t k = 0;
  for_each_index(v, packs_left(v, order), [&](const std::array<size_t, 8>& idx) {
    std::memcpy(reinterpret_cast<unsigned char*>(element(v, idx)), packed + k, sizeof(T));
    k += sizeof(T);
  });
}

// Bytes of any memory space, to and from the host.
using Bytes = std::vector<unsigned char>;
template <class Mem>
using RawBytes = Kokkos::View<unsigned char*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostRaw = RawBytes<Kokkos::HostSpace>;

template <class Mem>
Bytes download(const void* p, size_t n) {
  Bytes out(n);
  if (n > 0) {
    Kokkos::deep_copy(HostRaw(out.data(), n), RawBytes<Mem>(static_cast<unsigned char*>(const_cast<void*>(p)), n));
  }
  return out;
}

template <class Mem>
void upload(void* p, const Bytes& b) {
  if (!b.empty()) {
    Kokkos::deep_copy(RawBytes<Mem>(static_cast<unsigned char*>(p), b.size()),
                      HostRaw(const_cast<unsigned char*>(b.data()), b.size()));
  }
}

// "" when equal, else where the first difference is.
inline std::string first_difference(const unsigned char* want, const unsigned char* got, size_t n, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    if (want[i] != got[i]) {
      return std::string(what) + ": first difference at byte " + std::to_string(i) + " of " + std::to_string(n) +
             ": want " + std::to_string(want[i]) + ", got " + std::to_string(got[i]);
    }
  }
  return "";
}

}  // namespace strata_test
