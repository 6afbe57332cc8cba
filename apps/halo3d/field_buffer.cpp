// The field's memory. The only file of the app that calls the CUDA runtime
// (compiled as C++ against the CUDA headers; no kernels). A HIP build would map
// each call one to one (hipGetDeviceCount, hipSetDevice, hipGetDeviceProperties,
// hipMalloc, hipHostMalloc, hipMemcpy, hipFree, hipHostFree); not built here.
#include "field_buffer.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <new>

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

#else  // no device support in this build

namespace {

constexpr const char* kNoDeviceSupport =
    "--memory device: this build of strata-halo3d has no device memory support "
    "(built without CUDA or HIP); use --memory host";

}  // namespace

DeviceSelection select_device(int /*local_rank*/, DeviceInfo& info, std::string& error) {
  info = DeviceInfo{};
  error = kNoDeviceSupport;
  return DeviceSelection::NoDevice;
}

bool FieldBuffer::allocate_device(std::size_t /*bytes*/, std::string& error) {
  error = kNoDeviceSupport;
  return false;
}

bool FieldBuffer::to_device() { return true; }

bool FieldBuffer::to_host() { return true; }

void FieldBuffer::release() {
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
