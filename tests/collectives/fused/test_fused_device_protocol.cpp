// The fused peer kernels (collectives/fused/kernels.cu) on one GPU, with no
// MPI: each simulated rank is a stream of this process with its own region,
// and every rank's kernel addresses every region directly, as the IPC
// mappings make it across GPUs. The kernels of the ranks run concurrently
// (their blocks together stay far below the multiprocessors), so the
// device side of the protocol — system-scope release/acquire flags, the
// call counter in device memory, the double-buffered sets, L1-bypassing
// peer loads, the bounded waits and the error word — runs and is checked on
// a machine with a single GPU. Calls alternate one-/two-shot, token counts
// and block budgets, ranks are launched in a shuffled order; every result
// is checked against the float64 reference, every rank's bits against rank
// 0's, x unchanged, guard bytes around every device buffer intact.
// Skipped without a GPU (labels fused, gpu).
#include "collectives/fused/fused_reference.hpp"
#include "collectives/fused/kernels.hpp"
#include "collectives/fused/protocol.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using strata::Status;
using strata::coll::DataType;
namespace proto = strata::fused::proto;
namespace math = strata::fused::math;
namespace kernels = strata::fused::kernels;
namespace gpu = strata::gpu;
using strata_test::fused::Case;
using strata_test::fused::Inputs;
using strata_test::fused::Reference;

#define GPU_OK(call) ASSERT_EQ((call), Status::ok) << #call << ": " << gpu::last_error_string()

// Device bytes with kGuard guard bytes on both sides (16-byte aligned data).
class DeviceGuarded {
 public:
  static constexpr size_t kGuard = 256;
  static constexpr unsigned char kGuardByte = 0xA5;
  explicit DeviceGuarded(size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    if (gpu::malloc_device(&p, bytes_ + 2 * kGuard) == Status::ok) base_ = static_cast<unsigned char*>(p);
  }
  ~DeviceGuarded() {
    if (base_ != nullptr) gpu::free_device(base_);
  }
  DeviceGuarded(const DeviceGuarded&) = delete;
  DeviceGuarded& operator=(const DeviceGuarded&) = delete;
  bool ok() const { return base_ != nullptr; }
  unsigned char* data() const { return base_ + kGuard; }
  // Guards, then `from` (or NaN-like 0xFF bytes) in between.
  Status fill(const void* from, gpu::Stream s) {
    std::vector<unsigned char> image(bytes_ + 2 * kGuard, kGuardByte);
    if (from != nullptr) {
      std::memcpy(image.data() + kGuard, from, bytes_);
    } else {
      std::fill(image.begin() + kGuard, image.end() - kGuard, 0xFF);
    }
    staged_ = std::move(image);
    return gpu::memcpy_async(base_, staged_.data(), staged_.size(), s);
  }
  // Copies everything back (synchronous on s); data bytes into *got.
  Status read(gpu::Stream s, std::vector<unsigned char>* got, bool* guards) {
    std::vector<unsigned char> image(bytes_ + 2 * kGuard);
    STRATA_TRY(gpu::memcpy_async(image.data(), base_, image.size(), s));
    STRATA_TRY(gpu::stream_synchronize(s));
    got->assign(image.begin() + kGuard, image.end() - kGuard);
    *guards = std::all_of(image.begin(), image.begin() + kGuard, [](unsigned char c) { return c == kGuardByte; }) &&
              std::all_of(image.end() - kGuard, image.end(), [](unsigned char c) { return c == kGuardByte; });
    return Status::ok;
  }

 private:
  size_t bytes_;
  unsigned char* base_ = nullptr;
  std::vector<unsigned char> staged_;  // kept alive until the copy is done
};

// Every rank's region in device memory, zeroed, and its error word in
// mapped host memory.
struct Ranks {
  int n;
  proto::Layout layout;
  char* region[proto::kMaxRanks] = {};
  uint64_t* error_host[proto::kMaxRanks] = {};
  uint64_t* error_device[proto::kMaxRanks] = {};
  gpu::Stream stream[proto::kMaxRanks] = {};
  bool ok = true;

  Ranks(int ranks, size_t max_tokens, size_t hidden, size_t element)
      : n(ranks), layout(proto::Layout::of(max_tokens, hidden, element, ranks, SIZE_MAX)) {
    for (int q = 0; q < n && ok; ++q) {
      void* r = nullptr;
      void* h = nullptr;
      void* d = nullptr;
      ok = gpu::stream_create(&stream[q]) == Status::ok && gpu::malloc_device(&r, layout.total) == Status::ok &&
           gpu::memset_async(r, 0, layout.total, stream[q]) == Status::ok &&
           kernels::launch_fill(static_cast<char*>(r) + layout.lamport, (layout.total - layout.lamport) / 4,
                                proto::empty_word(element), stream[q]) == Status::ok &&
           gpu::malloc_pinned(&h, sizeof(uint64_t), true) == Status::ok &&
           gpu::mapped_device_pointer(h, &d) == Status::ok;
      region[q] = static_cast<char*>(r);
      error_host[q] = static_cast<uint64_t*>(h);
      error_device[q] = static_cast<uint64_t*>(d);
      if (h != nullptr) *error_host[q] = 0;
    }
    for (int q = 0; q < n && ok; ++q) ok = gpu::stream_synchronize(stream[q]) == Status::ok;
  }
  ~Ranks() {
    for (int q = 0; q < n; ++q) {
      if (stream[q] != nullptr) gpu::stream_synchronize(stream[q]);
      if (region[q] != nullptr) gpu::free_device(region[q]);
      if (error_host[q] != nullptr) gpu::free_pinned(error_host[q]);
      if (stream[q] != nullptr) gpu::stream_destroy(stream[q]);
    }
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;
  uint64_t error(int q) const { return *static_cast<const volatile uint64_t*>(error_host[q]); }
};

using strata_test::fused::Plan;

// One rank's buffers of one call, filled on its stream.
struct RankBuffers {
  DeviceGuarded x, residual, weight, out;
  RankBuffers(size_t bytes, size_t weight_bytes) : x(bytes), residual(bytes), weight(weight_bytes), out(bytes) {}
  bool ok() const { return x.ok() && residual.ok() && weight.ok() && out.ok(); }
};

template <class T>
proto::Args<T> args_for(const Ranks& r, int rank, const Plan& p, const RankBuffers& b, uint64_t timeout) {
  proto::Args<T> a{};
  for (int q = 0; q < r.n; ++q) a.region[q] = r.region[q];
  a.rank = rank;
  a.nranks = r.n;
  a.layout = r.layout;
  a.x = reinterpret_cast<const T*>(b.x.data());
  a.residual = reinterpret_cast<T*>(b.residual.data());
  a.weight = reinterpret_cast<const T*>(b.weight.data());
  a.out = p.in_place ? reinterpret_cast<T*>(b.x.data()) : reinterpret_cast<T*>(b.out.data());
  a.tokens = static_cast<int64_t>(p.c.tokens);
  a.hidden = static_cast<int64_t>(p.c.hidden);
  a.epsilon = p.c.epsilon;
  a.timeout = timeout;
  a.error = r.error_device[rank];
  a.lag = p.lag;
  a.post_slices = p.post_slices;
  return a;
}

uint64_t seed_from_env() { return strata_test::fused::seed_from_env(0xDE71CEull); }

struct Param {
  DataType type;
  int ranks;
  size_t hidden;
};

std::string name_of(const ::testing::TestParamInfo<Param>& info) {
  const char* t = info.param.type == DataType::float32 ? "f32" : info.param.type == DataType::float16 ? "f16" : "bf16";
  return std::string(t) + "_" + std::to_string(info.param.ranks) + "ranks_h" + std::to_string(info.param.hidden);
}

class FusedDeviceProtocol : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!gpu::available()) GTEST_SKIP() << "no GPU";
  }
};

template <class T>
void check_calls(const Param& prm) {
  const uint64_t seed = seed_from_env() ^ (static_cast<uint64_t>(prm.ranks) << 32) ^ prm.hidden;
  SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed_from_env()));
  std::mt19937_64 gen(seed);
  const size_t max_tokens = 300;
  const int calls = 16;
  Ranks r(prm.ranks, max_tokens, prm.hidden, sizeof(T));
  ASSERT_TRUE(r.ok) << gpu::last_error_string();
  // Blocks of all ranks together stay well inside the GPU: every block a
  // block waits for is resident.
  const int budget_cap = std::max(1, std::min(16, kernels::multiprocessors() / (2 * prm.ranks)));
  const uint64_t timeout = kernels::ticks_per_ms() * 20000;  // a stuck protocol fails the test, not the job
  std::vector<int> order(static_cast<size_t>(prm.ranks));
  std::iota(order.begin(), order.end(), 0);
  for (int k = 0; k < calls; ++k) {
    Plan p;
    p.c.type = prm.type;
    p.c.ranks = prm.ranks;
    p.c.hidden = prm.hidden;
    p.c.tokens = k % 5 == 0 ? max_tokens : 1 + gen() % max_tokens;
    p.c.epsilon = (gen() % 2) ? 1e-5f : 1e-2f;
    p.c.seed = gen();
    p.kind = strata_test::fused::random_kind(gen(), true);
    p.budget = 1 + static_cast<int>(gen() % static_cast<uint64_t>(budget_cap));
    p.lag = static_cast<int>(gen() % 4);
    p.in_place = gen() % 4 == 0;
    p.in = strata_test::fused::make_inputs(p.c);
    if (gen() % 3 == 0) strata_test::fused::negative_zero_column(p.c, &p.in);
    p.ref = strata_test::fused::reference(p.c, p.in);
    SCOPED_TRACE("call " + std::to_string(k) + ": " + p.c.describe() + " " + strata_test::fused::kind_name(p.kind) +
                 " budget " + std::to_string(p.budget) + (p.in_place ? " in place" : ""));
    const size_t bytes = p.c.tokens * p.c.hidden * sizeof(T);
    std::vector<std::unique_ptr<RankBuffers>> buf;
    for (int q = 0; q < prm.ranks; ++q) {
      buf.push_back(std::make_unique<RankBuffers>(bytes, p.c.hidden * sizeof(T)));
      RankBuffers& b = *buf.back();
      ASSERT_TRUE(b.ok()) << gpu::last_error_string();
      gpu::Stream s = r.stream[q];
      GPU_OK(b.x.fill(p.in.x[static_cast<size_t>(q)].data(), s));
      GPU_OK(b.residual.fill(p.in.residual.data(), s));
      GPU_OK(b.weight.fill(p.in.weight.data(), s));
      GPU_OK(b.out.fill(nullptr, s));
      GPU_OK(gpu::stream_synchronize(s));
    }
    // Launch every rank's kernel, in a fresh order each call.
    std::shuffle(order.begin(), order.end(), gen);
    const int blocks = proto::blocks_for(p.kind, static_cast<int64_t>(p.c.tokens), prm.ranks, p.budget);
    const bool vector = (p.c.hidden * sizeof(T)) % 16 == 0;
    const bool overlap = gen() % 2 == 0 && kernels::overlap_launch_supported();  // a dependent launch
    // Lamport: rows shared by a cluster of 1, 2 or 4 blocks where the GPU
    // has clusters, every rank's blocks still within the cap.
    int cluster = p.kind == proto::Kind::lamport ? std::min(kernels::cluster_max(), 1 << (gen() % 3)) : 1;
    while (cluster > 1 && blocks * cluster > budget_cap) cluster /= 2;
    // Lamport without clusters: rows also posted by 1 or 2 more blocks where they fit.
    if (p.kind == proto::Kind::lamport && cluster == 1 && !p.in_place) {
      p.post_slices = 1 + static_cast<int>(gen() % 3);
      while (p.post_slices > 1 && blocks * p.post_slices > budget_cap) --p.post_slices;
    }
    SCOPED_TRACE(std::string(overlap ? "overlapped launch" : "ordinary launch") + ", cluster " +
                 std::to_string(cluster) + ", posting blocks " + std::to_string(p.post_slices));
    for (int q : order) {
      const proto::Args<T> a = args_for<T>(r, q, p, *buf[static_cast<size_t>(q)], timeout);
      GPU_OK(kernels::launch_peer<T>(a, p.kind, blocks, vector, r.stream[q], overlap, cluster));
    }
    std::vector<unsigned char> out0, res0;
    for (int q = 0; q < prm.ranks; ++q) {
      RankBuffers& b = *buf[static_cast<size_t>(q)];
      std::vector<unsigned char> x, residual, weight, out;
      bool gx = false, gr = false, gw = false, go = false;
      GPU_OK(b.x.read(r.stream[q], &x, &gx));
      GPU_OK(b.residual.read(r.stream[q], &residual, &gr));
      GPU_OK(b.weight.read(r.stream[q], &weight, &gw));
      GPU_OK(b.out.read(r.stream[q], &out, &go));
      ASSERT_EQ(r.error(q), 0u) << "rank " << q << " recorded an error";
      EXPECT_TRUE(gx && gr && gw && go) << "rank " << q << " wrote outside its buffers";
      const std::vector<unsigned char>& result = p.in_place ? x : out;
      if (!p.in_place) {
        EXPECT_TRUE(x == p.in.x[static_cast<size_t>(q)]) << "rank " << q << " changed x";
      }
      EXPECT_LE(strata_test::fused::relative_error(p.c, p.ref.residual, residual.data()),
                strata_test::fused::tolerance(p.c.type))
          << "residual of rank " << q;
      EXPECT_LE(strata_test::fused::relative_error(p.c, p.ref.out, result.data()),
                strata_test::fused::tolerance(p.c.type))
          << "output of rank " << q;
      if (q == 0) {
        out0 = result;
        res0 = residual;
      } else {
        EXPECT_TRUE(result == out0) << "rank " << q << "'s output differs from rank 0's";
        EXPECT_TRUE(residual == res0) << "rank " << q << "'s residual differs from rank 0's";
      }
    }
  }
}

TEST_P(FusedDeviceProtocol, CallsAgainstFloat64) {
  const Param& p = GetParam();
  switch (p.type) {
    case DataType::float32: check_calls<float>(p); break;
    case DataType::bfloat16: check_calls<math::Bf16>(p); break;
    default: check_calls<math::F16>(p); break;
  }
}

// hidden 4096 and 2048: 16-byte accesses; 1000 (bf16: 2000 bytes) and 40
// (f32: 160 bytes, f16: 80): rows of a multiple of 16 bytes or not.
INSTANTIATE_TEST_SUITE_P(Shapes, FusedDeviceProtocol,
                         ::testing::Values(Param{DataType::bfloat16, 2, 4096}, Param{DataType::bfloat16, 4, 2048},
                                           Param{DataType::float16, 3, 1000}, Param{DataType::float32, 4, 40},
                                           Param{DataType::bfloat16, 8, 1028}, Param{DataType::float32, 2, 16384},
                                           Param{DataType::bfloat16, 2, 8192}),
                         name_of);

// The device's rounding (row_math.hpp's Round: one conversion instruction
// on CUDA) gives the host's bits: the residual T(x + residual) of every
// element, on the device kernel and on the host, for 16-bit values drawn
// from every finite bit pattern (sums that are subnormal, that round to
// even, that overflow to infinity), with 16-byte accesses and without.
template <class T>
void check_rounding(size_t hidden, bool vector) {
  std::mt19937 gen(static_cast<uint32_t>(seed_from_env() ^ hidden));
  const size_t tokens = 64, count = tokens * hidden;
  const uint16_t infinity = std::is_same<T, math::F16>::value ? 0x7c00 : 0x7f80;  // exponent all ones
  auto finite = [&](uint16_t b) { return (b & infinity) != infinity; };
  auto draw = [&] {
    for (;;) {
      const auto b = static_cast<uint16_t>(gen());
      if (finite(b)) return b;
    }
  };
  std::vector<uint16_t> x(count), residual(count), weight(hidden, 0x3c00);  // weight: any value
  for (size_t i = 0; i < count; ++i) {
    x[i] = draw();
    // Half the pairs close in magnitude with opposite signs (cancellation, subnormal sums).
    residual[i] = gen() % 2 ? draw() : static_cast<uint16_t>((x[i] ^ 0x8000) + (gen() % 7) - 3);
    if (!finite(residual[i])) residual[i] = draw();
  }
  const size_t bytes = count * sizeof(T);
  DeviceGuarded dx(bytes), dres(bytes), dw(hidden * sizeof(T)), dout(bytes);
  ASSERT_TRUE(dx.ok() && dres.ok() && dw.ok() && dout.ok()) << gpu::last_error_string();
  gpu::Stream s = nullptr;
  GPU_OK(gpu::stream_create(&s));
  GPU_OK(dx.fill(x.data(), s));
  GPU_OK(dres.fill(residual.data(), s));
  GPU_OK(dw.fill(weight.data(), s));
  GPU_OK(dout.fill(nullptr, s));
  GPU_OK(kernels::launch_local<T>(reinterpret_cast<const T*>(dx.data()), reinterpret_cast<T*>(dres.data()),
                                  reinterpret_cast<const T*>(dw.data()), reinterpret_cast<T*>(dout.data()),
                                  static_cast<int64_t>(tokens), static_cast<int64_t>(hidden), 1e-5f, vector, s));
  std::vector<unsigned char> got;
  bool guards = false;
  GPU_OK(dres.read(s, &got, &guards));
  GPU_OK(gpu::stream_destroy(s));
  EXPECT_TRUE(guards);
  int shown = 0;
  for (size_t i = 0; i < count && shown < 5; ++i) {
    const float sum = math::to_float(T{x[i]}) + math::to_float(T{residual[i]});
    const uint16_t want = std::is_same<T, math::F16>::value ? strata::numeric::float_to_half(sum)
                                                            : strata::numeric::float_to_bfloat16(sum);
    uint16_t have;
    std::memcpy(&have, got.data() + i * sizeof(T), sizeof have);
    if (have != want) {
      ++shown;
      ADD_FAILURE() << "element " << i << ": 0x" << std::hex << x[i] << " + 0x" << residual[i] << " gave 0x" << have
                    << ", the host rounds to 0x" << want;
    }
  }
}

TEST(FusedDeviceRounding, MatchesTheHostBitForBit) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU";
  check_rounding<math::Bf16>(4096, true);
  check_rounding<math::Bf16>(1000, false);
  check_rounding<math::F16>(4096, true);
  check_rounding<math::F16>(1000, false);
}

// A rank that never launches: the others give up after the timeout, name
// it as the missing peer of the start barrier (Lamport: of its data), and
// their kernels end.
// Lamport also with its rows shared by clusters of two blocks.
struct TimeoutCase {
  proto::Kind kind;
  int cluster;
};

class FusedDeviceProtocolTimeout : public ::testing::TestWithParam<TimeoutCase> {};

TEST_P(FusedDeviceProtocolTimeout, NamesTheMissingRank) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU";
  const int cluster = GetParam().cluster;
  if (cluster > kernels::cluster_max()) GTEST_SKIP() << "no clusters of " << cluster << " blocks on this GPU";
  Plan p;
  p.kind = GetParam().kind;
  p.c.type = DataType::float32;
  p.c.ranks = 3;
  p.c.hidden = 256;
  p.c.tokens = 8;
  p.budget = 2;
  p.in = strata_test::fused::make_inputs(p.c);
  Ranks r(3, p.c.tokens, p.c.hidden, sizeof(float));
  ASSERT_TRUE(r.ok) << gpu::last_error_string();
  const size_t bytes = p.c.tokens * p.c.hidden * sizeof(float);
  std::vector<std::unique_ptr<RankBuffers>> buf;
  for (int q = 0; q < 2; ++q) {
    buf.push_back(std::make_unique<RankBuffers>(bytes, p.c.hidden * sizeof(float)));
    RankBuffers& b = *buf.back();
    ASSERT_TRUE(b.ok());
    GPU_OK(b.x.fill(p.in.x[static_cast<size_t>(q)].data(), r.stream[q]));
    GPU_OK(b.residual.fill(p.in.residual.data(), r.stream[q]));
    GPU_OK(b.weight.fill(p.in.weight.data(), r.stream[q]));
    GPU_OK(b.out.fill(nullptr, r.stream[q]));
  }
  const int blocks = proto::blocks_for(p.kind, 8, 3, p.budget);
  for (int q = 0; q < 2; ++q) {
    const proto::Args<float> a = args_for<float>(r, q, p, *buf[static_cast<size_t>(q)], kernels::ticks_per_ms() * 100);
    GPU_OK(kernels::launch_peer<float>(a, p.kind, blocks, true, r.stream[q], false, cluster));
  }
  for (int q = 0; q < 2; ++q) {
    GPU_OK(gpu::stream_synchronize(r.stream[q]));
  }
  for (int q = 0; q < 2; ++q) {
    ASSERT_NE(r.error(q), 0u) << "rank " << q << " did not notice";
    const proto::ErrorFields e = proto::unpack_error(r.error(q));
    EXPECT_EQ(e.code, 1u);
    EXPECT_EQ(e.peer, 2u) << "rank " << q;
    EXPECT_EQ(e.phase, static_cast<uint32_t>(p.kind == proto::Kind::lamport ? proto::kData : proto::kStart));
    EXPECT_EQ(e.seq, 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, FusedDeviceProtocolTimeout,
                         ::testing::Values(TimeoutCase{proto::Kind::one_shot, 1}, TimeoutCase{proto::Kind::lamport, 1},
                                           TimeoutCase{proto::Kind::lamport, 2}),
                         [](const ::testing::TestParamInfo<TimeoutCase>& i) {
                           const std::string kind = i.param.kind == proto::Kind::lamport ? "lamport" : "one_shot";
                           return i.param.cluster > 1 ? kind + "_cluster" + std::to_string(i.param.cluster) : kind;
                         });

}  // namespace
