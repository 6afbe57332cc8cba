#include "tools/measure/device_measure.hpp"

#include "interposer/handlers/direct.hpp"
#include "interposer/transfer/gpu_aware.hpp"
#include "interposer/types/type_cache.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/pack_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace strata::measure {

using mpi::real;

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Device memory filled with a non-zero pattern (never time zeros).
struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) : size(bytes) {
    if (gpu::malloc_device(&ptr, bytes) != Status::ok) ptr = nullptr;
    if (ptr != nullptr) gpu::memset_async(ptr, 0x5a, bytes, nullptr);
  }
  ~DeviceBuffer() {
    if (ptr != nullptr) gpu::free_device(ptr);
  }
  void* ptr = nullptr;
  size_t size;
};

double rate_gbps(void* dst, const void* src, size_t bytes) {
  gpu::Stream s = nullptr;
  gpu::stream_create(&s);
  std::vector<double> v;
  for (int i = 0; i < 7; ++i) {
    const double t0 = now_us();
    gpu::memcpy_async(dst, src, bytes, s);
    gpu::stream_synchronize(s);
    v.push_back(static_cast<double>(bytes) / ((now_us() - t0) * 1000.0));
  }
  gpu::stream_destroy(s);
  return median(v);
}

// One-way time of a ping-pong with the partner (the lower rank pings),
// forced to `method`; the slowest pair's median, in ns. Every pair runs at
// once; a rank without a partner idles.
double ping_pong_ns(MPI_Comm comm, int rank, int partner, MPI_Datatype type, void* a, void* b,
                    interposer::Method method, const DeviceGrid& grid) {
  interposer::override_method(static_cast<int>(method));
  auto round_trips = [&](int n) {
    for (int i = 0; i < n && partner != rank; ++i) {
      if (rank < partner) {
        interposer::direct::send(a, 1, type, partner, 9, comm);
        interposer::direct::recv(b, 1, type, partner, 9, comm, MPI_STATUS_IGNORE);
      } else {
        interposer::direct::recv(b, 1, type, partner, 9, comm, MPI_STATUS_IGNORE);
        interposer::direct::send(a, 1, type, partner, 9, comm);
      }
    }
  };
  round_trips(2);
  double t0 = now_us();
  round_trips(1);
  double one = std::max(now_us() - t0, 0.1);
  real().MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, comm);
  const int batch = static_cast<int>(std::clamp(grid.min_sample_us / one, 1.0, 5000.0));
  std::vector<double> samples;
  for (int s = 0; s < grid.samples; ++s) {
    real().MPI_Barrier(comm);
    const double t1 = now_us();
    round_trips(batch);
    double ns = (now_us() - t1) * 1000.0 / (2.0 * batch);
    real().MPI_Allreduce(MPI_IN_PLACE, &ns, 1, MPI_DOUBLE, MPI_MAX, comm);
    samples.push_back(ns);
  }
  interposer::override_method(-1);
  return median(samples);
}

}  // namespace

DeviceFigures measure_device(MPI_Comm comm, const DeviceGrid& grid) {
  DeviceFigures out;
  int rank = 0, size = 0, devices = 0;
  real().MPI_Comm_rank(comm, &rank);
  real().MPI_Comm_size(comm, &size);
  int have = gpu::available() && gpu::device_count(&devices) == Status::ok && devices > 0 ? 1 : 0;
  real().MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, comm);
  if (!have) return out;
  gpu::set_device(rank % devices);
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;

  // Launch cost: a one-block pack and its synchronisation.
  {
    DeviceBuffer src(4096), dst(4096);
    StridedBlock tiny{0, 8, {{16, 64}}, 0};
    gpu::Stream s = nullptr;
    gpu::stream_create(&s);
    std::vector<double> v;
    for (int i = 0; i < 50; ++i) {
      const double t0 = now_us();
      gpu::pack_async(tiny, src.ptr, dst.ptr, s);
      gpu::stream_synchronize(s);
      if (i >= 5) v.push_back(now_us() - t0);
    }
    gpu::stream_destroy(s);
    out.launch_us = median(v);
  }
  // Copy rates through pinned memory.
  {
    const size_t bytes = size_t{64} << 20;
    DeviceBuffer dev(bytes);
    void* pinned = nullptr;
    if (gpu::malloc_pinned(&pinned, bytes, false) == Status::ok) {
      out.h2d_gbps = rate_gbps(dev.ptr, pinned, bytes);
      out.d2h_gbps = rate_gbps(pinned, dev.ptr, bytes);
      gpu::free_pinned(pinned);
    }
  }
  std::vector<interposer::Method> methods{interposer::Method::oneshot, interposer::Method::staged,
                                          interposer::Method::span};
  if (interposer::mpi_is_gpu_aware()) methods.push_back(interposer::Method::device);
  for (int64_t bytes : grid.sizes) {
    std::vector<int64_t> blocks = grid.blocks;
    blocks.push_back(bytes);  // contiguous data
    for (int64_t block : blocks) {
      const int64_t n = bytes / block;
      const int64_t stride = block == bytes ? block : std::max<int64_t>(2 * block, 64);
      DeviceBuffer a(static_cast<size_t>(n * stride)), b(static_cast<size_t>(n * stride));
      if (a.ptr == nullptr || b.ptr == nullptr) continue;
      MPI_Datatype type = MPI_DATATYPE_NULL;
      real().MPI_Type_create_hvector(static_cast<int>(n), static_cast<int>(block), stride, MPI_BYTE, &type);
      real().MPI_Type_commit(&type);
      interposer::type_cache().on_commit(type);
      for (interposer::Method m : methods) {
        const double ns = std::min(ping_pong_ns(comm, rank, partner, type, a.ptr, b.ptr, m, grid),
                                   ping_pong_ns(comm, rank, partner, type, a.ptr, b.ptr, m, grid));
        if (rank == 0) {
          out.transfer.push_back({m, block, n * block, ns});
          std::fprintf(stderr, "  device ping-pong %-7s block %9lld B, %9lld B: %10.0f ns (%.2f GB/s)\n",
                       interposer::to_string(m), static_cast<long long>(block), static_cast<long long>(n) * block, ns,
                       static_cast<double>(n * block) / ns);
        }
      }
      interposer::type_cache().on_free(type);
      real().MPI_Type_free(&type);
    }
  }
  return out;
}

}  // namespace strata::measure
