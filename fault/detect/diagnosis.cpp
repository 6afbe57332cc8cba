#include "fault/detect/diagnosis.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace strata::fault {
namespace {

struct ClassName {
  FaultClass c;
  const char* name;
};
constexpr ClassName kClasses[] = {{FaultClass::comm_hang, "comm hang"},
                                  {FaultClass::noncomm_hang, "non-comm hang"},
                                  {FaultClass::comm_slow, "comm slow"},
                                  {FaultClass::noncomm_slow, "non-comm slow"}};

}  // namespace

const char* to_string(FaultClass c) noexcept {
  for (const auto& k : kClasses) {
    if (k.c == c) return k.name;
  }
  return "?";
}

std::string rank_set(const std::vector<int>& ranks) {
  std::string s = "{";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  return s + "}";
}

std::string link_set(const std::vector<std::pair<int, int>>& links) {
  std::string s = "{";
  for (size_t i = 0; i < links.size(); ++i) {
    s += (i ? "," : "") + std::to_string(links[i].first) + "-" + std::to_string(links[i].second);
  }
  return s + "}";
}

std::string duration_text(int64_t ns) {
  char buf[64];
  const double v = static_cast<double>(ns);
  if (ns >= 1000000000) {
    std::snprintf(buf, sizeof(buf), "%.2f s", v / 1e9);
  } else if (ns >= 1000000) {
    std::snprintf(buf, sizeof(buf), "%.1f ms", v / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f us", v / 1e3);
  }
  return buf;
}

std::string to_json(const Diagnosis& d) {
  nlohmann::json j;
  j["type"] = "diagnosis";
  j["class"] = to_string(d.fault_class);
  j["detector"] = d.detector;
  j["ranks"] = d.ranks;
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : d.links) links.push_back({l.first, l.second});
  j["links"] = links;
  j["hosts"] = d.hosts;
  j["op"] = d.op;
  j["comm"] = d.comm;
  j["seq"] = d.seq;
  j["missing"] = d.missing;
  j["detected_ns"] = d.detected_ns;
  j["onset_ns"] = d.onset_ns;
  j["onset_seq"] = d.onset_seq;
  j["detect_seq"] = d.detect_seq;
  j["message"] = d.message;
  return j.dump();
}

bool from_json(const std::string& line, Diagnosis* d) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("type", "") != "diagnosis") return false;
  const std::string c = j.value("class", "");
  bool known = false;
  for (const auto& k : kClasses) {
    if (c == k.name) {
      d->fault_class = k.c;
      known = true;
    }
  }
  if (!known) return false;
  d->detector = j.value("detector", "");
  if (j.contains("ranks") && j["ranks"].is_array()) {
    for (const auto& r : j["ranks"]) {
      if (r.is_number_integer()) d->ranks.push_back(r.get<int>());
    }
  }
  if (j.contains("links") && j["links"].is_array()) {
    for (const auto& l : j["links"]) {
      if (l.is_array() && l.size() == 2 && l[0].is_number_integer() && l[1].is_number_integer()) {
        d->links.emplace_back(l[0].get<int>(), l[1].get<int>());
      }
    }
  }
  if (j.contains("hosts") && j["hosts"].is_array()) {
    for (const auto& h : j["hosts"]) {
      if (h.is_string()) d->hosts.push_back(h.get<std::string>());
    }
  }
  if (j.contains("missing") && j["missing"].is_array()) {
    for (const auto& r : j["missing"]) {
      if (r.is_number_integer()) d->missing.push_back(r.get<int>());
    }
  }
  d->op = j.value("op", "");
  d->comm = j.value("comm", "");
  d->seq = j.value("seq", uint64_t{0});
  d->detected_ns = j.value("detected_ns", int64_t{0});
  d->onset_ns = j.value("onset_ns", int64_t{0});
  d->onset_seq = j.value("onset_seq", uint64_t{0});
  d->detect_seq = j.value("detect_seq", uint64_t{0});
  d->message = j.value("message", "");
  return true;
}

std::string to_text(const Diagnosis& d) {
  std::string culprits;
  if (!d.ranks.empty()) culprits += " ranks " + rank_set(d.ranks);
  if (!d.links.empty()) culprits += " links " + link_set(d.links);
  return std::string(to_string(d.fault_class)) + " [" + d.detector + "]" + culprits + ": " + d.message;
}

}  // namespace strata::fault
