// The "links" section of the model file (model.json in the cache folder):
//   {"links": {"host":   {"<level name or link class>": {"gbps": G, "alpha_us": A, "call_us": C}, ...},
//              "device": {...}}}
// gbps > 0 and alpha_us >= 0 are required, call_us >= 0 is optional; for
// the network class gbps is the node's injection bandwidth. A device entry
// may add "small": {"gbps": G, "alpha_us": A, "call_us": C} (all three
// required): the regime of NCCL's low-latency protocols (strata-measure).
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
      if (f.contains("small")) {
        const nlohmann::json& small = f["small"];
        Protocol& p = e.link.small;
        if (!small.is_object() || !figure(small, "gbps", true, true, &p.gbps) ||
            !figure(small, "alpha_us", false, true, &p.alpha_us) ||
            !figure(small, "call_us", false, true, &p.call_us)) {
          return Status::invalid_argument;
        }
      }
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
