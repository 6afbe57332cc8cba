#include "interposer/model/host_model.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace strata::interposer {
namespace {

enum class HostPackMode { automatic, always, never };
config::ChoiceParam<HostPackMode> g_host_pack{
    "STRATA_HOST_PACK",
    HostPackMode::automatic,
    {{"auto", HostPackMode::automatic}, {"always", HostPackMode::always}, {"never", HostPackMode::never}},
    "Host buffers with derived datatypes: auto = Strata packs where the measured model says it wins; always; never"};

int log2_bucket(int64_t v, int buckets) {
  int b = 0;
  while (b + 1 < buckets && (int64_t{1} << (b + 1)) <= v) ++b;
  return b;
}

}  // namespace

void HostModel::build_grid() {
  for (int op = 0; op < 2; ++op) {
    for (int bb = 0; bb < kBlockBuckets; ++bb) {
      for (int nb = 0; nb < kBytesBuckets; ++nb) {
        // Nearest sample in log2 space, block length weighted first.
        const HostPackSample* best = nullptr;
        double best_distance = 1e300;
        for (const HostPackSample& s : samples) {
          double db = std::log2(static_cast<double>(std::max<int64_t>(s.block, 1))) - bb;
          double dn = std::log2(static_cast<double>(std::max<int64_t>(s.bytes, 1))) - nb;
          double d = 4.0 * db * db + dn * dn;
          if (d < best_distance) { best_distance = d; best = &s; }
        }
        bool wins = false;
        if (best != nullptr) {
          double strata_ns = best->strata_ns;
          if (op == static_cast<int>(HostOp::transfer) && memcpy_gbps > 0) {
            strata_ns += static_cast<double>(best->bytes) / memcpy_gbps;  // GB/s == bytes/ns
          }
          wins = strata_ns < best->library_ns;
        }
        wins_[op][bb][nb] = wins;
      }
    }
  }
}

bool HostModel::strata_wins(HostOp op, int64_t packed_bytes, int64_t block) const {
  return wins_[static_cast<int>(op)][log2_bucket(block, kBlockBuckets)][log2_bucket(packed_bytes, kBytesBuckets)];
}

HostModel HostModel::builtin() {
  // Provisional until the reference run lands: Strata wins for small blocks.
  HostModel m;
  m.source = "built-in";
  m.memcpy_gbps = 20.0;
  const int64_t blocks[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  const int64_t sizes[] = {1024, 16384, 262144, 4194304, 16777216};
  for (int64_t b : blocks) {
    for (int64_t n : sizes) {
      double lib = static_cast<double>(n) / (b <= 16 ? 1.0 : 8.0);
      double ours = b <= 64 ? lib / 3.0 : lib;
      m.samples.push_back({b, n, lib, ours});
    }
  }
  m.build_grid();
  return m;
}

Result<HostModel> HostModel::from_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("host")) return Status::invalid_argument;
  const nlohmann::json& host = j["host"];
  HostModel m;
  m.memcpy_gbps = host.value("memcpy_gbps", 0.0);
  if (!host.contains("pack") || !host["pack"].is_array()) return Status::invalid_argument;
  for (const nlohmann::json& p : host["pack"]) {
    if (!p.is_object()) return Status::invalid_argument;
    HostPackSample s;
    s.block = p.value("block", int64_t{0});
    s.bytes = p.value("bytes", int64_t{0});
    s.library_ns = p.value("library_ns", 0.0);
    s.strata_ns = p.value("strata_ns", 0.0);
    if (s.block <= 0 || s.bytes <= 0 || !(s.library_ns > 0) || !(s.strata_ns > 0)) return Status::invalid_argument;
    m.samples.push_back(s);
  }
  if (m.samples.empty()) return Status::invalid_argument;
  m.build_grid();
  return m;
}

std::string HostModel::to_json() const {
  nlohmann::json pack = nlohmann::json::array();
  for (const HostPackSample& s : samples) {
    pack.push_back({{"block", s.block}, {"bytes", s.bytes}, {"library_ns", s.library_ns}, {"strata_ns", s.strata_ns}});
  }
  nlohmann::json host = {{"memcpy_gbps", memcpy_gbps}, {"pack", pack}};
  return host.dump();
}

const HostModel& host_model() {
  static const HostModel model = [] {
    std::string path = model_file_path();
    if (!path.empty()) {
      std::ifstream in(path);
      if (in) {
        std::stringstream text;
        text << in.rdbuf();
        Result<HostModel> loaded = HostModel::from_json(text.str());
        if (loaded) {
          HostModel m = std::move(loaded).value();
          m.source = path;
          STRATA_LOG(info, kModel, "host pack model from %s (%zu samples)", path.c_str(), m.samples.size());
          return m;
        }
        STRATA_LOG(warn, kModel, "%s has no usable host section; using the built-in host pack model", path.c_str());
        return HostModel::builtin();
      }
    }
    STRATA_LOG(info, kModel, "no measured model at '%s' (run strata-measure); using built-in host pack figures",
               path.c_str());
    return HostModel::builtin();
  }();
  return model;
}

bool use_strata_host_pack(HostOp op, int64_t packed_bytes, int64_t block) {
  switch (g_host_pack.get()) {
    case HostPackMode::always: return true;
    case HostPackMode::never: return false;
    case HostPackMode::automatic: break;
  }
  return host_model().strata_wins(op, packed_bytes, block);
}

}  // namespace strata::interposer
