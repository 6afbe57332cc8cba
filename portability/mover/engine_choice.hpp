// Which part of the GPU packs a device message: its streaming
// multiprocessors (the pack kernels) or its copy engines (strided
// cudaMemcpy3D/2D boxes, portability/layout/box_copies.hpp).
//
// Kernels win on a GPU the process has to itself: one batched launch packs
// many layouts. But a kernel waits for the GPU's compute engine: for the
// time slices of other processes on the same GPU without MPS (275 us per
// launch and wait with 2 processes on an H100, 549 us with 4, where it is 9 us
// alone), or for the application's own kernels that fill it. Copies run on
// separate engines and pay neither. Which wins is measured, not guessed:
// per thread and device (each thread waits only for its own work), per
// direction and per size of a flush (packed bytes and
// number of strided parts, in powers of two), the chooser tries both,
// keeps the median of each one's last three device times, uses the faster,
// and tries the other again every 16th time, or every 64th when it was
// more than twice as slow (the GPU's state changes when other jobs come
// and go; a kernel on a time-sliced GPU costs hundreds of microseconds).
// STRATA_DEVICE_ENGINE forces one.
#pragma once

#include <cstdint>

namespace strata::mover {

enum class Engine { kernels, copies };
const char* to_string(Engine engine);

class EngineChooser {
 public:
  // The engine for a flush of `parts` strided parts holding `bytes` packed
  // bytes (pack: a send side, else a receive side).
  Engine pick(bool pack, int64_t bytes, int64_t parts);
  // What such a flush cost with `used`: microseconds from queueing the
  // first part to the end of the wait for the device.
  void record(bool pack, int64_t bytes, int64_t parts, Engine used, double us);
  // The estimate for an engine (microseconds; negative: not yet tried).
  double estimate(bool pack, int64_t bytes, int64_t parts, Engine engine) const;

  // Logs (STRATA_LOG=info) every measured flush size: both engines' times
  // and the one in use.
  void log_summary(int device) const;

  static constexpr int kExploreEvery = 16;
  static constexpr int kExploreRarely = 64;  // when the other engine was over twice as slow
  static constexpr int kWindow = 3;

 private:
  struct Arm {
    double last[kWindow] = {};
    int samples = 0;
    double median() const;
  };
  struct Entry {
    Arm arms[2];
    uint32_t picks = 0;
  };
  static constexpr int kBytesBuckets = 48;
  static constexpr int kPartBuckets = 8;
  Entry& entry(bool pack, int64_t bytes, int64_t parts);
  const Entry& entry(bool pack, int64_t bytes, int64_t parts) const;
  Entry table_[2][kBytesBuckets][kPartBuckets] = {};
};

// STRATA_DEVICE_ENGINE: auto (the chooser), kernels or copies.
enum class EngineSetting { automatic, kernels, copies };
EngineSetting engine_setting();

}  // namespace strata::mover
