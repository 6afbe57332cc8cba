#include "base/config.hpp"

#include "base/closest_name.hpp"
#include "base/log.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>  // environ

namespace strata::config {
namespace {

// Function-local statics: parameters register from static constructors in
// any translation unit, in any order.
std::vector<Parameter*>& registry() {
  static std::vector<Parameter*> params;
  return params;
}
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::string>& warnings() {
  static std::vector<std::string> w;
  return w;
}
std::atomic<bool> g_loaded{false};

void load_locked() {
  auto& w = warnings();
  w.clear();
  for (Parameter* p : registry()) {
    p->reset();
    p->set_from_environment(false);
    const char* text = std::getenv(p->name());
    if (text == nullptr) continue;
    if (p->parse(text)) {
      p->set_from_environment(true);
    } else {
      w.push_back(std::string("invalid value '") + text + "' for " + p->name() + " (expected " + p->type_name() +
                  "); using the default " + p->default_text());
    }
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* entry = *e;
    if (std::strncmp(entry, "STRATA_", 7) != 0 || std::strncmp(entry, kTestPrefix, std::strlen(kTestPrefix)) == 0) {
      continue;
    }
    const char* eq = std::strchr(entry, '=');
    std::string name(entry, eq ? static_cast<size_t>(eq - entry) : std::strlen(entry));
    bool known = std::any_of(registry().begin(), registry().end(), [&](Parameter* p) { return name == p->name(); });
    if (known) continue;
    std::vector<std::string> names;
    for (Parameter* p : registry()) names.emplace_back(p->name());
    const std::string best = closest_name(name, names);
    w.push_back("unknown variable " + name + (best.empty() ? std::string() : "; did you mean " + best + "?"));
  }
}

}  // namespace

Parameter::Parameter(const char* name, const char* help) : name_(name), help_(help) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(this);
}

Parameter::~Parameter() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& r = registry();
  r.erase(std::remove(r.begin(), r.end(), this), r.end());
}

void Parameter::ensure_loaded() {
  if (!g_loaded.load(std::memory_order_acquire)) load(false);
}

bool equals_ignore_case(const char* a, const char* b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
  }
  return *a == *b;
}

bool BoolParam::parse(const char* text) {
  static const char* const kTrue[] = {"1", "true", "yes", "on", "y"};
  static const char* const kFalse[] = {"0", "false", "no", "off", "n", ""};
  for (const char* t : kTrue) {
    if (equals_ignore_case(t, text)) {
      value_ = true;
      return true;
    }
  }
  for (const char* f : kFalse) {
    if (equals_ignore_case(f, text)) {
      value_ = false;
      return true;
    }
  }
  return false;
}

bool IntParam::parse(const char* text) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 0);
  if (end == text || errno != 0) return false;
  if (is_size_ && *end != '\0') {
    int shift = 0;
    switch (std::toupper(static_cast<unsigned char>(*end))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return false;
    }
    ++end;
    if (*end == 'i' || *end == 'I') ++end;
    if (*end == 'b' || *end == 'B') ++end;
    if (v > (INT64_MAX >> shift) || v < (INT64_MIN >> shift)) return false;
    v *= (int64_t{1} << shift);
  }
  if (*end != '\0') return false;
  if (v < min_ || v > max_) return false;
  value_ = v;
  return true;
}

void load(bool force) {
  static std::mutex load_mutex;
  std::vector<std::string> to_report;
  {
    std::lock_guard<std::mutex> lock(load_mutex);
    if (g_loaded.load(std::memory_order_acquire) && !force) return;
    {
      std::lock_guard<std::mutex> reg_lock(registry_mutex());
      load_locked();
      to_report = warnings();
    }
    g_loaded.store(true, std::memory_order_release);
  }
  // The logger's own level comes from the registry, so configure it first.
  log::configure();
  for (const auto& w : to_report) STRATA_LOG(warn, kBase, "%s", w.c_str());
}

std::vector<ParameterInfo> parameters() {
  Parameter::ensure_loaded();
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<ParameterInfo> out;
  for (const Parameter* p : registry()) {
    out.push_back({p->name(), p->type_name(), p->default_text(), p->value_text(), p->from_environment(), p->help()});
  }
  std::sort(out.begin(), out.end(), [](const ParameterInfo& a, const ParameterInfo& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> load_warnings() {
  Parameter::ensure_loaded();
  std::lock_guard<std::mutex> lock(registry_mutex());
  return warnings();
}

}  // namespace strata::config
