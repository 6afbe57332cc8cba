// strata::fused::AllreduceRmsnorm across MPI ranks, on host buffers (the
// fallback and the shared-memory one-shot and two-shot) or, with
// STRATA_TEST_FUSED_MEMORY=device, on GPU buffers (the peer path where the
// GPUs allow it, else the fallback; skipped without a GPU). Every call
// against the float64 reference on fresh random inputs, outputs poisoned
// before each call, every rank's result the same bits, uneven token counts,
// back-to-back calls giving identical bits, the token split giving the bits
// of the unsplit call, graph capture (device), argument errors, and (its own
// ctest variant, with a short STRATA_FUSED_TIMEOUT_MS) a rank that never
// arrives being named instead of hanging the job.
#include <strata/fused.hpp>

#include "collectives/fused/fused_reference.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using strata::Status;
using strata::coll::DataType;
using strata::fused::Algorithm;
using strata::fused::AllreduceRmsnorm;
using strata::fused::Memory;
using strata::fused::Tensors;
using strata_test::fused::Case;
using strata_test::fused::Inputs;

bool on_device() {
  const char* m = std::getenv("STRATA_TEST_FUSED_MEMORY");
  return m != nullptr && std::strcmp(m, "device") == 0;
}
Memory memory() { return on_device() ? Memory::device : Memory::host; }

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* s = std::getenv(name);
  return s != nullptr ? std::strtoull(s, nullptr, 0) : fallback;
}

#define SKIP_WITHOUT_GPU()                                                                                \
  do {                                                                                                    \
    if (on_device() && !strata::gpu::available()) GTEST_SKIP() << "no GPU visible (or a CPU-only build)"; \
  } while (0)

// A buffer where the object wants it (host or the current GPU).
class Buffer {
 public:
  explicit Buffer(size_t bytes) : bytes_(bytes) {
    if (on_device()) {
      void* p = nullptr;
      if (strata::gpu::malloc_device(&p, bytes > 0 ? bytes : 1) == Status::ok) device_ = p;
    } else {
      host_.resize(bytes > 0 ? bytes : 1);
    }
  }
  ~Buffer() {
    if (device_ != nullptr) strata::gpu::free_device(device_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() { return device_ != nullptr ? device_ : static_cast<void*>(host_.data()); }
  void put(const void* from, size_t n) {
    if (device_ != nullptr) {
      strata::gpu::memcpy_async(device_, from, n, nullptr);
      strata::gpu::stream_synchronize(nullptr);
    } else {
      std::memcpy(host_.data(), from, n);
    }
  }
  std::vector<unsigned char> get() {
    std::vector<unsigned char> out(bytes_);
    if (device_ != nullptr) {
      strata::gpu::memcpy_async(out.data(), device_, bytes_, nullptr);
      strata::gpu::stream_synchronize(nullptr);
    } else {
      std::memcpy(out.data(), host_.data(), bytes_);
    }
    return out;
  }

 private:
  size_t bytes_;
  void* device_ = nullptr;
  std::vector<unsigned char> host_;
};

// One rank's tensors of a case, with helpers to load the inputs afresh.
struct Rank {
  Case c;
  Inputs in;
  size_t bytes;
  Buffer x, residual, weight, out;
  explicit Rank(const Case& cs)
      : c(cs),
        in(strata_test::fused::make_inputs(cs)),
        bytes(cs.tokens * cs.hidden * strata::coll::size_of(cs.type)),
        x(bytes),
        residual(bytes),
        weight(cs.hidden * strata::coll::size_of(cs.type)),
        out(bytes) {
    reload();
    weight.put(in.weight.data(), cs.hidden * strata::coll::size_of(cs.type));
  }
  void reload() {
    x.put(in.x[static_cast<size_t>(strata_test::world_rank())].data(), bytes);
    residual.put(in.residual.data(), bytes);
    std::vector<unsigned char> poison(bytes);
    strata_test::fused::poison(c.type, poison.data(), c.tokens * c.hidden);
    out.put(poison.data(), bytes);
  }
  Tensors tensors(bool in_place) {
    Tensors t;
    t.x = x.data();
    t.residual = residual.data();
    t.weight = weight.data();
    t.out = in_place ? x.data() : out.data();
    t.tokens = c.tokens;
    t.epsilon = c.epsilon;
    return t;
  }
};

void sync() {
  if (on_device()) strata::gpu::device_synchronize();
}

// FNV-1a over the bytes; ranks compare theirs.
uint64_t digest(const std::vector<unsigned char>& v) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char b : v) h = (h ^ b) * 1099511628211ull;
  return h;
}
bool same_on_every_rank(uint64_t h) {
  uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

std::unique_ptr<AllreduceRmsnorm> make(const Case& c, size_t max_tokens) {
  strata::fused::Config cfg;
  cfg.max_tokens = max_tokens;
  cfg.hidden = c.hidden;
  cfg.type = c.type;
  cfg.memory = memory();
  auto r = AllreduceRmsnorm::create(MPI_COMM_WORLD, cfg);
  EXPECT_TRUE(r.ok()) << strata::to_string(r.status());
  // STRATA_TEST_FUSED_PATH: the path the harness expects creation to take.
  const char* expect = std::getenv("STRATA_TEST_FUSED_PATH");
  if (r.ok() && expect != nullptr) {
    EXPECT_STREQ(strata::fused::to_string(r.value()->path()), expect);
  }
  return r.ok() ? std::move(r).value() : nullptr;
}

struct Param {
  DataType type;
  Algorithm algorithm;
  size_t hidden;
};

class FusedMpi : public ::testing::TestWithParam<Param> {};

TEST_P(FusedMpi, MatchesFloat64OnEveryTokenCount) {
  SKIP_WITHOUT_GPU();
  const Param& p = GetParam();
  const int n = strata_test::world_size();
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0xF05EDull);
  std::vector<size_t> token_counts = {1, static_cast<size_t>(n > 1 ? n - 1 : 1), static_cast<size_t>(n + 1), 37, 64};
  Case base;
  base.type = p.type;
  base.hidden = p.hidden;
  base.ranks = n;
  auto fused = make(base, 64);
  ASSERT_NE(fused, nullptr);
  // Blocks: the object's budget (a row or two per block at these counts),
  // then 3 (many rows per block: the Lamport kernel's row-behind pipeline).
  for (size_t tokens : token_counts) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool in_place = variant % 2 == 1;
      const int blocks = variant >= 2 ? 3 : 0;
      Case c = base;
      c.tokens = tokens;
      c.seed = seed + tokens * 4 + static_cast<uint64_t>(variant);
      c.epsilon = in_place ? 1e-2f : 1e-5f;
      SCOPED_TRACE(c.describe() + " " + strata::fused::to_string(p.algorithm) + (in_place ? " in place" : "") + " on " +
                   strata::fused::to_string(fused->path()) + " path, blocks " + std::to_string(blocks));
      Rank r(c);
      const auto ref = strata_test::fused::reference(c, r.in);
      strata::fused::RunOptions o;
      o.algorithm = p.algorithm;
      o.blocks = blocks;
      ASSERT_EQ(fused->run(r.tensors(in_place), o), Status::ok) << fused->error_message();
      sync();
      ASSERT_EQ(fused->check(), Status::ok) << fused->error_message();
      const auto residual = r.residual.get();
      const auto out = in_place ? r.x.get() : r.out.get();
      EXPECT_LE(strata_test::fused::relative_error(c, ref.residual, residual.data()),
                strata_test::fused::tolerance(c.type));
      EXPECT_LE(strata_test::fused::relative_error(c, ref.out, out.data()), strata_test::fused::tolerance(c.type));
      EXPECT_TRUE(same_on_every_rank(digest(out))) << "the ranks' outputs differ";
      EXPECT_TRUE(same_on_every_rank(digest(residual))) << "the ranks' residuals differ";
      if (!in_place) {
        EXPECT_EQ(r.x.get(), r.in.x[static_cast<size_t>(strata_test::world_rank())]) << "x changed";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, FusedMpi,
    ::testing::Values(
        Param{DataType::bfloat16, Algorithm::automatic, 64}, Param{DataType::bfloat16, Algorithm::one_shot, 136},
        Param{DataType::bfloat16, Algorithm::two_shot, 136}, Param{DataType::bfloat16, Algorithm::fallback, 64},
        Param{DataType::bfloat16, Algorithm::lamport, 136}, Param{DataType::float16, Algorithm::lamport, 40},
        Param{DataType::float32, Algorithm::lamport, 1000}, Param{DataType::float16, Algorithm::one_shot, 1000},
        Param{DataType::float16, Algorithm::two_shot, 40}, Param{DataType::float32, Algorithm::one_shot, 64},
        Param{DataType::float32, Algorithm::two_shot, 20}, Param{DataType::float32, Algorithm::fallback, 1000}),
    [](const ::testing::TestParamInfo<Param>& i) {
      return std::string(strata::coll::to_string(i.param.type)) + "_" + strata::fused::to_string(i.param.algorithm) +
             "_" + std::to_string(i.param.hidden);
    });

// The same inputs again and again: every call's bits equal the first's (a
// race in the protocol shows as a difference).
TEST(FusedMpiRepeat, BackToBackIdenticalBits) {
  SKIP_WITHOUT_GPU();
  Case c;
  c.type = DataType::bfloat16;
  c.tokens = 48;
  c.hidden = on_device() ? 8192 : 256;
  c.ranks = strata_test::world_size();
  c.seed = env_u64("STRATA_TEST_SEED", 77);
  const int runs = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", on_device() ? 1000 : 100));
  auto fused = make(c, c.tokens);
  ASSERT_NE(fused, nullptr);
  Rank r(c);
  for (Algorithm a : {Algorithm::one_shot, Algorithm::two_shot, Algorithm::lamport}) {
    std::vector<unsigned char> first_out, first_residual;
    int differing = 0;
    for (int i = 0; i < runs; ++i) {
      r.residual.put(r.in.residual.data(), r.bytes);
      strata::fused::RunOptions o;
      o.algorithm = a;
      ASSERT_EQ(fused->run(r.tensors(false), o), Status::ok) << fused->error_message();
      sync();
      const auto out = r.out.get(), residual = r.residual.get();
      if (i == 0) {
        first_out = out;
        first_residual = residual;
      } else if (out != first_out || residual != first_residual) {
        ++differing;
      }
    }
    EXPECT_EQ(differing, 0) << runs << " runs of " << strata::fused::to_string(a);
    EXPECT_TRUE(same_on_every_rank(digest(first_out)));
    ASSERT_EQ(fused->check(), Status::ok) << fused->error_message();
  }
}

// The token split: compute of each part produces x's rows (here: copies
// them from the inputs), the fused calls run per part. Same bits as one
// call on all tokens with the same algorithm.
TEST(FusedMpiSplit, SameBitsAsUnsplit) {
  SKIP_WITHOUT_GPU();
  Case c;
  c.type = DataType::bfloat16;
  c.tokens = 1100;
  c.hidden = 64;
  c.ranks = strata_test::world_size();
  c.seed = env_u64("STRATA_TEST_SEED", 99);
  auto fused = make(c, c.tokens);
  ASSERT_NE(fused, nullptr);
  strata::fused::SplitConfig cfg;
  cfg.wave = 128;
  cfg.offset = 0;
  cfg.min_tokens = 1024;
  cfg.comm_blocks = 3;
  const strata::fused::Split split = strata::fused::split_tokens(c.tokens, cfg);
  ASSERT_TRUE(split.split());
  EXPECT_EQ(split.first, 512u);
  for (Algorithm a : {Algorithm::one_shot, Algorithm::two_shot, Algorithm::fallback, Algorithm::lamport}) {
    SCOPED_TRACE(strata::fused::to_string(a));
    Rank whole(c), parts(c);
    strata::fused::RunOptions o;
    o.algorithm = a;
    ASSERT_EQ(fused->run(whole.tensors(false), o), Status::ok);
    sync();
    // Parts: x starts poisoned; compute writes its rows just before they are reduced.
    std::vector<unsigned char> poison(parts.bytes);
    strata_test::fused::poison(c.type, poison.data(), c.tokens * c.hidden);
    parts.x.put(poison.data(), parts.bytes);
    const size_t row = c.hidden * strata::coll::size_of(c.type);
    const auto& mine = parts.in.x[static_cast<size_t>(strata_test::world_rank())];
    std::vector<size_t> computed;
    auto compute = [&](size_t begin, size_t count, void* stream) {
      computed.push_back(begin);
      auto* dst = static_cast<unsigned char*>(parts.x.data()) + begin * row;
      if (on_device()) return strata::gpu::memcpy_async(dst, mine.data() + begin * row, count * row, stream);
      std::memcpy(dst, mine.data() + begin * row, count * row);
      return Status::ok;
    };
    strata::gpu::Stream compute_stream = nullptr, comm_stream = nullptr;
    if (on_device()) {
      ASSERT_EQ(strata::gpu::stream_create(&compute_stream), Status::ok);
      ASSERT_EQ(strata::gpu::stream_create(&comm_stream), Status::ok);
    }
    strata::fused::OverlapStreams streams{compute_stream, comm_stream};
    strata::fused::SplitConfig forced = cfg;
    forced.algorithm = a;
    ASSERT_EQ(strata::fused::run_split(*fused, parts.tensors(false), split, compute, streams, forced), Status::ok);
    if (on_device()) {
      strata::gpu::stream_synchronize(compute_stream);
      strata::gpu::stream_destroy(compute_stream);
      strata::gpu::stream_destroy(comm_stream);
    }
    EXPECT_EQ(computed, (std::vector<size_t>{0, split.first}));
    const auto ref = strata_test::fused::reference(c, whole.in);
    EXPECT_LE(strata_test::fused::relative_error(c, ref.out, parts.out.get().data()),
              strata_test::fused::tolerance(c.type));
    EXPECT_LE(strata_test::fused::relative_error(c, ref.residual, parts.residual.get().data()),
              strata_test::fused::tolerance(c.type));
    // The fused algorithms sum each element in rank order whatever the rows'
    // grouping; the fallback's allreduce may pick another algorithm (and
    // summation order) for another size.
    if (a != Algorithm::fallback && fused->path() != strata::fused::Path::fallback) {
      EXPECT_EQ(parts.out.get(), whole.out.get());
      EXPECT_EQ(parts.residual.get(), whole.residual.get());
    }
  }
}

// Capture of a call in a CUDA/HIP graph, replayed: each replay is a call.
TEST(FusedMpiGraph, CapturedCallsReplay) {
  if (!on_device()) GTEST_SKIP() << "graphs are for device buffers";
  SKIP_WITHOUT_GPU();
  Case c;
  c.type = DataType::bfloat16;
  c.tokens = 40;
  c.hidden = 4096;
  c.ranks = strata_test::world_size();
  c.seed = 5;
  auto fused = make(c, c.tokens);
  ASSERT_NE(fused, nullptr);
  Rank r(c);
  strata::gpu::Stream s = nullptr;
  ASSERT_EQ(strata::gpu::stream_create(&s), Status::ok);
  strata::fused::RunOptions o;
  o.stream = s;
  ASSERT_EQ(fused->run(r.tensors(false), o), Status::ok);  // warm-up: communicators and set-up outside the capture
  ASSERT_EQ(strata::gpu::stream_synchronize(s), Status::ok);
  const auto want_out = r.out.get();
  ASSERT_EQ(strata::gpu::capture_begin(s), Status::ok);
  const Status queued = fused->run(r.tensors(false), o);
  strata::gpu::GraphExec exec = nullptr;
  ASSERT_EQ(strata::gpu::capture_end(s, &exec), Status::ok);
  if (queued == Status::not_supported && fused->path() == strata::fused::Path::fallback) {
    // Ranks that share a GPU: the fallback's allreduce stages through host
    // memory, which no graph can hold; refused before touching the stream.
    strata::gpu::graph_destroy(exec);
    strata::gpu::stream_destroy(s);
    GTEST_SKIP() << "the fallback path stages through host memory here (ranks share a GPU): not capturable";
  }
  ASSERT_EQ(queued, Status::ok);
  for (int i = 0; i < 5; ++i) {
    r.reload();
    ASSERT_EQ(strata::gpu::graph_launch(exec, s), Status::ok);
    ASSERT_EQ(strata::gpu::stream_synchronize(s), Status::ok);
    EXPECT_EQ(r.out.get(), want_out) << "replay " << i;
  }
  ASSERT_EQ(fused->check(), Status::ok) << fused->error_message();
  strata::gpu::graph_destroy(exec);
  strata::gpu::stream_destroy(s);
}

TEST(FusedMpiArguments, Refused) {
  SKIP_WITHOUT_GPU();
  strata::fused::Config cfg;
  cfg.max_tokens = 4;
  cfg.hidden = 0;
  cfg.memory = memory();
  EXPECT_EQ(AllreduceRmsnorm::create(MPI_COMM_WORLD, cfg).status(), Status::invalid_argument);
  cfg.hidden = 16;
  cfg.type = DataType::int32;
  EXPECT_EQ(AllreduceRmsnorm::create(MPI_COMM_WORLD, cfg).status(), Status::invalid_argument);
  if (!strata::gpu::available()) {
    cfg.type = DataType::float32;
    cfg.memory = Memory::device;
    EXPECT_EQ(AllreduceRmsnorm::create(MPI_COMM_WORLD, cfg).status(), Status::not_supported);
  }
  Case c;
  c.type = DataType::float32;
  c.tokens = 4;
  c.hidden = 16;
  c.ranks = strata_test::world_size();
  auto fused = make(c, 4);
  ASSERT_NE(fused, nullptr);
  Rank r(c);
  Tensors t = r.tensors(false);
  t.tokens = 5;  // more than it was made for
  EXPECT_EQ(fused->run(t), Status::invalid_argument);
  t.tokens = 4;
  t.out = t.residual;
  EXPECT_EQ(fused->run(t), Status::invalid_argument);
  t.out = r.out.data();
  t.epsilon = -1.0f;
  EXPECT_EQ(fused->run(t), Status::invalid_argument);
  t.epsilon = 1e-6f;
  t.tokens = 0;  // nothing to do, on every rank
  EXPECT_EQ(fused->run(t), Status::ok);
}

// Its own ctest variant (STRATA_FUSED_TIMEOUT_MS short): the last rank skips
// a call; every other rank's call ends with Status::timeout naming it (the
// barrier of one-shot; Lamport has none, its data is what never comes).
void never_arrives(Algorithm algorithm) {
  SCOPED_TRACE(strata::fused::to_string(algorithm));
  const int n = strata_test::world_size();
  Case c;
  c.type = DataType::float32;
  c.tokens = 8;
  c.hidden = 32;
  c.ranks = n;
  auto fused = make(c, c.tokens);
  ASSERT_NE(fused, nullptr);
  Rank r(c);
  strata::fused::RunOptions o;
  o.algorithm = algorithm;
  ASSERT_EQ(fused->run(r.tensors(false), o), Status::ok);
  sync();
  if (fused->path() == strata::fused::Path::fallback) GTEST_SKIP() << "no peer or shared path here";
  const int last = n - 1;
  Status s = Status::ok;
  if (strata_test::world_rank() != last) {
    s = fused->run(r.tensors(false), o);
    sync();
    if (s == Status::ok) s = fused->check();
    EXPECT_EQ(s, Status::timeout);
    const std::string msg = fused->error_message();
    EXPECT_NE(msg.find("rank " + std::to_string(last) + " did not arrive"), std::string::npos) << msg;
    EXPECT_EQ(fused->run(r.tensors(false), o), Status::timeout) << "a broken object must stay broken";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(FusedMpiTimeout, NamesTheRankThatNeverArrived) {
  SKIP_WITHOUT_GPU();
  if (strata_test::world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  never_arrives(Algorithm::one_shot);
  never_arrives(Algorithm::lamport);
}

// One GPU per rank of a node, where there are GPUs.
class DevicePerRank : public ::testing::Environment {
 public:
  void SetUp() override {
    int count = 0;
    if (!on_device() || strata::gpu::device_count(&count) != Status::ok || count == 0) return;
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    strata::gpu::set_device(local % count);
  }
};
const auto* const g_devices = ::testing::AddGlobalTestEnvironment(new DevicePerRank);

}  // namespace
