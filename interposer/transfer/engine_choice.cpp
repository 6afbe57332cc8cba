#include "interposer/transfer/engine_choice.hpp"

#include "base/config.hpp"

#include <algorithm>

namespace strata::interposer {
namespace {

config::ChoiceParam<EngineSetting> g_engine{
    "STRATA_DEVICE_ENGINE",
    EngineSetting::automatic,
    {{"auto", EngineSetting::automatic}, {"kernels", EngineSetting::kernels}, {"copies", EngineSetting::copies}},
    "What packs strided device data for a host-bound message: auto = measured per flush size (kernels alone on a "
    "GPU, copy engines when other processes time-slice it), kernels = the pack kernels, copies = the copy engines "
    "(strided 2D/3D copies; layouts they cannot move still go to the kernels)"};

int log2_bucket(int64_t v, int buckets) {
  int b = 0;
  while (v > 1 && b < buckets - 1) {
    v >>= 1;
    ++b;
  }
  return b;
}

}  // namespace

const char* to_string(Engine engine) { return engine == Engine::copies ? "copies" : "kernels"; }

EngineSetting engine_setting() { return g_engine.get(); }

double EngineChooser::Arm::median() const {
  if (samples == 0) return -1;
  const int n = std::min(samples, kWindow);
  double v[kWindow];
  std::copy(last, last + n, v);
  std::sort(v, v + n);
  return v[n / 2];
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
  const Engine best = c.median() < k.median() ? Engine::copies : Engine::kernels;
  if (e.picks % kExploreEvery == 0) return best == Engine::copies ? Engine::kernels : Engine::copies;
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

}  // namespace strata::interposer
