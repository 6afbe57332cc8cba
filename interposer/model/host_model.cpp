#include "interposer/model/host_model.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
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

namespace {

// The sample nearest to a grid bucket in log2 space, block length weighted
// first (it decides the pack rate more than the size does).
const HostSample* nearest(const std::vector<HostSample>& samples, int block_bucket, int bytes_bucket) {
  const HostSample* best = nullptr;
  double best_distance = 1e300;
  for (const HostSample& s : samples) {
    double db = std::log2(static_cast<double>(std::max<int64_t>(s.block, 1))) - block_bucket;
    double dn = std::log2(static_cast<double>(std::max<int64_t>(s.bytes, 1))) - bytes_bucket;
    double d = 4.0 * db * db + dn * dn;
    if (d < best_distance) {
      best_distance = d;
      best = &s;
    }
  }
  return best;
}

}  // namespace

bool HostModel::decide(HostOp op, int block_bucket, int bytes_bucket) const {
  if (op == HostOp::transfer && !transfer.empty()) {
    const HostSample* s = nearest(transfer, block_bucket, bytes_bucket);
    return s->strata_ns < s->library_ns;
  }
  const HostSample* s = nearest(pack, block_bucket, bytes_bucket);
  if (s == nullptr) return false;
  double strata_ns = s->strata_ns;
  if (op == HostOp::transfer && memcpy_gbps > 0) strata_ns += static_cast<double>(s->bytes) / memcpy_gbps;
  return strata_ns < s->library_ns;
}

void HostModel::build_grid() {
  for (int op = 0; op < 2; ++op) {
    for (int bb = 0; bb < kBlockBuckets; ++bb) {
      for (int nb = 0; nb < kBytesBuckets; ++nb) wins_[op][bb][nb] = decide(static_cast<HostOp>(op), bb, nb);
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
      m.pack.push_back({b, n, lib, ours});
    }
  }
  m.build_grid();
  return m;
}

namespace {

Status read_samples(const nlohmann::json& host, const char* key, std::vector<HostSample>* out) {
  if (!host.contains(key)) return Status::ok;
  if (!host[key].is_array()) return Status::invalid_argument;
  for (const nlohmann::json& p : host[key]) {
    if (!p.is_object()) return Status::invalid_argument;
    HostSample s;
    s.block = p.value("block", int64_t{0});
    s.bytes = p.value("bytes", int64_t{0});
    s.library_ns = p.value("library_ns", 0.0);
    s.strata_ns = p.value("strata_ns", 0.0);
    if (s.block <= 0 || s.bytes <= 0 || !(s.library_ns > 0) || !(s.strata_ns > 0)) return Status::invalid_argument;
    out->push_back(s);
  }
  return Status::ok;
}

nlohmann::json write_samples(const std::vector<HostSample>& samples) {
  nlohmann::json out = nlohmann::json::array();
  for (const HostSample& s : samples) {
    out.push_back({{"block", s.block}, {"bytes", s.bytes}, {"library_ns", s.library_ns}, {"strata_ns", s.strata_ns}});
  }
  return out;
}

}  // namespace

Result<HostModel> HostModel::from_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("host") || !j["host"].is_object()) {
    return Status::invalid_argument;
  }
  const nlohmann::json& host = j["host"];
  HostModel m;
  m.memcpy_gbps = host.value("memcpy_gbps", 0.0);
  STRATA_TRY(read_samples(host, "pack", &m.pack));
  STRATA_TRY(read_samples(host, "transfer", &m.transfer));
  if (m.pack.empty() && m.transfer.empty()) return Status::invalid_argument;
  m.build_grid();
  return m;
}

std::string HostModel::to_json(const std::vector<std::pair<std::string, std::string>>& about) const {
  nlohmann::json doc = {{"strata_model", 1}};
  for (const auto& [key, value] : about) doc[key] = value;
  doc["host"] = {{"memcpy_gbps", memcpy_gbps}, {"pack", write_samples(pack)}, {"transfer", write_samples(transfer)}};
  return doc.dump(1);
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
          STRATA_LOG(info, kModel, "host pack model from %s (%zu pack, %zu transfer samples)", path.c_str(),
                     m.pack.size(), m.transfer.size());
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

namespace {
std::atomic<int> g_override{-1};
}  // namespace

void override_host_pack(int mode) { g_override.store(mode, std::memory_order_relaxed); }

bool use_strata_host_pack(HostOp op, int64_t packed_bytes, int64_t block) {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced >= 0) return forced == 1;
  switch (g_host_pack.get()) {
    case HostPackMode::always: return true;
    case HostPackMode::never: return false;
    case HostPackMode::automatic: break;
  }
  return host_model().strata_wins(op, packed_bytes, block);
}

}  // namespace strata::interposer
