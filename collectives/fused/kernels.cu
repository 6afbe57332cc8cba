// The fused AllReduce-RMSNorm kernels: protocol.hpp instantiated for the
// device platform, one source for CUDA (nvcc) and HIP (hipcc,
// --offload-arch=gfx90a). Launch errors are checked here and logged with the
// runtime's message; nothing here synchronises.
#include "collectives/fused/device_platform.hpp"
#include "collectives/fused/kernels.hpp"

#include "base/log.hpp"

#include <atomic>

namespace strata::fused::kernels {
namespace {

constexpr int kMaxWarps = kMaxThreads / 32;

Status launched(const char* what) {
  const gpuError_t err = gpuGetLastError();
  if (err == gpuSuccess) return Status::ok;
  STRATA_LOG(error, kColl, "%s: launch of %s failed: %s (%s)", STRATA_GPU_BACKEND_NAME, what, gpuGetErrorString(err),
             gpuGetErrorName(err));
  return Status::device_error;
}

// Programmatic dependent launch (sm_90): a call launched with
// overlap_launch is scheduled while the kernel before it on the stream still
// runs, and waits here until that kernel has finished and its writes are
// visible (without the launch attribute this returns at once); it then lets
// the next kernel be scheduled the same way. Nothing before this line reads
// memory. What it saves is the launch gap between kernels, most of what a
// small call costs besides the link.
__device__ __forceinline__ void overlap_with_neighbours() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <int V, class T, proto::Kind K>
__global__ void __launch_bounds__(kMaxThreads) peer_kernel(proto::Args<T> a) {
  __shared__ float smem[kMaxWarps];
  overlap_with_neighbours();
  DevicePlatform p;
  const int b = static_cast<int>(blockIdx.x), g = static_cast<int>(gridDim.x);
  if constexpr (K == proto::Kind::two_shot) {
    proto::two_shot<V>(p, a, b, g, smem);
  } else if constexpr (K == proto::Kind::lamport) {
    const int slices = proto::slices_of(a);  // blocks g = groups x slices
    proto::lamport<V>(p, a, b % (g / slices), g / slices, smem, b / (g / slices));
  } else {
    proto::one_shot<V>(p, a, b, g, smem);
  }
}

#if !defined(__HIPCC__)
// The Lamport kind with each row group a cluster of blocks
// (ClusterPlatform; sm_90 and later, launched only there).
template <int V, class T>
__global__ void __launch_bounds__(kMaxThreads) lamport_cluster_kernel(proto::Args<T> a) {
  __shared__ float smem[kMaxWarps];
  __shared__ ClusterPlatform::Shared shared;
  overlap_with_neighbours();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  ClusterPlatform p(&shared);
  proto::lamport<V>(p, a, static_cast<int>(blockIdx.x) / p.size, static_cast<int>(gridDim.x) / p.size, smem);
#else
  (void)a;
  (void)shared;
  __trap();  // never launched: cluster_max() is 1 without sm_90 code
#endif
}
#endif

__global__ void fill_kernel(uint32_t* words, size_t count, uint32_t value) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    words[i] = value;
  }
}

template <int V, class T>
__global__ void __launch_bounds__(kMaxThreads) local_kernel(const T* reduced, T* residual, const T* weight, T* out,
                                                            int64_t tokens, int64_t hidden, float epsilon) {
  __shared__ float smem[kMaxWarps];
  DevicePlatform p;
  proto::local_rows<V>(p, reduced, residual, weight, out, tokens, hidden, epsilon, static_cast<int>(blockIdx.x),
                       static_cast<int>(gridDim.x), smem);
}

__global__ void probe_kernel(proto::Args<float> a, uint32_t* mismatches) {
  const int q = static_cast<int>(threadIdx.x);
  if (q >= a.nranks || q == a.rank) return;
  const auto* theirs = reinterpret_cast<const volatile uint32_t*>(a.region[q] + a.layout.probe);
  if (theirs[0] != probe_word(q, 0)) atomicAdd(mismatches, 1u);
  auto* slot = reinterpret_cast<volatile uint32_t*>(a.region[q] + a.layout.probe);
  slot[1 + a.rank] = probe_word(a.rank, 1);
  __threadfence_system();
}

// Rows for the local kernel: enough blocks to fill the device a few times.
int local_blocks(int64_t tokens) {
  const int64_t cap = int64_t{4} * multiprocessors();
  return static_cast<int>(tokens < cap ? tokens : cap);
}

}  // namespace

int threads_for(int64_t hidden, int vector) {
  const int64_t vectors = (hidden + vector - 1) / vector;
  int64_t t = (vectors + 63) / 64 * 64;
  if (t < 64) t = 64;
  if (t > kMaxThreads) t = kMaxThreads;
  return static_cast<int>(t);
}

// One launch of `kernel`; with `overlap` (CUDA) as a programmatic
// dependent launch (overlap_with_neighbours); with `cluster` > 1 (CUDA) in
// clusters of that many blocks (`blocks` counts blocks).
template <class T>
void launch_one(void (*kernel)(proto::Args<T>), const proto::Args<T>& args, int blocks, int threads, gpuStream_t s,
                bool overlap, int cluster = 1) {
#if defined(__HIPCC__)
  (void)overlap;
  (void)cluster;
  kernel<<<blocks, threads, 0, s>>>(args);
#else
  if (!overlap && cluster <= 1) {
    kernel<<<blocks, threads, 0, s>>>(args);
    return;
  }
  cudaLaunchAttribute attribute[2];
  unsigned n = 0;
  if (overlap) {
    attribute[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) {
    attribute[n].id = cudaLaunchAttributeClusterDimension;
    attribute[n].val.clusterDim.x = static_cast<unsigned>(cluster);
    attribute[n].val.clusterDim.y = 1;
    attribute[n++].val.clusterDim.z = 1;
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.stream = s;
  config.attrs = attribute;
  config.numAttrs = n;
  (void)cudaLaunchKernelEx(&config, kernel, args);  // launched() reads the error
#endif
}

template <int V, class T>
void launch_kind(const proto::Args<T>& args, proto::Kind kind, int blocks, int threads, gpuStream_t s, bool overlap) {
  switch (kind) {
    case proto::Kind::one_shot:
      launch_one<T>(peer_kernel<V, T, proto::Kind::one_shot>, args, blocks, threads, s, overlap);
      break;
    case proto::Kind::two_shot:
      launch_one<T>(peer_kernel<V, T, proto::Kind::two_shot>, args, blocks, threads, s, overlap);
      break;
    case proto::Kind::lamport:
      launch_one<T>(peer_kernel<V, T, proto::Kind::lamport>, args, blocks, threads, s, overlap);
      break;
  }
}

const char* kernel_name(proto::Kind kind) {
  switch (kind) {
    case proto::Kind::one_shot: return "the one-shot AllReduce-RMSNorm kernel";
    case proto::Kind::two_shot: return "the two-shot AllReduce-RMSNorm kernel";
    case proto::Kind::lamport: return "the Lamport one-shot AllReduce-RMSNorm kernel";
  }
  return "an AllReduce-RMSNorm kernel";
}

template <class T>
Status launch_peer(const proto::Args<T>& args, proto::Kind kind, int blocks, bool vector, void* stream,
                   bool overlap_launch, int cluster) noexcept {
  constexpr int V = vector_of<T>();
  const auto s = static_cast<gpuStream_t>(stream);
#if !defined(__HIPCC__)
  if (cluster > 1 && kind == proto::Kind::lamport) {
    // Each block a 1/cluster share of the row's vectors; a cluster posts its own rows.
    proto::Args<T> shared_rows = args;
    shared_rows.post_slices = 1;
    const int threads = threads_for((args.hidden + cluster - 1) / cluster, vector ? V : 1);
    if (vector) {
      launch_one<T>(lamport_cluster_kernel<V, T>, shared_rows, blocks * cluster, threads, s, overlap_launch, cluster);
    } else {
      launch_one<T>(lamport_cluster_kernel<1, T>, shared_rows, blocks * cluster, threads, s, overlap_launch, cluster);
    }
    return launched(kernel_name(kind));
  }
#else
  (void)cluster;
#endif
  const int threads = threads_for(args.hidden, vector ? V : 1);
  // Lamport: `blocks` row groups of post_slices blocks each (proto::lamport).
  const int grid = kind == proto::Kind::lamport ? blocks * proto::slices_of(args) : blocks;
  if (vector) {
    launch_kind<V, T>(args, kind, grid, threads, s, overlap_launch);
  } else {
    launch_kind<1, T>(args, kind, grid, threads, s, overlap_launch);
  }
  return launched(kernel_name(kind));
}

Status launch_fill(void* words, size_t count, uint32_t value, void* stream) noexcept {
  if (count == 0) return Status::ok;
  const size_t wanted = (count + 255) / 256;
  const int blocks = static_cast<int>(wanted < 1024 ? wanted : 1024);
  fill_kernel<<<blocks, 256, 0, static_cast<gpuStream_t>(stream)>>>(static_cast<uint32_t*>(words), count, value);
  return launched("the fill kernel");
}

template <class T>
Status launch_local(const T* reduced, T* residual, const T* weight, T* out, int64_t tokens, int64_t hidden,
                    float epsilon, bool vector, void* stream) noexcept {
  if (tokens <= 0 || hidden <= 0) return Status::ok;
  constexpr int V = vector_of<T>();
  const int threads = threads_for(hidden, vector ? V : 1);
  const int blocks = local_blocks(tokens);
  const auto s = static_cast<gpuStream_t>(stream);
  if (vector) {
    local_kernel<V, T><<<blocks, threads, 0, s>>>(reduced, residual, weight, out, tokens, hidden, epsilon);
  } else {
    local_kernel<1, T><<<blocks, threads, 0, s>>>(reduced, residual, weight, out, tokens, hidden, epsilon);
  }
  return launched("the residual + RMSNorm kernel");
}

Status launch_probe(char* const* regions, int nranks, int rank, size_t probe_offset, uint32_t* mismatches,
                    void* stream) noexcept {
  proto::Args<float> a{};
  for (int q = 0; q < nranks && q < proto::kMaxRanks; ++q) a.region[q] = regions[q];
  a.rank = rank;
  a.nranks = nranks;
  a.layout.probe = probe_offset;
  probe_kernel<<<1, 64, 0, static_cast<gpuStream_t>(stream)>>>(a, mismatches);
  return launched("the peer-access probe kernel");
}

uint64_t ticks_per_ms() noexcept {
#if defined(__HIPCC__)
  // MI200 and MI300 run the wall clock at 100 MHz; ROCm 6 can say so
  // (older HIP, as Debian's 5.2, has no attribute for it).
  int khz = 100000;
#if HIP_VERSION >= 60000000
  int device = 0;
  if (hipGetDevice(&device) != hipSuccess ||
      hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, device) != hipSuccess || khz <= 0) {
    (void)hipGetLastError();
    khz = 100000;
  }
#endif
  return static_cast<uint64_t>(khz);
#else
  // %globaltimer counts nanoseconds
  return 1000000;
#endif
}

int multiprocessors() noexcept {
  static std::atomic<int> known[64] = {};  // per device, asked once
  int device = 0, count = 0;
  if (gpuGetDevice(&device) != gpuSuccess) {
    (void)gpuGetLastError();
    return 1;
  }
  if (device >= 0 && device < 64 && (count = known[device].load(std::memory_order_relaxed)) > 0) return count;
  if (gpuDeviceGetAttribute(&count, gpuDevAttrMultiProcessorCount, device) != gpuSuccess || count <= 0) {
    (void)gpuGetLastError();
    return 1;
  }
  if (device >= 0 && device < 64) known[device].store(count, std::memory_order_relaxed);
  return count;
}

namespace {

// Whether the current device is CUDA compute capability 9.0 or later
// (Hopper): programmatic dependent launches and thread block clusters.
bool hopper_or_later() noexcept {
#if defined(__HIPCC__)
  return false;
#else
  int device = 0, major = 0;
  if (gpuGetDevice(&device) != gpuSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != gpuSuccess) {
    (void)gpuGetLastError();
    return false;
  }
  return major >= 9;
#endif
}

}  // namespace

bool overlap_launch_supported() noexcept { return hopper_or_later(); }

int cluster_max() noexcept {
#if defined(__HIPCC__)
  return 1;
#else
  // Asked once per device: code for sm_90 or later in this binary (a build
  // for older GPUs only JIT-compiles the kernel without clusters).
  static std::atomic<int> known[64] = {};
  int device = 0;
  if (gpuGetDevice(&device) != gpuSuccess) {
    (void)gpuGetLastError();
    return 1;
  }
  if (device >= 0 && device < 64) {
    const int k = known[device].load(std::memory_order_relaxed);
    if (k > 0) return k;
  }
  int largest = 1;
  cudaFuncAttributes attributes{};
  if (hopper_or_later() && cudaFuncGetAttributes(&attributes, lamport_cluster_kernel<8, math::Bf16>) == cudaSuccess &&
      attributes.binaryVersion >= 90) {
    largest = 8;
  }
  (void)cudaGetLastError();
  if (device >= 0 && device < 64) known[device].store(largest, std::memory_order_relaxed);
  return largest;
#endif
}

#define STRATA_FUSED_INSTANTIATE(T)                                                                         \
  template Status launch_peer<T>(const proto::Args<T>&, proto::Kind, int, bool, void*, bool, int) noexcept; \
  template Status launch_local<T>(const T*, T*, const T*, T*, int64_t, int64_t, float, bool, void*) noexcept;
STRATA_FUSED_INSTANTIATE(float)
STRATA_FUSED_INSTANTIATE(math::Bf16)
STRATA_FUSED_INSTANTIATE(math::F16)
#undef STRATA_FUSED_INSTANTIATE

}  // namespace strata::fused::kernels
