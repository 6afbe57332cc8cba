// strata-measure, device part: the launch cost of a pack, copy rates between
// host and device, and a ping-pong of derived types in device buffers between
// rank pairs through each method the MPI allows (one-way times;
// interposer/model/device_model.hpp).
#pragma once

#include "interposer/model/device_model.hpp"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace strata::measure {

struct DeviceGrid {
  std::vector<int64_t> blocks{1, 8, 64, 512};  // plus contiguous data (block = size)
  std::vector<int64_t> sizes{1024, 4096, 65536, 1 << 20, 16 << 20};
  int samples = 7;
  double min_sample_us = 300;
};

struct DeviceFigures {
  double launch_us = 0;  // a small pack kernel: launch and synchronize
  double h2d_gbps = 0;   // pinned host to device, 64 MiB
  double d2h_gbps = 0;
  std::vector<interposer::DeviceSample> transfer;
};

// Every rank uses GPU rank % count and ping-pongs with a partner (0-1, 2-3,
// ...), all pairs at once. Figures on rank 0; empty when there is no GPU.
DeviceFigures measure_device(MPI_Comm comm, const DeviceGrid& grid);

}  // namespace strata::measure
