// link_figures: STRATA_COLL_LINKS, then the model file's "links" section,
// then the built-in defaults. Read on every call (a few times per
// communicator): a test or a tool that changes the file sees the change.
#include "collectives/model/cost_model.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"

#include <fstream>
#include <sstream>

namespace strata::coll::model {
namespace {

config::StringParam g_links{
    "STRATA_COLL_LINKS", "",
    "Link figures of the collectives' cost model, overriding the measured model file and the defaults: "
    "comma-separated [host.|device.]KEY:GBPS:ALPHA_US[:CALL_US], KEY a level name (gcd, package, node) or a "
    "link class (die, gpu, pcie, shm, network); GB/s per direction per rank, for the network the node's "
    "injection bandwidth (all NICs); e.g. device.gcd:200:2,device.package:50:3,device.node:100:5"};

// The best entry for this level: the level name before the link class, an
// entry for this scope (host/device) before one for both.
const LinkEntry* find(const std::vector<LinkEntry>& entries, const std::string& name, const std::string& link_class,
                      const char* scope) {
  for (const std::string* key : {&name, &link_class}) {
    for (bool scoped : {true, false}) {
      for (const LinkEntry& e : entries) {
        if (e.key == *key && (scoped ? e.scope == scope : e.scope.empty())) return &e;
      }
    }
  }
  return nullptr;
}

std::vector<LinkEntry> env_entries() {
  const std::string& spec = g_links.get();
  Result<std::vector<LinkEntry>> entries = parse_link_spec(spec);
  if (!entries) {
    STRATA_LOG(warn, kColl,
               "STRATA_COLL_LINKS='%s' is malformed (expected [host.|device.]key:GBps:alpha_us[:call_us],...); "
               "ignored",
               spec.c_str());
    return {};
  }
  return std::move(entries).value();
}

std::vector<LinkEntry> file_entries() {
  const std::string path = model_file_path();
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  Result<std::vector<LinkEntry>> entries = parse_links_json(text.str());
  if (entries.status() == Status::invalid_argument) {
    STRATA_LOG(warn, kColl, "%s: malformed or with a malformed \"links\" section; link figures from the defaults",
               path.c_str());
  }
  if (!entries) return {};
  return std::move(entries).value();
}

LinkFigures resolve(const LinkEntry& e, const LinkFigures& fallback) {
  LinkFigures out = e.link;
  if (!e.has_call) out.call_us = fallback.call_us;
  return out;
}

}  // namespace

LinkFigures link_figures(const std::string& level_name, const std::string& link_class, bool device) {
  const char* scope = device ? "device" : "host";
  const LinkFigures fallback = default_link_figures(link_class, device);
  LinkFigures out = fallback;
  const char* source = "default";
  const std::vector<LinkEntry> env = env_entries();
  if (const LinkEntry* e = find(env, level_name, link_class, scope)) {
    out = resolve(*e, fallback);
    source = "STRATA_COLL_LINKS";
  } else {
    const std::vector<LinkEntry> file = file_entries();
    if (const LinkEntry* f = find(file, level_name, link_class, scope)) {
      out = resolve(*f, fallback);
      source = "model file";
    }
  }
  out.per_node = link_class == "network";
  STRATA_LOG(debug, kColl, "links %s (%s, %s): %.3g GB/s%s, alpha %.3g us, call %.3g us%s, from %s", level_name.c_str(),
             link_class.c_str(), scope, out.gbps, out.per_node ? " per node" : "", out.alpha_us, out.call_us,
             out.small.gbps > 0 ? " (and a small-message regime)" : "", source);
  return out;
}

}  // namespace strata::coll::model
