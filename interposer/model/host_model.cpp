#include "interposer/model/host_model.hpp"

#include "collectives/job_facts.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"
#include "portability/numeric/log2_buckets.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

namespace strata::interposer {

using numeric::log2_bucket;
using numeric::log2_of;

namespace {

enum class HostPackMode { automatic, always, never };
config::ChoiceParam<HostPackMode> g_host_pack{
    "STRATA_HOST_PACK",
    HostPackMode::automatic,
    {{"auto", HostPackMode::automatic}, {"always", HostPackMode::always}, {"never", HostPackMode::never}},
    "Host buffers with derived datatypes: auto = Strata packs where the measured model says it wins; always; never"};

// The speed-up of Strata (library time / Strata time, after `ns_per_byte`
// more for Strata per packed byte) at a grid bucket, from the samples of the
// nearest measured block length: the lower of the nearest size's and the
// geometric mean over it and its neighbours within a factor of 4. Single
// points of a shared machine are noisy; taking the lower keeps one lucky
// neighbour from choosing Strata where the nearest point says the library.
// 0 when there are no samples.
double speedup_at(const std::vector<HostSample>& samples, int block_bucket, int bytes_bucket, double ns_per_byte) {
  if (samples.empty()) return 0;
  auto block_distance = [&](const HostSample& s) { return std::fabs(log2_of(s.block) - block_bucket); };
  auto bytes_distance = [&](const HostSample& s) { return std::fabs(log2_of(s.bytes) - bytes_bucket); };
  auto speedup = [&](const HostSample& s) {
    return s.library_ns / (s.strata_ns + ns_per_byte * static_cast<double>(s.bytes));
  };
  double nearest_block = 1e300;
  for (const HostSample& s : samples) nearest_block = std::min(nearest_block, block_distance(s));
  const HostSample* nearest = nullptr;
  for (const HostSample& s : samples) {
    if (block_distance(s) == nearest_block && (!nearest || bytes_distance(s) < bytes_distance(*nearest))) {
      nearest = &s;
    }
  }
  double sum = 0;
  int n = 0;
  for (const HostSample& s : samples) {
    if (block_distance(s) != nearest_block || bytes_distance(s) > bytes_distance(*nearest) + 2.0) continue;
    sum += std::log(speedup(s));
    ++n;
  }
  return std::min(speedup(*nearest), std::exp(sum / n));
}

}  // namespace

// Strata is chosen only where it is measured at least this much faster:
// figures from a shared machine are noisy, and a wrong "Strata" costs more
// than a missed one (the library is the safe default).
constexpr double kRequiredSpeedup = 1.05;

bool HostModel::decide(HostOp op, int block_bucket, int bytes_bucket) const {
  if (op == HostOp::transfer && !transfer.empty()) {
    return speedup_at(transfer, block_bucket, bytes_bucket, 0) >= kRequiredSpeedup;
  }
  // A transfer modelled from pack figures: Strata's staging buffer costs the
  // library one more memcpy of the packed bytes.
  const double extra = op == HostOp::transfer && memcpy_gbps > 0 ? 1.0 / memcpy_gbps : 0;  // GB/s == bytes/ns
  return speedup_at(pack, block_bucket, bytes_bucket, extra) >= kRequiredSpeedup;
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

bool HostModel::strata_wins_anywhere(HostOp op) const {
  for (const auto& by_block : wins_[static_cast<int>(op)]) {
    for (const bool w : by_block) {
      if (w) return true;
    }
  }
  return false;
}

HostModel HostModel::builtin() {
  // The reference run (reference_host_model.json, embedded at build time):
  // strata-measure launched like the main job, 8 ranks on the 2-core
  // reference machine; see docs/interposer.md.
  Result<HostModel> m = from_json(reference_host_model_json());
  HostModel model = m ? std::move(m).value() : HostModel{};
  model.source = "built-in";
  return model;
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

Result<HostModel> HostModel::from_json(const std::string& text) noexcept {
  try {
    return parse_model(text);
  } catch (...) {  // a field of the wrong type: nlohmann reports it by throwing
    return Status::invalid_argument;
  }
}

Result<HostModel> HostModel::parse_model(const std::string& text) {
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
          STRATA_LOG(debug, kModel, "host pack model from %s (%zu pack, %zu transfer samples)", path.c_str(),
                     m.pack.size(), m.transfer.size());
          return m;
        }
        STRATA_LOG(warn, kModel, "%s has no usable host section; using the built-in host pack model", path.c_str());
        return HostModel::builtin();
      }
    }
    STRATA_LOG(debug, kModel, "no measured model at '%s' (run strata-measure); using built-in host pack figures",
               path.c_str());
    return HostModel::builtin();
  }();
  return model;
}

namespace {
std::atomic<int> g_override{-1};
}  // namespace

int g_host_transfers_to_library = 0;

void override_host_pack(int mode) {
  g_override.store(mode, std::memory_order_relaxed);
  learn_host_transfer_route();
}

// The built-in figures were measured with four ranks per core (the
// reference machine: 8 ranks on 2 cores). Where the ranks have cores to
// spare the library pipelines a large derived-type message, packing the
// next fragment while the last one moves, and Strata's pack-then-send loses
// to it (measured on a 16-core host: 0.7-0.8x from 512 KiB packed). Small
// ones did not win either where the ranks have cores of their own (the
// h100x2 host, 2 ranks on 32 cores, 8 B blocks at a 64 B stride: 0.92-0.98x
// from 64 B to 4 KiB packed; bench/results/overhead-h100x2-host.md). So without a
// model measured here, transfers go to the library unless the node is
// oversubscribed as the reference was. A per-rank choice: it only changes
// how this rank packs (packed bytes match any receive type).

bool node_oversubscribed() {
  static const bool over = [] {
    const int ranks = coll::ranks_on_my_host();
    const unsigned cores = std::thread::hardware_concurrency();
    return ranks > 0 && cores > 0 && static_cast<unsigned>(ranks) > cores;
  }();
  return over;
}

namespace {
// Where strata-measure's override or STRATA_HOST_PACK decides: true for
// Strata's pack, false for the library; empty where the model decides.
std::optional<bool> forced_choice() {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced >= 0) return forced == 1;
  switch (g_host_pack.get()) {
    case HostPackMode::always: return true;
    case HostPackMode::never: return false;
    case HostPackMode::automatic: break;
  }
  return std::nullopt;
}

// The built-in figures leave transfers to the library (see above).
bool builtin_leaves_transfers(const HostModel& m) { return m.source == "built-in" && !node_oversubscribed(); }

// use_strata_host_pack's transfer answer at every size: the library.
bool transfers_always_library() {
  if (const std::optional<bool> forced = forced_choice()) return !*forced;
  const HostModel& m = host_model();
  return builtin_leaves_transfers(m) || !m.strata_wins_anywhere(HostOp::transfer);
}
}  // namespace

void learn_host_transfer_route() noexcept {
  __atomic_store_n(&g_host_transfers_to_library, transfers_always_library() ? 1 : 0, __ATOMIC_RELAXED);
}

bool use_strata_host_pack(HostOp op, int64_t packed_bytes, int64_t block) {
  if (const std::optional<bool> forced = forced_choice()) return *forced;
  const HostModel& m = host_model();
  if (op == HostOp::transfer && builtin_leaves_transfers(m)) return false;
  return m.strata_wins(op, packed_bytes, block);
}

}  // namespace strata::interposer
