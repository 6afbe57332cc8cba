// strata-measure, host part: times derived-type exchanges between pairs of
// ranks through the library and through Strata's path, and MPI_Pack against
// Strata's pack, over a grid of block lengths and message sizes.
#pragma once

#include "interposer/model/host_model.hpp"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace strata::measure {

struct GridOptions {
  std::vector<int64_t> blocks{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  std::vector<int64_t> sizes{256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304};
  int64_t max_source_bytes = int64_t{256} << 20;  // per buffer
  int samples = 9;
  double min_sample_us = 200;  // round trips are batched until a sample lasts this long
};

// The stride used for blocks of `block` bytes: 512 B (the reference layout of
// bench/results), or twice the block when that is larger.
int64_t stride_for(int64_t block);

// Every rank of `comm` exchanges with a partner (0-1, 2-3, ...) at once, so
// the figures include the contention of a job launched the same way. Returns
// the samples on rank 0 (empty elsewhere). Progress goes to stderr.
std::vector<interposer::HostSample> measure_transfers(MPI_Comm comm, const GridOptions& grid);

// Rank 0 times MPI_Pack against Strata's pack over the same grid.
std::vector<interposer::HostSample> measure_packs(const GridOptions& grid);

// Median memcpy rate of `bytes`, GB/s of copied data.
double measure_memcpy_gbps(int64_t bytes);

}  // namespace strata::measure
