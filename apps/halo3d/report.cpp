#include "report.hpp"

#include <dlfcn.h>

#include <cstring>
#include <string>

namespace halo3d {

bool strata_interposer_preloaded() { return dlsym(RTLD_DEFAULT, "strata_preload_counters") != nullptr; }

GpuAwareness mpi_gpu_awareness() {
  using Query = int (*)();
  void* symbol = dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
  if (symbol == nullptr) {
    return GpuAwareness::Unknown;
  }
  Query query = nullptr;
  static_assert(sizeof query == sizeof symbol, "function and object pointers differ in size");
  std::memcpy(&query, &symbol, sizeof query);
  return query() != 0 ? GpuAwareness::Yes : GpuAwareness::No;
}

void print_summary(std::FILE* out, const RunReport& r) {
  const Options& o = *r.options;
  std::fprintf(out, "strata-halo3d: %d ranks as %dx%dx%d (periodic), local grid %dx%dx%d, radius %d\n", r.ranks,
               r.procs[0], r.procs[1], r.procs[2], o.grid[0], o.grid[1], o.grid[2], o.radius);
  std::fprintf(out, "  %d %s of %s per cell, %s layout, %s memory, 26 neighbours per rank\n", o.quantities,
               o.quantities == 1 ? "quantity" : "quantities", to_string(o.type), to_string(o.layout),
               to_string(o.memory));
  if (o.memory == MemoryKind::Device) {
    std::fprintf(out,
                 "  device:              device %d of %d on rank 0 (%s); each rank uses "
                 "local rank %% %d\n",
                 r.device.device, r.device.device_count, r.device.name.c_str(), r.device.device_count);
    std::fprintf(out, "  staging:             %s\n",
                 o.staging == Staging::App ? "app (each exchange: whole field to pinned host memory, MPI on the host "
                                             "copy, back to the device; copies timed)"
                                           : "none (device pointers to MPI)");
  }
  std::fprintf(out, "  bytes per exchange:  %lld (sent, all ranks)\n", r.bytes_per_exchange);
  std::fprintf(out,
               "  time per exchange:   %.3f us median, %.3f min, %.3f max (slowest rank; "
               "%d reps of %d, %d warm-up)\n",
               r.timing.median_us, r.timing.min_us, r.timing.max_us, o.reps, o.iters, o.warmup);
  if (r.timing.median_us > 0) {
    std::fprintf(out, "  throughput:          %.3f GB/s (bytes per exchange / median time)\n",
                 static_cast<double>(r.bytes_per_exchange) / (r.timing.median_us * 1e3));
  }
  if (r.verified()) {
    std::fprintf(out, "  verification:        passed (every ghost and owned cell)\n");
  } else {
    std::fprintf(out, "  verification:        FAILED: %lld wrong ghost values, %lld changed owned values\n",
                 r.ghost_mismatches, r.owned_mismatches);
  }
  std::fprintf(out, "  Strata interposer:   %s\n", r.preloaded ? "preloaded" : "not loaded");
  std::fflush(out);
}

void print_json(std::FILE* out, const RunReport& r) {
  const Options& o = *r.options;
  std::fprintf(out,
               "{\"ranks\":%d,\"procs\":[%d,%d,%d],\"grid\":[%d,%d,%d],\"radius\":%d,"
               "\"quantities\":%d,\"type\":\"%s\",\"layout\":\"%s\",\"memory\":\"%s\",\"staging\":\"%s\","
               "\"time_per_exchange_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,"
               "\"bytes_per_exchange\":%lld,\"warmup\":%d,\"reps\":%d,\"iters\":%d,"
               "\"mismatches\":%lld,\"verified\":%s,\"preloaded\":%s}\n",
               r.ranks, r.procs[0], r.procs[1], r.procs[2], o.grid[0], o.grid[1], o.grid[2], o.radius, o.quantities,
               to_string(o.type), to_string(o.layout), to_string(o.memory), to_string(o.staging), r.timing.median_us,
               r.timing.min_us, r.timing.max_us, r.bytes_per_exchange, o.warmup, o.reps, o.iters,
               r.ghost_mismatches + r.owned_mismatches, r.verified() ? "true" : "false",
               r.preloaded ? "true" : "false");
  std::fflush(out);
}

}  // namespace halo3d
