// Where the field lives. With host memory, data() and host_view() are the same
// array. With device memory (a build with STRATA_HALO_HAVE_DEVICE=1, i.e. CUDA;
// in a CPU build, the interposer's device stand-in, field_buffer.cpp),
// data() is the cudaMalloc'd field MPI sends from and receives into, and
// host_view() a pinned host mirror (cudaMallocHost) used to set up and check
// the values, and by --staging app to exchange on the host; to_device() and
// to_host() copy the whole field between them.
//
// Every CUDA runtime call of the program is in field_buffer.cpp: this header
// and the rest of the app stay free of CUDA.
#pragma once

#include "options.hpp"

#include <cstddef>
#include <string>
#include <vector>

#ifndef STRATA_HALO_HAVE_DEVICE
#define STRATA_HALO_HAVE_DEVICE 0
#endif

namespace halo3d {

// True when the field can be placed in device memory: a CUDA build, or a CPU
// build running under the device stand-in of a CPU build of Strata's
// interposer (libstrata_preload.so with STRATA_FAKE_DEVICE=N), which lets
// the interposer's device path run without a GPU.
bool device_memory_supported();

enum class DeviceSelection {
  Selected,  // the device is current for this process
  NoDevice,  // no device is visible (or no usable driver): `error` says what the runtime said
  Error,     // a device exists but could not be selected: `error` says why
};

// The device a rank uses (rank 0's goes into the report).
struct DeviceInfo {
  int device = -1;       // -1: none (host memory)
  int device_count = 0;  // devices visible to the process
  std::string name;      // e.g. "NVIDIA H200"
};

// Makes device `local_rank % device_count` current for this process, so that
// the ranks of a node spread over its devices (and share them when there are
// more ranks than devices), and fills `info`.
DeviceSelection select_device(int local_rank, DeviceInfo& info, std::string& error);

class FieldBuffer {
 public:
  FieldBuffer() = default;
  FieldBuffer(const FieldBuffer&) = delete;
  FieldBuffer& operator=(const FieldBuffer&) = delete;
  ~FieldBuffer();

  // Allocates `bytes` of `memory` (for the device: on the current device,
  // plus the pinned host mirror); false with a message in `error` otherwise.
  bool allocate(MemoryKind memory, std::size_t bytes, std::string& error);

  void* data() { return device_ != nullptr ? device_ : host_view(); }  // what MPI sees
  void* host_view() { return pinned_ != nullptr ? pinned_ : host_.data(); }
  bool on_device() const { return device_ != nullptr; }

  // host_view() -> data() and data() -> host_view(), the whole field; nothing
  // to do for host memory. False (with a message on stderr) on a CUDA error.
  bool to_device();
  bool to_host();

 private:
  bool allocate_device(std::size_t bytes, std::string& error);
  void release();

  std::vector<double> host_;  // host memory: double-aligned storage for float and double fields
  void* device_ = nullptr;    // device memory: the field
  void* pinned_ = nullptr;    // device memory: its pinned host mirror
  std::size_t bytes_ = 0;
};

}  // namespace halo3d
