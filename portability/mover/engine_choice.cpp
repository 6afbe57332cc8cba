// The engine chooser and STRATA_DEVICE_ENGINE (engine_choice.hpp).
#include "portability/mover/engine_choice.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "portability/numeric/log2_buckets.hpp"

#include <algorithm>

namespace strata::mover {

using numeric::log2_bucket;

namespace {

config::ChoiceParam<EngineSetting> g_engine{
    "STRATA_DEVICE_ENGINE",
    EngineSetting::automatic,
    {{"auto", EngineSetting::automatic}, {"kernels", EngineSetting::kernels}, {"copies", EngineSetting::copies}},
    "What packs strided device data for a host-bound message: auto = measured per flush size (kernels alone on a "
    "GPU, copy engines when other processes time-slice it), kernels = the pack kernels, copies = the copy engines "
    "(strided 2D/3D copies; layouts they cannot move still go to the kernels)"};

}  // namespace

const char* to_string(Engine engine) { return engine == Engine::copies ? "copies" : "kernels"; }

EngineSetting engine_setting() { return g_engine.get(); }

double EngineChooser::Arm::median() const {
  static_assert(kWindow == 3, "the median below is of at most three samples");
  if (samples == 0) return -1;
  if (samples == 1) return last[0];
  if (samples == 2) return std::max(last[0], last[1]);  // the pessimistic one of two
  const double a = last[0], b = last[1], c = last[2];
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

EngineChooser::Entry& EngineChooser::entry(bool pack, int64_t bytes, int64_t parts) {
  return table_[pack ? 1 : 0][log2_bucket(bytes, kBytesBuckets)][log2_bucket(parts, kPartBuckets)];
}

const EngineChooser::Entry& EngineChooser::entry(bool pack, int64_t bytes, int64_t parts) const {
  return table_[pack ? 1 : 0][log2_bucket(bytes, kBytesBuckets)][log2_bucket(parts, kPartBuckets)];
}

Engine EngineChooser::pick(bool pack, int64_t bytes, int64_t parts) {
  Entry& e = entry(pack, bytes, parts);
  const Arm& k = e.arms[static_cast<int>(Engine::kernels)];
  const Arm& c = e.arms[static_cast<int>(Engine::copies)];
  ++e.picks;
  // Each engine's first samples in turn (a first launch loads the module and
  // is slow: the median of three forgets it), then the faster one, and
  // the other every kExploreEvery-th time.
  if (k.samples < kWindow || c.samples < kWindow) return k.samples <= c.samples ? Engine::kernels : Engine::copies;
  const double kernels_us = k.median();
  const double copies_us = c.median();
  const Engine best = copies_us < kernels_us ? Engine::copies : Engine::kernels;
  const bool far_behind = std::max(kernels_us, copies_us) > 2 * std::min(kernels_us, copies_us);
  if (e.picks % (far_behind ? kExploreRarely : kExploreEvery) == 0) {
    return best == Engine::copies ? Engine::kernels : Engine::copies;
  }
  return best;
}

void EngineChooser::record(bool pack, int64_t bytes, int64_t parts, Engine used, double us) {
  Arm& a = entry(pack, bytes, parts).arms[static_cast<int>(used)];
  a.last[a.samples % kWindow] = us;
  ++a.samples;
}

double EngineChooser::estimate(bool pack, int64_t bytes, int64_t parts, Engine engine) const {
  return entry(pack, bytes, parts).arms[static_cast<int>(engine)].median();
}

void EngineChooser::log_summary(int device) const {
  for (int pack = 0; pack < 2; ++pack) {
    for (int b = 0; b < kBytesBuckets; ++b) {
      for (int p = 0; p < kPartBuckets; ++p) {
        const Entry& e = table_[pack][b][p];
        if (e.picks == 0) continue;
        const double k = e.arms[static_cast<int>(Engine::kernels)].median();
        const double c = e.arms[static_cast<int>(Engine::copies)].median();
        STRATA_LOG(info, kDevice,
                   "device %d, %s of %s%lld B and %s%d strided parts (%u flushes): kernels %.1f us, copy engines "
                   "%.1f us (medians of the last 3; -1: not tried): %s",
                   device, pack ? "packs" : "unpacks", b == 0 ? "" : "~", 1LL << b, p == 0 ? "" : "~", 1 << p, e.picks,
                   k, c,
                   k < 0 || c < 0 ? "still trying"
                   : c < k        ? "copy engines"
                                  : "kernels");
      }
    }
  }
}

}  // namespace strata::mover
