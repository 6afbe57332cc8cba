// Which of the mover's methods (portability/mover/method.hpp) moves a device
// buffer best: DEVICE (pack on the device, hand
// the device buffer to a GPU-aware MPI), ONE_SHOT (the kernel writes straight
// into mapped pinned host memory; the receiver's kernel reads from it),
// STAGED (pack on the device, copy to pinned host memory in pipelined
// chunks) or SPAN (the copy engine copies the bytes the datatype spans to
// pinned host memory and the library packs there: no kernel at all, which
// wins for small messages, where a kernel launch and its wait cost more
// than the copy). The model holds measured one-way times of a message between two
// ranks per method, block length and size (strata-measure's "device"
// section); the cheapest measured method wins.
#pragma once

#include <strata/status.hpp>

#include "portability/mover/method.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::interposer {

using mover::Method;
using mover::to_string;

struct DeviceSample {
  Method method = Method::staged;
  int64_t block = 0;  // bytes per contiguous block (the packed size for contiguous data)
  int64_t bytes = 0;  // packed bytes
  double ns = 0;      // one-way time of a message
};

class DeviceModel {
 public:
  // The reference run (reference_device_model.json, embedded at build time:
  // strata-measure on an H200 machine, one GPU per rank). Where it has no
  // figures for a method, the rule of thumb: ONE_SHOT up to 256 KiB, STAGED
  // above (DEVICE above that when the MPI is GPU-aware).
  static DeviceModel builtin();
  // The "device" section of a model.json; malformed input: invalid_argument.
  static Result<DeviceModel> from_json(const std::string& text) noexcept;
  // The "device" section as a JSON object.
  std::string to_json_section() const;

  // The method for a message: a table lookup (the decisions are worked out
  // once per size and block-length bucket when the model is made; a call
  // is on every send and receive).
  Method choose(int64_t packed_bytes, int64_t block, bool gpu_aware) const;
  // The same, SPAN left out (for a datatype whose span is wider than the
  // span the measurement copied).
  Method choose_packing(int64_t packed_bytes, int64_t block, bool gpu_aware) const;

  // strata-measure's span samples are hvectors at stride max(2 x block,
  // 64): a span of packed_bytes x this ratio. A type spanning more than
  // twice that copies bytes the model never paid for.
  static double measured_span_ratio(int64_t block);

  std::vector<DeviceSample> samples;
  std::string source;

 private:
  static Result<DeviceModel> parse(const std::string& text);
  Method decide(int64_t packed_bytes, int64_t block, bool gpu_aware, bool with_span) const;
  void build_table();
  static constexpr int kBlockBuckets = 32;  // log2(block)
  static constexpr int kBytesBuckets = 48;  // log2(bytes)
  Method table_[2][kBlockBuckets][kBytesBuckets] = {};
  Method packing_[2][kBlockBuckets][kBytesBuckets] = {};
};

const DeviceModel& device_model();

// The reference model's JSON, embedded at build time.
const char* reference_device_model_json();

// STRATA_METHOD (device|oneshot|staged|span|auto) over the model. DEVICE needs a
// GPU-aware MPI: forced on one that is not, STAGED is used (said once).
// `span_bytes`: the bytes the data spans (0: unknown), which keeps the model
// from choosing SPAN for a type much wider than the ones it measured (a
// halo's edge: 4.6 KB of data spread over 2.5 MB).
Method choose_method(int64_t packed_bytes, int64_t block, int64_t span_bytes = 0);

// For strata-measure: forces a method (-1: back to the configuration).
void override_method(int method);

}  // namespace strata::interposer
