// STRATA_COLL_LINKS: "[host.|device.]key:GBps:alpha_us[:call_us],..."
#include "collectives/model/cost_model.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace strata::coll::model {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return std::string();
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

// A finite number >= min (or > min when strict), the whole text.
bool number(const std::string& text, double min, bool strict, double* out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (errno != 0 || end != t.c_str() + t.size() || !std::isfinite(v) || v < min || (strict && v == min)) return false;
  *out = v;
  return true;
}

bool parse_entry(const std::string& item, LinkEntry* e) {
  const std::vector<std::string> f = split(item, ':');
  if (f.size() != 3 && f.size() != 4) return false;
  std::string key = trim(f[0]);
  for (const char* scope : {"host", "device"}) {
    const std::string prefix = std::string(scope) + ".";
    if (key.compare(0, prefix.size(), prefix) == 0) {
      e->scope = scope;
      key = key.substr(prefix.size());
      break;
    }
  }
  if (key.empty() || key.find_first_of(" \t.") != std::string::npos) return false;
  e->key = key;
  if (!number(f[1], 0, true, &e->link.gbps) || !number(f[2], 0, false, &e->link.alpha_us)) return false;
  e->has_call = f.size() == 4;
  return !e->has_call || number(f[3], 0, false, &e->link.call_us);
}

}  // namespace

Result<std::vector<LinkEntry>> parse_link_spec(const std::string& spec) {
  std::vector<LinkEntry> out;
  if (trim(spec).empty()) return out;
  for (const std::string& item : split(spec, ',')) {
    LinkEntry e;
    if (!parse_entry(item, &e)) return Status::invalid_argument;
    out.push_back(e);
  }
  return out;
}

}  // namespace strata::coll::model
