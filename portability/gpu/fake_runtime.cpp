// The device stand-in (fake_device.hpp): its switch, its error slot, and its
// devices (a thread's current device, properties).
#include "portability/gpu/fake_device.hpp"

#include "base/config.hpp"
#include "base/log.hpp"

#include <cstdlib>
#include <utility>

namespace strata::gpu::fake {
namespace {

config::IntParam g_devices{"STRATA_FAKE_DEVICE", 0,
                           "Only in builds without CUDA or HIP, for tests: N > 0 gives N stand-in devices (device "
                           "memory that faults when the host touches it, copies and packs run on the host at the "
                           "call) so that every device code path runs without a GPU; 0: no device",
                           0, 64};

config::BoolParam g_per_rank{"STRATA_FAKE_DEVICE_PER_RANK", false,
                             "Only in builds without CUDA or HIP, for tests: each process's stand-in devices are "
                             "other physical GPUs than its node neighbours' (PCI addresses by node-local rank), as "
                             "CUDA_VISIBLE_DEVICES set per rank gives every rank a device 0 of its own"};

// The process's rank on its node, from the launcher (Open MPI, MPICH's
// Hydra, Slurm); 0 where none says.
int local_rank() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

thread_local const char* t_last_error = "no error";
thread_local int t_device = 0;

}  // namespace

int count() noexcept {
  static const int n = static_cast<int>(g_devices.get());
  return n;
}

bool enabled() noexcept { return count() > 0; }

Status fail(const char* call, const char* what) noexcept {
  t_last_error = what;
  STRATA_LOG(error, kDevice, "fake: %s failed: %s", call, what);
  return Status::device_error;
}

const char* last_error() noexcept { return t_last_error; }

Status set_device(int device) noexcept {
  if (device < 0 || device >= count()) return fail("set_device", "invalid device ordinal");
  t_device = device;
  return Status::ok;
}

Status get_device(int* device) noexcept {
  if (device == nullptr) return Status::invalid_argument;
  *device = t_device;
  return Status::ok;
}

// Plausible figures (an H100's limits) with a small multiprocessor count.
Status properties(int device, DeviceProperties* out) noexcept {
  if (out == nullptr) return Status::invalid_argument;
  if (device < 0 || device >= count()) return fail("properties", "invalid device ordinal");
  DeviceProperties p;
  p.name = "strata fake device";
  p.sm_count = 4;
  p.warp_size = 32;
  p.max_threads_per_block = 1024;
  p.max_grid[0] = 2147483647;
  p.max_grid[1] = 65535;
  p.max_grid[2] = 65535;
  p.total_memory = int64_t{80} << 30;
  p.compute_major = 9;
  p.compute_minor = 0;
  p.pci_domain = 0;
  static const int first = g_per_rank.get() ? local_rank() * count() : 0;
  p.pci_bus = 0x10 + first + device;  // distinct per device (and per rank: STRATA_FAKE_DEVICE_PER_RANK)
  p.pci_device = 0;
  *out = std::move(p);
  return Status::ok;
}

}  // namespace strata::gpu::fake
