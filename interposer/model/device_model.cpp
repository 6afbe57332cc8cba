#include "interposer/model/device_model.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"
#include "interposer/transfer/gpu_aware.hpp"
#include "portability/numeric/log2_buckets.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>

namespace strata::interposer {

using numeric::log2_bucket;
using numeric::log2_of;

namespace {

enum class Forced { automatic, device, oneshot, staged, span };
config::ChoiceParam<Forced> g_method{
    "STRATA_METHOD",
    Forced::automatic,
    {{"auto", Forced::automatic},
     {"device", Forced::device},
     {"oneshot", Forced::oneshot},
     {"staged", Forced::staged},
     {"span", Forced::span}},
    "Method for device buffers: auto (the measured model), device (a GPU-aware MPI "
    "moves the device buffer), oneshot (kernels through mapped pinned memory), "
    "staged (device pack, pipelined copies through pinned memory), span (copy the datatype's span to the "
    "host, the library packs there)"};

std::atomic<int> g_override{-1};

}  // namespace

DeviceModel DeviceModel::builtin() {
  Result<DeviceModel> m = from_json(reference_device_model_json());
  DeviceModel model;
  if (m) {
    model = std::move(m).value();
  } else {
    model.build_table();  // the rule of thumb
  }
  model.source = "built-in";
  return model;
}

Result<DeviceModel> DeviceModel::from_json(const std::string& text) noexcept {
  try {
    return parse(text);
  } catch (...) {
    return Status::invalid_argument;
  }
}

Result<DeviceModel> DeviceModel::parse(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("device") || !j["device"].is_object()) {
    return Status::invalid_argument;
  }
  const nlohmann::json& device = j["device"];
  if (!device.contains("transfer") || !device["transfer"].is_array()) return Status::invalid_argument;
  DeviceModel m;
  for (const nlohmann::json& p : device["transfer"]) {
    DeviceSample s;
    if (!p.is_object() || !mover::method_from_string(p.value("method", std::string()), &s.method)) {
      return Status::invalid_argument;
    }
    s.block = p.value("block", int64_t{0});
    s.bytes = p.value("bytes", int64_t{0});
    s.ns = p.value("ns", 0.0);
    if (s.block <= 0 || s.bytes <= 0 || !(s.ns > 0)) return Status::invalid_argument;
    m.samples.push_back(s);
  }
  if (m.samples.empty()) return Status::invalid_argument;
  m.build_table();
  return m;
}

std::string DeviceModel::to_json_section() const {
  nlohmann::json transfer = nlohmann::json::array();
  for (const DeviceSample& s : samples) {
    transfer.push_back({{"method", to_string(s.method)}, {"block", s.block}, {"bytes", s.bytes}, {"ns", s.ns}});
  }
  return nlohmann::json{{"transfer", transfer}}.dump();
}

void DeviceModel::build_table() {
  for (int aware = 0; aware < 2; ++aware) {
    for (int bb = 0; bb < kBlockBuckets; ++bb) {
      for (int nb = 0; nb < kBytesBuckets; ++nb) {
        table_[aware][bb][nb] = decide(int64_t{1} << nb, int64_t{1} << bb, aware != 0, true);
        packing_[aware][bb][nb] = decide(int64_t{1} << nb, int64_t{1} << bb, aware != 0, false);
      }
    }
  }
}

Method DeviceModel::choose(int64_t packed_bytes, int64_t block, bool gpu_aware) const {
  return table_[gpu_aware ? 1 : 0][log2_bucket(block, kBlockBuckets)][log2_bucket(packed_bytes, kBytesBuckets)];
}

Method DeviceModel::choose_packing(int64_t packed_bytes, int64_t block, bool gpu_aware) const {
  return packing_[gpu_aware ? 1 : 0][log2_bucket(block, kBlockBuckets)][log2_bucket(packed_bytes, kBytesBuckets)];
}

double DeviceModel::measured_span_ratio(int64_t block) {
  const double b = static_cast<double>(std::max<int64_t>(block, 1));
  return std::max(2.0, 64.0 / b);
}

Method DeviceModel::decide(int64_t packed_bytes, int64_t block, bool gpu_aware, bool with_span) const {
  // A method's time at the query: the geometric mean of its samples of the
  // nearest measured block length, at the nearest size and its neighbours
  // within a factor of 4, scaled to the query size.
  double best = 0;
  Method best_method = Method::staged;
  bool any = false;
  for (Method m : {Method::device, Method::oneshot, Method::staged, Method::span}) {
    if (m == Method::device && !gpu_aware) continue;
    if (m == Method::span && !with_span) continue;
    double nearest_block = 1e300;
    for (const DeviceSample& s : samples) {
      if (s.method == m) nearest_block = std::min(nearest_block, std::fabs(log2_of(s.block) - log2_of(block)));
    }
    double nearest_bytes = 1e300;
    for (const DeviceSample& s : samples) {
      if (s.method == m && std::fabs(log2_of(s.block) - log2_of(block)) == nearest_block) {
        nearest_bytes = std::min(nearest_bytes, std::fabs(log2_of(s.bytes) - log2_of(packed_bytes)));
      }
    }
    double sum = 0;
    int n = 0;
    for (const DeviceSample& s : samples) {
      if (s.method != m || std::fabs(log2_of(s.block) - log2_of(block)) != nearest_block) continue;
      const double distance = std::fabs(log2_of(s.bytes) - log2_of(packed_bytes));
      if (distance > nearest_bytes + 2.0) continue;
      sum += std::log(s.ns * static_cast<double>(packed_bytes) / static_cast<double>(s.bytes));
      ++n;
    }
    if (n == 0) continue;
    const double t = std::exp(sum / n);
    if (!any || t < best) {
      best = t;
      best_method = m;
      any = true;
    }
  }
  if (any) return best_method;
  // No measurements: the rule of thumb of builtin().
  if (packed_bytes <= (int64_t{256} << 10)) return Method::oneshot;
  return gpu_aware ? Method::device : Method::staged;
}

const DeviceModel& device_model() {
  static const DeviceModel model = [] {
    std::string path = model_file_path();
    if (!path.empty()) {
      std::ifstream in(path);
      if (in) {
        std::stringstream text;
        text << in.rdbuf();
        Result<DeviceModel> loaded = DeviceModel::from_json(text.str());
        if (loaded) {
          DeviceModel m = std::move(loaded).value();
          m.source = path;
          STRATA_LOG(info, kModel, "device method model from %s (%zu samples)", path.c_str(), m.samples.size());
          return m;
        }
        STRATA_LOG(info, kModel, "%s has no usable device section; using the built-in device method rule",
                   path.c_str());
        return DeviceModel::builtin();
      }
    }
    STRATA_LOG(info, kModel, "no measured device model at '%s' (run strata-measure); using the built-in rule",
               path.c_str());
    return DeviceModel::builtin();
  }();
  return model;
}

void override_method(int method) { g_override.store(method, std::memory_order_relaxed); }

Method choose_method(int64_t packed_bytes, int64_t block, int64_t span_bytes) {
  const bool aware = mpi_is_gpu_aware();
  const int forced = g_override.load(std::memory_order_relaxed);
  Method m;
  if (forced >= 0) {
    m = static_cast<Method>(forced);
  } else {
    switch (g_method.get()) {
      case Forced::device: m = Method::device; break;
      case Forced::oneshot: m = Method::oneshot; break;
      case Forced::staged: m = Method::staged; break;
      case Forced::span: m = Method::span; break;
      case Forced::automatic:
      default: {
        const DeviceModel& model = device_model();
        const Method chosen = model.choose(packed_bytes, block, aware);
        const double wide = 2.0 * DeviceModel::measured_span_ratio(block) * static_cast<double>(packed_bytes);
        if (chosen == Method::span && static_cast<double>(span_bytes) > wide) {
          return model.choose_packing(packed_bytes, block, aware);
        }
        return chosen;
      }
    }
  }
  if (m == Method::device && !aware) {
    STRATA_LOG_ONCE(warn, kDevice,
                    "STRATA_METHOD=device, but the MPI library does not accept GPU buffers: using staged");
    return Method::staged;
  }
  return m;
}

}  // namespace strata::interposer
