// Timing: the library's MPI_Pack and strata::pack_host alternately on the same
// source, after warm-up, batched so that one sample lasts well above the
// timer's resolution; medians of the samples.
#include "bench/pack/bench_pack.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

namespace strata_bench {
namespace {

struct Stats {
  double median = 0, p25 = 0, p75 = 0;
};

Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const double x = q * static_cast<double>(v.size() - 1);
    const size_t i = static_cast<size_t>(x);
    const double f = x - static_cast<double>(i);
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
  };
  s.median = at(0.5);
  s.p25 = at(0.25);
  s.p75 = at(0.75);
  return s;
}

struct Packer {
  const Layout* layout;
  const char* src;
  char* out;
  int rc = MPI_SUCCESS;

  void library() {
    int position = 0;
    const int r =
        MPI_Pack(src, 1, layout->type, out, static_cast<int>(layout->block.packed_bytes()), &position, MPI_COMM_SELF);
    if (r != MPI_SUCCESS) rc = r;
  }
  void strata() { strata::pack_host(layout->block, src, out); }
};

template <class F>
double time_batch(F&& f, int reps) {
  const double t0 = now_ns();
  for (int i = 0; i < reps; ++i) f();
  return (now_ns() - t0) / reps;
}

// One measurement of a point: warm-up, batch size, alternating samples.
void measure_once(Packer& lib, Packer& ours, const TimingOptions& opt, Sample* sl, Sample* so) {
  for (int i = 0; i < 2; ++i) {
    lib.library();
    ours.strata();
  }
  const double tl = time_batch([&] { lib.library(); }, 1);
  const double to = time_batch([&] { ours.strata(); }, 1);
  const double fastest = std::max(1.0, std::min(tl, to));
  const int reps = static_cast<int>(std::clamp(std::ceil(opt.min_sample_us * 1e3 / fastest), 1.0, 100000.0));

  std::vector<double> vl, vo;
  double total_l = 0, total_o = 0;
  const double start = now_ns();
  for (int s = 0;; ++s) {
    double a, b;
    if (s % 2 == 0) {  // alternate who goes first, so neither always follows the other
      a = time_batch([&] { lib.library(); }, reps);
      b = time_batch([&] { ours.strata(); }, reps);
    } else {
      b = time_batch([&] { ours.strata(); }, reps);
      a = time_batch([&] { lib.library(); }, reps);
    }
    vl.push_back(a);
    vo.push_back(b);
    total_l += a * reps;
    total_o += b * reps;
    const int n = s + 1;
    const double elapsed_ms = (now_ns() - start) * 1e-6;
    if (n >= opt.min_samples && total_l * 1e-6 >= opt.min_total_ms && total_o * 1e-6 >= opt.min_total_ms) break;
    if (n >= opt.max_samples) break;
    if (n >= 3 && elapsed_ms >= opt.max_point_ms) break;
  }
  const Stats l = stats_of(vl), o = stats_of(vo);
  *sl = Sample{l.median, l.p25, l.p75, static_cast<int>(vl.size()), reps};
  *so = Sample{o.median, o.p25, o.p75, static_cast<int>(vo.size()), reps};
}

double spread(const Sample& s) { return s.median_ns > 0 ? (s.p75_ns - s.p25_ns) / s.median_ns : 0; }

}  // namespace

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

void fill_random_nonzero(void* buffer, size_t bytes, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  if (x == 0) x = 1;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  auto next = [&] {  // xorshift64*, then every zero byte made 0x01
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    uint64_t w = x * 0x2545F4914F6CDD1Dull;
    const uint64_t nonzero = (((w & ~kHighs) + ~kHighs) | w) & kHighs;  // high bit of each non-zero byte
    return w | ((~nonzero & kHighs) >> 7);
  };
  char* p = static_cast<char*>(buffer);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const uint64_t w = next();
    std::memcpy(p + i, &w, 8);
  }
  if (i < bytes) {
    const uint64_t w = next();
    std::memcpy(p + i, &w, bytes - i);
  }
}

double measure_memcpy_gbps(size_t bytes, int repeats) {
  std::unique_ptr<char[]> a(new char[bytes]), b(new char[bytes]);
  fill_random_nonzero(a.get(), bytes, 7);
  std::memset(b.get(), 0x5a, bytes);
  std::memcpy(b.get(), a.get(), bytes);  // warm-up
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const double t0 = now_ns();
    std::memcpy(i % 2 ? a.get() : b.get(), i % 2 ? b.get() : a.get(), bytes);
    t.push_back(now_ns() - t0);
  }
  volatile char sink = a[bytes / 2] ^ b[bytes / 3];
  (void)sink;
  return static_cast<double>(bytes) / stats_of(t).median;
}

bool measure_point(const Layout& layout, const char* src, char* out_library, char* out_strata, const TimingOptions& opt,
                   Result* result, std::string* error) {
  Packer lib{&layout, src, out_library};
  Packer ours{&layout, src, out_strata};
  Sample best_l, best_o;
  double best_spread = 1e300;
  int attempt = 0;
  for (; attempt <= opt.max_remeasure; ++attempt) {
    Sample sl, so;
    measure_once(lib, ours, opt, &sl, &so);
    if (lib.rc != MPI_SUCCESS) {
      *error = layout.what + ": MPI_Pack failed";
      return false;
    }
    const double sp = std::max(spread(sl), spread(so));
    if (sp < best_spread) {
      best_spread = sp;
      best_l = sl;
      best_o = so;
    }
    if (sp <= opt.noisy_spread) break;
  }
  result->library = best_l;
  result->strata = best_o;
  result->attempts = std::min(attempt + 1, opt.max_remeasure + 1);
  result->noisy = best_spread > opt.noisy_spread;
  return true;
}

}  // namespace strata_bench
