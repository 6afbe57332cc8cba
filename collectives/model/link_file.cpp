// The "links" section of the model file (model.json in the cache folder):
//   {"links": {"host":   {"<level name or link class>": {"gbps": G, "alpha_us": A, "call_us": C}, ...},
//              "device": {...}}}
// gbps > 0 and alpha_us >= 0 are required, call_us >= 0 is optional; for
// the network class gbps is the node's injection bandwidth. A device entry
// may add "small": {"gbps": G, "alpha_us": A, "call_us": C} (all three
// required): the regime of NCCL's low-latency protocols, and "collectives":
// {"allreduce": {the same three, optional "small", optional
// "small_below_bytes"}, ...}: figures fitted to one collective, and the size
// below which NCCL ran it in the small regime (all written by strata-measure).
#include "collectives/model/cost_model.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

namespace strata::coll::model {
namespace {

bool figure(const nlohmann::json& j, const char* name, bool strict, bool required, double* out) {
  if (!j.contains(name)) return !required;
  if (!j[name].is_number()) return false;
  const double v = j[name].get<double>();
  if (!std::isfinite(v) || v < 0 || (strict && v == 0)) return false;
  *out = v;
  return true;
}

// {"gbps": G, "alpha_us": A, "call_us": C}, all three required.
bool protocol(const nlohmann::json& j, Protocol* p) {
  return j.is_object() && figure(j, "gbps", true, true, &p->gbps) && figure(j, "alpha_us", false, true, &p->alpha_us) &&
         figure(j, "call_us", false, true, &p->call_us);
}

// {"allreduce": {figures, optional "small"}, ...}: the names of Collective
// (strata::coll::to_string's); an unknown name is malformed.
bool by_collective(const nlohmann::json& j, LinkFigures* link) {
  static const char* const kNames[kCollectiveCount] = {"allreduce", "reduce_scatter", "allgather", "broadcast",
                                                       "reduce"};
  if (!j.is_object()) return false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    size_t c = 0;
    while (c < kCollectiveCount && it.key() != kNames[c]) ++c;
    if (c == kCollectiveCount) return false;
    LinkFigures::ForCollective& f = link->by_collective[c];
    if (!protocol(it.value(), &f.bulk)) return false;
    if (it.value().contains("small") && !protocol(it.value()["small"], &f.small)) return false;
    if (!figure(it.value(), "small_below_bytes", false, false, &f.small_below_bytes)) return false;
    f.set = true;
  }
  return true;
}

Result<std::vector<LinkEntry>> parse(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::invalid_argument;
  if (!j.contains("links")) return Status::not_supported;
  const nlohmann::json& links = j["links"];
  if (!links.is_object()) return Status::invalid_argument;
  std::vector<LinkEntry> out;
  for (const char* scope : {"host", "device"}) {
    if (!links.contains(scope)) continue;
    const nlohmann::json& section = links[scope];
    if (!section.is_object()) return Status::invalid_argument;
    for (auto it = section.begin(); it != section.end(); ++it) {
      LinkEntry e;
      e.scope = scope;
      e.key = it.key();
      const nlohmann::json& f = it.value();
      if (e.key.empty() || !f.is_object() || !figure(f, "gbps", true, true, &e.link.gbps) ||
          !figure(f, "alpha_us", false, true, &e.link.alpha_us) ||
          !figure(f, "call_us", false, false, &e.link.call_us)) {
        return Status::invalid_argument;
      }
      e.has_call = f.contains("call_us");
      if (f.contains("small") && !protocol(f["small"], &e.link.small)) return Status::invalid_argument;
      if (f.contains("collectives") && !by_collective(f["collectives"], &e.link)) return Status::invalid_argument;
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace

Result<std::vector<LinkEntry>> parse_links_json(const std::string& text) {
  try {
    return parse(text);
  } catch (...) {  // nlohmann's accessors throw on surprises we did not check for
    return Status::invalid_argument;
  }
}

}  // namespace strata::coll::model
