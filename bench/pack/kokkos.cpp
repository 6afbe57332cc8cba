// strata-bench-pack --kokkos: Strata's Kokkos pack (strata::kokkos::pack_view
// on a subview, the kernel chosen for the space) next to what kokkos-comm
// does (Kokkos::deep_copy of the subview into a contiguous View) and to the
// native kernels on the same canonical block (strata::pack_host on host
// spaces, strata::device::pack on the space's CUDA/HIP stream), on the
// default execution space. Also shown: the device kernel ("words") run on
// that space, which on a host space is informational only.
//
// Cases: 2D subviews (rows x [0, w) of a rows x ld LayoutRight View) and 3D
// (n0 x (n1 - 1) x [0, w) of an n0 x n1 x ld one), blocks of w doubles,
// rows ld doubles apart (ld * 8 = max(512, 2 * block) bytes), packed sizes
// small and large. Every method's packed bytes are compared with deep_copy's
// (same element order) before timing; a mismatch exits 1.
#include "bench/pack/bench_pack.hpp"

#include <strata/device.hpp>
#include <strata/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace strata_bench {
namespace {

namespace sk = strata::kokkos;
using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;

struct KokkosPoint {
  int dims = 2;          // 2D or 3D subview
  int64_t block = 8;     // bytes per block (w doubles)
  int64_t packed = 0;    // packed bytes (rounded to whole blocks / planes)
  int64_t stride = 512;  // bytes between rows of the parent
};

struct Timing {
  double median_ns = 0;
  bool valid = false;
};

struct KokkosResult {
  KokkosPoint point;
  int64_t blocks = 0;
  Timing ours, words, deep_copy, native;
  Timing empty;  // an empty kernel on the space, timed the same way: the launch floor
};

// The floor every method pays per call: one launch of nothing.
struct EmptyKernel {
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t) const {}
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `methods` alternately (batches of launches, the space fenced after
// each batch), after a warm-up; per-call medians.
void time_methods(const Space& space, std::vector<std::function<void()>>& methods, std::vector<Timing*>& out,
                  const KokkosBenchOptions& o) {
  const size_t m = methods.size();
  std::vector<int> reps(m, 1);
  for (size_t k = 0; k < m; ++k) {
    for (int i = 0; i < 2; ++i) methods[k]();
    space.fence();
    while (true) {  // batch until one sample lasts min_sample_us
      const double t0 = now_ns();
      for (int i = 0; i < reps[k]; ++i) methods[k]();
      space.fence();
      if (now_ns() - t0 >= o.min_sample_us * 1e3 || reps[k] >= (1 << 20)) break;
      reps[k] *= 2;
    }
  }
  std::vector<std::vector<double>> samples(m);
  std::vector<double> total(m, 0);
  for (int s = 0; s < o.max_samples; ++s) {
    for (size_t k = 0; k < m; ++k) {
      const double t0 = now_ns();
      for (int i = 0; i < reps[k]; ++i) methods[k]();
      space.fence();
      const double dt = now_ns() - t0;
      samples[k].push_back(dt / reps[k]);
      total[k] += dt;
    }
    bool enough = s + 1 >= o.min_samples;
    for (size_t k = 0; k < m; ++k) enough = enough && total[k] >= o.min_total_ms * 1e6;
    if (enough) break;
  }
  for (size_t k = 0; k < m; ++k) {
    out[k]->median_ns = median(samples[k]);
    out[k]->valid = true;
  }
}

template <class V>
std::vector<unsigned char> host_bytes(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<unsigned char> b(h.size() * sizeof(typename V::value_type));
  std::memcpy(b.data(), h.data(), b.size());
  return b;
}

// The native kernels on the space's memory, where this build has them.
bool native_pack(const Space& space, const strata::StridedBlock& block, const void* base, void* packed) {
  if constexpr (Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible) {
    strata::pack_host(block, base, packed);
    return true;
  }
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
    return strata::device::pack(block, base, packed, space.cuda_stream()) == strata::Status::ok;
  }
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
  if constexpr (std::is_same<Space, Kokkos::HIP>::value) {
    return strata::device::pack(block, base, packed, space.hip_stream()) == strata::Status::ok;
  }
#endif
  (void)space;
  (void)block;
  (void)base;
  (void)packed;
  return false;
}

template <class Sub, class Contig>
int run_point(const Space& space, const Sub& sub, const Contig& contig, const KokkosBenchOptions& o, KokkosResult* r) {
  const auto layout = sk::describe(sub);
  if (!layout.ok()) return 2;
  r->blocks = layout->block_count();
  Kokkos::View<double*, Mem> ours("ours", sub.size()), words("words", sub.size()), native("native", sub.size());
  // Correctness first: every method against deep_copy.
  Kokkos::deep_copy(space, contig, sub);
  if (sk::pack_view(space, sub, ours) != strata::Status::ok) return 2;
  if (sk::pack_view(space, sub, words, sk::Order::layout, sk::PackOptions{sk::Kernel::words}) != strata::Status::ok)
    return 2;
  const bool native_ok = native_pack(space, *layout, sub.data(), native.data());
  space.fence();
  const auto want = host_bytes(contig);
  if (host_bytes(ours) != want || host_bytes(words) != want || (native_ok && host_bytes(native) != want)) {
    std::fprintf(stderr, "MISMATCH: %dD block %" PRId64 " B: a pack differs from deep_copy\n", r->point.dims,
                 r->point.block);
    return 1;
  }
  if (o.no_timing) return 0;
  std::vector<std::function<void()>> methods = {
      [&] { (void)sk::pack_view(space, sub, ours); }, [&] { Kokkos::deep_copy(space, contig, sub); },
      [&] { (void)sk::pack_view(space, sub, words, sk::Order::layout, sk::PackOptions{sk::Kernel::words}); }};
  std::vector<Timing*> out = {&r->ours, &r->deep_copy, &r->words};
  methods.push_back([&] { Kokkos::parallel_for("empty", Kokkos::RangePolicy<Space>(space, 0, 1), EmptyKernel{}); });
  out.push_back(&r->empty);
  if (native_ok) {
    methods.push_back([&] { (void)native_pack(space, *layout, sub.data(), native.data()); });
    out.push_back(&r->native);
  }
  time_methods(space, methods, out, o);
  return 0;
}

int run_case(const Space& space, KokkosPoint p, const KokkosBenchOptions& o, KokkosResult* r) {
  const int64_t w = std::max<int64_t>(1, p.block / 8);
  p.block = w * 8;
  p.stride = std::max<int64_t>(512, 2 * p.block);
  const int64_t ld = p.stride / 8;
  const int64_t blocks = std::max<int64_t>(1, p.packed / p.block);
  r->point = p;
  if (p.dims == 2) {
    Kokkos::View<double**, Kokkos::LayoutRight, Mem> parent("parent", blocks, ld);
    r->point.packed = blocks * p.block;
    auto sub = Kokkos::subview(parent, Kokkos::ALL, std::make_pair(int64_t{0}, w));
    Kokkos::View<double**, Kokkos::LayoutRight, Mem> contig("contig", blocks, w);
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Space>(space, 0, parent.extent(0)), KOKKOS_LAMBDA(const int64_t i) {
          for (int64_t j = 0; j < ld; ++j) parent(i, j) = static_cast<double>(i * 1000 + j);
        });
    return run_point(space, sub, contig, o, r);
  }
  // 3D: planes of n1 - 1 rows (one row of each plane left out, so that the
  // rows do not merge across planes).
  const int64_t n1 = 33;
  const int64_t n0 = std::max<int64_t>(1, blocks / (n1 - 1));
  Kokkos::View<double***, Kokkos::LayoutRight, Mem> parent("parent", n0, n1, ld);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Space>(space, 0, n0), KOKKOS_LAMBDA(const int64_t i) {
        for (int64_t j = 0; j < n1; ++j)
          for (int64_t k = 0; k < ld; ++k) parent(i, j, k) = static_cast<double>((i * 100 + j) * 1000 + k);
      });
  auto sub = Kokkos::subview(parent, Kokkos::ALL, std::make_pair(int64_t{0}, n1 - 1), std::make_pair(int64_t{0}, w));
  Kokkos::View<double***, Kokkos::LayoutRight, Mem> contig("contig", n0, n1 - 1, w);
  r->point.packed = n0 * (n1 - 1) * p.block;
  return run_point(space, sub, contig, o, r);
}

std::string us(const Timing& t) {
  if (!t.valid) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", t.median_ns * 1e-3);
  return b;
}

std::string ratio(const Timing& num, const Timing& den) {
  if (!num.valid || !den.valid || den.median_ns <= 0) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.2fx", num.median_ns / den.median_ns);
  return b;
}

void print_table(const std::vector<KokkosResult>& results, bool markdown) {
  const char* head[] = {"subview",      "block B",   "packed",   "blocks",         "ours us",     "ours GB/s",
                        "deep_copy us", "native us", "words us", "deep_copy/ours", "native/ours", "empty launch us"};
  if (markdown) {
    std::printf("|");
    for (const char* h : head) std::printf(" %s |", h);
    std::printf("\n|");
    for (size_t i = 0; i < sizeof head / sizeof *head; ++i) std::printf(" --- |");
    std::printf("\n");
  } else {
    std::printf("%-7s %7s %8s %8s %10s %9s %12s %10s %10s %14s %11s %15s\n", head[0], head[1], head[2], head[3],
                head[4], head[5], head[6], head[7], head[8], head[9], head[10], head[11]);
  }
  for (const KokkosResult& r : results) {
    char gbps[32];
    std::snprintf(gbps, sizeof gbps, "%.2f", r.ours.valid ? r.point.packed / r.ours.median_ns : 0.0);
    const std::string sub = std::to_string(r.point.dims) + "D";
    const std::string cols[] = {sub,
                                std::to_string(r.point.block),
                                format_bytes(r.point.packed),
                                std::to_string(r.blocks),
                                us(r.ours),
                                gbps,
                                us(r.deep_copy),
                                us(r.native),
                                us(r.words),
                                ratio(r.deep_copy, r.ours),
                                ratio(r.native, r.ours),
                                us(r.empty)};
    if (markdown) {
      std::printf("|");
      for (const std::string& c : cols) std::printf(" %s |", c.c_str());
      std::printf("\n");
    } else {
      std::printf("%-7s %7s %8s %8s %10s %9s %12s %10s %10s %14s %11s %15s\n", cols[0].c_str(), cols[1].c_str(),
                  cols[2].c_str(), cols[3].c_str(), cols[4].c_str(), cols[5].c_str(), cols[6].c_str(), cols[7].c_str(),
                  cols[8].c_str(), cols[9].c_str(), cols[10].c_str(), cols[11].c_str());
    }
  }
}

}  // namespace

int run_kokkos(const KokkosBenchOptions& options, const std::string& command) {
  KokkosBenchOptions o = options;
  if (o.blocks.empty())
    o.blocks = o.quick ? std::vector<int64_t>{8, 64, 1024} : std::vector<int64_t>{8, 16, 32, 64, 256, 1024, 4096};
  if (o.sizes.empty())
    o.sizes =
        o.quick ? std::vector<int64_t>{int64_t{64} << 10} : std::vector<int64_t>{int64_t{64} << 10, int64_t{4} << 20};
  Kokkos::initialize();
  int rc = 0;
  std::vector<KokkosResult> results;
  {
    Space space;
    for (int dims : {2, 3}) {
      for (int64_t size : o.sizes) {
        for (int64_t block : o.blocks) {
          KokkosPoint p;
          p.dims = dims;
          p.block = block;
          p.packed = size;
          KokkosResult r;
          const int c = run_case(space, p, o, &r);
          if (c != 0) {
            rc = c;
            break;
          }
          if (!o.no_timing) {
            std::fprintf(stderr, "%dD %5" PRId64 " B x %-8s ours %9.2f us  deep_copy %9.2f us  native %9s us\n", dims,
                         r.point.block, format_bytes(r.point.packed).c_str(), r.ours.median_ns * 1e-3,
                         r.deep_copy.median_ns * 1e-3, us(r.native).c_str());
          }
          results.push_back(r);
        }
        if (rc) break;
      }
      if (rc) break;
    }
  }
  if (rc == 0) {
    const char* md = o.markdown ? "- " : "";
    std::printf("%scommand: `%s`\n%sKokkos %d, execution space %s (concurrency %d), %s\n", md, command.c_str(), md,
                KOKKOS_VERSION, Space::name(), Space().concurrency(),
                "every method's packed bytes checked equal to deep_copy's");
    if (!o.no_timing) {
      std::printf("\n");
      print_table(results, o.markdown);
    }
  }
  Kokkos::finalize();
  return rc;
}

}  // namespace strata_bench
