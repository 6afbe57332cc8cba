// What rank 0 prints at the end: a human-readable summary and, with --json,
// one JSON line.
#pragma once

#include "field_buffer.hpp"
#include "options.hpp"
#include "timing.hpp"

#include <array>
#include <cstdio>

namespace halo3d {

struct RunReport {
  int ranks = 0;
  std::array<int, 3> procs{};
  const Options* options = nullptr;
  DeviceInfo device;  // rank 0's device (--memory device)
  TimingResult timing;
  long long bytes_per_exchange = 0;  // sum over ranks of the bytes sent
  long long ghost_mismatches = 0;    // over all ranks
  long long owned_mismatches = 0;    // over all ranks
  bool preloaded = false;

  bool verified() const { return ghost_mismatches == 0 && owned_mismatches == 0; }
};

// True when the Strata interposer is loaded in this process (found by symbol,
// so this program need not link it).
bool strata_interposer_preloaded();

enum class GpuAwareness { Yes, No, Unknown };

// Whether the MPI library says it takes CUDA device buffers: Open MPI's
// MPIX_Query_cuda_support(), looked up by symbol (so the program does not
// depend on Open MPI's extensions); Unknown for other MPIs.
GpuAwareness mpi_gpu_awareness();

void print_summary(std::FILE* out, const RunReport& report);

// One line: {"ranks":..,"procs":[..],"grid":[..],"radius":..,"quantities":..,
// "type":..,"layout":..,"memory":..,"staging":..,"time_per_exchange_us":..,"min_us":..,
// "max_us":..,"bytes_per_exchange":..,"warmup":..,"reps":..,"iters":..,
// "mismatches":..,"verified":..,"preloaded":..}
void print_json(std::FILE* out, const RunReport& report);

}  // namespace halo3d
