// STRATA_FAULT_INJECT: the parser and what the rules do at run time.
#include "fault/inject/inject.hpp"

#include "base/log.hpp"
#include "fault/clock.hpp"
#include "fault/recorder/record.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unistd.h>

namespace strata::fault {
namespace {

struct ActionName {
  InjectAction action;
  const char* name;
};
constexpr ActionName kActions[] = {{InjectAction::delay, "delay"},       {InjectAction::stall, "stall"},
                                   {InjectAction::hang, "hang"},         {InjectAction::kill, "kill"},
                                   {InjectAction::slowlink, "slowlink"}, {InjectAction::cutlink, "cutlink"}};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool parse_int(const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool parse_ops(const std::string& text, uint32_t* mask) {
  if (text == "any") {
    *mask = ~0u;
  } else if (text == "coll") {
    *mask = 0;
    for (int k = 0; k < static_cast<int>(OpKind::count_); ++k) {
      if (is_collective(static_cast<OpKind>(k))) *mask |= 1u << k;
    }
  } else if (text == "p2p") {
    *mask = 0;
    for (int k = 0; k < static_cast<int>(OpKind::count_); ++k) {
      if (is_p2p(static_cast<OpKind>(k)) || static_cast<OpKind>(k) == OpKind::wait) *mask |= 1u << k;
    }
  } else {
    OpKind k{};
    if (!parse_op_kind(text.c_str(), &k)) return false;
    *mask = 1u << static_cast<int>(k);
  }
  return true;
}

int parse_signal(const std::string& text) {
  if (text == "KILL") return SIGKILL;
  if (text == "SEGV") return SIGSEGV;
  if (text == "ABRT") return SIGABRT;
  if (text == "TERM") return SIGTERM;
  if (text == "BUS") return SIGBUS;
  return 0;
}

Status parse_rule(const std::string& text, InjectRule* rule, std::string* error) {
  const size_t colon = text.find(':');
  const std::string action = trim(text.substr(0, colon));
  bool known = false;
  for (const auto& a : kActions) {
    if (action == a.name) {
      rule->action = a.action;
      known = true;
    }
  }
  if (!known) {
    *error = "unknown action '" + action + "' (delay, stall, hang, kill, slowlink, cutlink)";
    return Status::invalid_argument;
  }
  rule->text = trim(text);
  const bool link = rule->action == InjectAction::slowlink || rule->action == InjectAction::cutlink;
  bool have_ms = false;
  std::string rest = colon == std::string::npos ? std::string() : text.substr(colon + 1);
  size_t start = 0;
  while (start < rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    const std::string item = trim(rest.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      *error = "'" + item + "' is not key=value";
      return Status::invalid_argument;
    }
    const std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    int64_t v = 0;
    bool ok = true;
    if (key == "rank" && !link) {
      ok = parse_int(value, 0, 1 << 30, &v);
      rule->rank = static_cast<int>(v);
    } else if (key == "ranks" && link) {
      const size_t dash = value.find('-');
      int64_t a = 0, b = 0;
      ok = dash != std::string::npos && parse_int(value.substr(0, dash), 0, 1 << 30, &a) &&
           parse_int(value.substr(dash + 1), 0, 1 << 30, &b) && a != b;
      rule->link_a = static_cast<int>(a);
      rule->link_b = static_cast<int>(b);
    } else if (key == "ms" && (rule->action == InjectAction::delay || rule->action == InjectAction::slowlink)) {
      ok = parse_int(value, 0, int64_t{1} << 40, &v);
      rule->ms = v;
      have_ms = true;
    } else if (key == "op" && !link) {
      ok = parse_ops(value, &rule->ops);
    } else if (key == "after") {
      ok = parse_int(value, 0, INT64_MAX, &v);
      rule->after = static_cast<uint64_t>(v);
    } else if (key == "at") {
      char* end = nullptr;
      const double s = std::strtod(value.c_str(), &end);
      ok = !value.empty() && *end == '\0' && s >= 0;
      rule->at_ns = static_cast<int64_t>(s * 1e9);
    } else if (key == "signal" && rule->action == InjectAction::kill) {
      rule->signal = parse_signal(value);
      ok = rule->signal != 0;
    } else {
      *error = "'";
      error->append(key).append("' does not apply to ").append(action);
      return Status::invalid_argument;
    }
    if (!ok) {
      *error = "bad value '";
      error->append(value).append("' for ").append(key).append(" in '").append(rule->text).append("'");
      return Status::invalid_argument;
    }
  }
  if (link ? rule->link_a < 0 : rule->rank < 0) {
    *error = std::string("'") + rule->text + "' needs " + (link ? "ranks=A-B" : "rank=R");
    return Status::invalid_argument;
  }
  if ((rule->action == InjectAction::delay || rule->action == InjectAction::slowlink) && !have_ms) {
    *error = "'" + rule->text + "' needs ms=D";
    return Status::invalid_argument;
  }
  return Status::ok;
}

// Installed state: the rules that concern this rank, with their counters.
struct Active {
  InjectRule rule;
  std::atomic<uint64_t> seen{0};
};
std::vector<InjectRule> g_rules;
std::unique_ptr<Active[]> g_active;
size_t g_count = 0;
int g_rank = -1;
int64_t g_start_ns = 0;

bool matches(const InjectRule& r, OpKind kind) { return (r.ops >> static_cast<int>(kind)) & 1u; }
bool onset_passed(const InjectRule& r) { return r.at_ns == 0 || now_ns() - g_start_ns >= r.at_ns; }
int32_t other_end(const InjectRule& r) {
  if (r.link_a == g_rank) return r.link_b;
  if (r.link_b == g_rank) return r.link_a;
  return kNoPeer;
}

[[noreturn]] void stop_for_good(const char* why) {
  STRATA_LOG(warn, kFault, "injected fault: %s; this thread stops here for good", why);
  for (;;) usleep(100000);
}

}  // namespace

const char* to_string(InjectAction action) {
  for (const auto& a : kActions) {
    if (a.action == action) return a.name;
  }
  return "?";
}

Status parse_injection(const std::string& spec, std::vector<InjectRule>* rules, std::string* error) {
  std::vector<InjectRule> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t semi = spec.find(';', start);
    if (semi == std::string::npos) semi = spec.size();
    const std::string text = trim(spec.substr(start, semi - start));
    start = semi + 1;
    if (text.empty()) continue;
    InjectRule r;
    STRATA_TRY(parse_rule(text, &r, error));
    out.push_back(std::move(r));
  }
  *rules = std::move(out);
  return Status::ok;
}

namespace inject {

void install(std::vector<InjectRule> rules, int my_rank, int64_t start_ns) {
  g_rank = my_rank;
  g_start_ns = start_ns;
  g_rules = std::move(rules);
  g_active = std::make_unique<Active[]>(g_rules.size());
  g_count = 0;
  for (const InjectRule& r : g_rules) {
    const bool mine = r.rank == my_rank || r.link_a == my_rank || r.link_b == my_rank;
    if (mine) g_active[g_count++].rule = r;
  }
  g_any.store(g_count > 0, std::memory_order_release);
}

const std::vector<InjectRule>& rules() { return g_rules; }

void before(OpKind kind) {
  for (size_t i = 0; i < g_count; ++i) {
    Active& a = g_active[i];
    const InjectRule& r = a.rule;
    if (r.rank != g_rank || !matches(r, kind)) continue;
    if (r.action != InjectAction::delay && r.action != InjectAction::stall && r.action != InjectAction::kill) continue;
    if (a.seen.fetch_add(1, std::memory_order_relaxed) + 1 <= r.after || !onset_passed(r)) continue;
    switch (r.action) {
      case InjectAction::delay: usleep(static_cast<useconds_t>(r.ms * 1000)); break;
      case InjectAction::stall: stop_for_good(r.text.c_str());
      case InjectAction::kill:
        STRATA_LOG(warn, kFault, "injected fault: %s", r.text.c_str());
        raise(r.signal);
        break;
      default: break;
    }
  }
}

void inside(OpKind kind, int32_t peer) {
  for (size_t i = 0; i < g_count; ++i) {
    Active& a = g_active[i];
    const InjectRule& r = a.rule;
    if (r.action == InjectAction::hang) {
      if (r.rank != g_rank || !matches(r, kind)) continue;
      if (a.seen.fetch_add(1, std::memory_order_relaxed) + 1 <= r.after || !onset_passed(r)) continue;
      stop_for_good(r.text.c_str());
    }
    if (r.action != InjectAction::slowlink && r.action != InjectAction::cutlink) continue;
    if (!is_send_side(kind) || peer < 0 || peer != other_end(r)) continue;
    if (a.seen.fetch_add(1, std::memory_order_relaxed) + 1 <= r.after || !onset_passed(r)) continue;
    if (r.action == InjectAction::cutlink) stop_for_good(r.text.c_str());
    usleep(static_cast<useconds_t>(r.ms * 1000));
  }
}

int64_t probe_delay_ms(int32_t peer) {
  int64_t ms = 0;
  for (size_t i = 0; i < g_count; ++i) {
    const InjectRule& r = g_active[i].rule;
    if ((r.action != InjectAction::slowlink && r.action != InjectAction::cutlink) || peer < 0 || peer != other_end(r))
      continue;
    if (!onset_passed(r)) continue;
    if (r.action == InjectAction::cutlink) return -1;
    ms += r.ms;
  }
  return ms;
}

}  // namespace inject
}  // namespace strata::fault
