// The field's memory. The only file of the app that calls the CUDA runtime
// (compiled as C++ against the CUDA headers; no kernels). A HIP build would map
// each call one to one (hipGetDeviceCount, hipSetDevice, hipGetDeviceProperties,
// hipMalloc, hipHostMalloc, hipMemcpy, hipFree, hipHostFree); not built here.
#include "field_buffer.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <new>

#if !STRATA_HALO_HAVE_DEVICE
#include <dlfcn.h>
#endif

#if STRATA_HALO_HAVE_DEVICE
#include <cuda_runtime.h>
#endif

namespace halo3d {

#if STRATA_HALO_HAVE_DEVICE

namespace {

std::string describe(cudaError_t rc) { return std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc); }

// True when `rc` is cudaSuccess; otherwise writes
// "strata-halo3d: rank R: <call> failed: <name>: <text>" to stderr.
bool cuda_ok(cudaError_t rc, const char* call) {
  if (rc == cudaSuccess) {
    return true;
  }
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);  // best effort: only labels the message
  std::fprintf(stderr, "strata-halo3d: rank %d: %s failed: %s\n", rank, call, describe(rc).c_str());
  return false;
}

}  // namespace

bool device_memory_supported() { return true; }

DeviceSelection select_device(int local_rank, DeviceInfo& info, std::string& error) {
  info = DeviceInfo{};
  int device_count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&device_count);
  if (counted != cudaSuccess || device_count <= 0) {
    error = "--memory device: no CUDA device is visible to this process (cudaGetDeviceCount: " +
            (counted != cudaSuccess ? describe(counted) : std::string("0 devices")) +
            "); run on a GPU node or use --memory host";
    return DeviceSelection::NoDevice;
  }
  const int chosen = local_rank % device_count;
  cudaError_t rc = cudaSetDevice(chosen);
  if (rc == cudaSuccess) {
    rc = cudaFree(nullptr);  // creates the context now, so a broken device shows here
  }
  cudaDeviceProp properties{};
  if (rc == cudaSuccess) {
    rc = cudaGetDeviceProperties(&properties, chosen);
  }
  if (rc != cudaSuccess) {
    error = "--memory device: cannot use CUDA device " + std::to_string(chosen) + " of " +
            std::to_string(device_count) + " (local rank " + std::to_string(local_rank) + "): " + describe(rc);
    return DeviceSelection::Error;
  }
  info.device = chosen;
  info.device_count = device_count;
  info.name = properties.name;
  return DeviceSelection::Selected;
}

bool FieldBuffer::allocate_device(std::size_t bytes, std::string& error) {
  cudaError_t rc = cudaMalloc(&device_, bytes);
  if (rc != cudaSuccess) {
    device_ = nullptr;
    error = "cudaMalloc of " + std::to_string(bytes) + " bytes for the field failed: " + describe(rc);
    return false;
  }
  rc = cudaMallocHost(&pinned_, bytes);
  if (rc != cudaSuccess) {
    pinned_ = nullptr;
    release();
    error = "cudaMallocHost of " + std::to_string(bytes) + " bytes for the field's host mirror failed: " + describe(rc);
    return false;
  }
  bytes_ = bytes;
  std::memset(pinned_, 0, bytes);
  return true;
}

bool FieldBuffer::to_device() {
  if (device_ == nullptr) {
    return true;
  }
  return cuda_ok(cudaMemcpy(device_, pinned_, bytes_, cudaMemcpyHostToDevice), "cudaMemcpy (host to device)");
}

bool FieldBuffer::to_host() {
  if (device_ == nullptr) {
    return true;
  }
  return cuda_ok(cudaMemcpy(pinned_, device_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy (device to host)");
}

void FieldBuffer::release() {
  // Errors at release are reported but change nothing: the memory is gone either way.
  if (device_ != nullptr) {
    cuda_ok(cudaFree(device_), "cudaFree");
    device_ = nullptr;
  }
  if (pinned_ != nullptr) {
    cuda_ok(cudaFreeHost(pinned_), "cudaFreeHost");
    pinned_ = nullptr;
  }
  host_.clear();
  bytes_ = 0;
}

#else  // no GPU runtime in this build: the device stand-in of Strata's CPU build, where it is loaded

namespace {

constexpr const char* kNoDeviceSupport =
    "--memory device: this build of strata-halo3d has no device memory support "
    "(built without CUDA or HIP); use --memory host (or, to exercise the interposer's device path "
    "without a GPU: a CPU build's libstrata_preload.so preloaded with STRATA_FAKE_DEVICE=N)";

// The C entry points of the device stand-in that a CPU build of
// libstrata_preload.so exports (strata_preload.h) and answers under
// STRATA_FAKE_DEVICE=N: "device" memory that the interposer treats as a
// GPU's, so that its device path runs, in CI too, without a GPU. Found with
// dlsym: the app links no Strata library.
struct StandIn {
  int (*count)() = nullptr;
  int (*select)(int) = nullptr;
  void* (*malloc)(size_t) = nullptr;
  void (*free)(void*) = nullptr;
  int (*memcpy)(void*, const void*, size_t) = nullptr;
  bool present() const { return count && select && malloc && free && memcpy && count() > 0; }
};

template <class F>
void find(F* fn, const char* name) {
  *fn = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

const StandIn& stand_in() {
  static const StandIn s = [] {
    StandIn d;
    find(&d.count, "strata_fake_device_count");
    find(&d.select, "strata_fake_device_select");
    find(&d.malloc, "strata_fake_device_malloc");
    find(&d.free, "strata_fake_device_free");
    find(&d.memcpy, "strata_fake_device_memcpy");
    return d;
  }();
  return s;
}

}  // namespace

bool device_memory_supported() { return stand_in().present(); }

DeviceSelection select_device(int local_rank, DeviceInfo& info, std::string& error) {
  info = DeviceInfo{};
  const StandIn& s = stand_in();
  if (!s.present()) {
    error = kNoDeviceSupport;
    return DeviceSelection::NoDevice;
  }
  const int count = s.count();
  const int chosen = local_rank % count;
  if (s.select(chosen) != 0) {
    error = "--memory device: the device stand-in refused device " + std::to_string(chosen);
    return DeviceSelection::Error;
  }
  info.device = chosen;
  info.device_count = count;
  info.name = "Strata device stand-in";
  return DeviceSelection::Selected;
}

bool FieldBuffer::allocate_device(std::size_t bytes, std::string& error) {
  device_ = stand_in().present() ? stand_in().malloc(bytes) : nullptr;
  if (device_ == nullptr) {
    error = "--memory device: the device stand-in could not allocate " + std::to_string(bytes) + " bytes";
    return false;
  }
  // The host mirror: plain memory (the stand-in's copies take any host memory).
  host_.assign((bytes + sizeof(double) - 1) / sizeof(double), 0.0);
  pinned_ = host_.data();
  bytes_ = bytes;
  return true;
}

bool FieldBuffer::to_device() { return device_ == nullptr || stand_in().memcpy(device_, pinned_, bytes_) == 0; }

bool FieldBuffer::to_host() { return device_ == nullptr || stand_in().memcpy(pinned_, device_, bytes_) == 0; }

void FieldBuffer::release() {
  if (device_ != nullptr) stand_in().free(device_);
  device_ = nullptr;
  pinned_ = nullptr;
  host_.clear();
  bytes_ = 0;
}

#endif

FieldBuffer::~FieldBuffer() { release(); }

bool FieldBuffer::allocate(MemoryKind memory, std::size_t bytes, std::string& error) {
  release();
  if (memory == MemoryKind::Device) {
    return allocate_device(bytes, error);
  }
  try {
    host_.assign((bytes + sizeof(double) - 1) / sizeof(double), 0.0);
  } catch (const std::bad_alloc&) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes for the field";
    return false;
  }
  bytes_ = bytes;
  return true;
}

}  // namespace halo3d
