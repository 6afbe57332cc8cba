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

bool is_link(InjectAction a) { return a == InjectAction::slowlink || a == InjectAction::cutlink; }
bool takes_ms(InjectAction a) { return a == InjectAction::delay || a == InjectAction::slowlink; }

// A rule as its keys are read: `have_ms` says whether ms= was given.
struct RuleDraft {
  InjectRule* rule;
  bool have_ms = false;
};

// One parser per key; false: a bad value.
bool parse_rank(const std::string& value, RuleDraft& r) {
  int64_t v = 0;
  const bool ok = parse_int(value, 0, 1 << 30, &v);
  r.rule->rank = static_cast<int>(v);
  return ok;
}

bool parse_ranks(const std::string& value, RuleDraft& r) {
  const size_t dash = value.find('-');
  int64_t a = 0, b = 0;
  const bool ok = dash != std::string::npos && parse_int(value.substr(0, dash), 0, 1 << 30, &a) &&
                  parse_int(value.substr(dash + 1), 0, 1 << 30, &b) && a != b;
  r.rule->link_a = static_cast<int>(a);
  r.rule->link_b = static_cast<int>(b);
  return ok;
}

bool parse_ms(const std::string& value, RuleDraft& r) {
  int64_t v = 0;
  const bool ok = parse_int(value, 0, int64_t{1} << 40, &v);
  r.rule->ms = v;
  r.have_ms = true;
  return ok;
}

bool parse_op(const std::string& value, RuleDraft& r) { return parse_ops(value, &r.rule->ops); }

bool parse_after(const std::string& value, RuleDraft& r) {
  int64_t v = 0;
  const bool ok = parse_int(value, 0, INT64_MAX, &v);
  r.rule->after = static_cast<uint64_t>(v);
  return ok;
}

bool parse_at(const std::string& value, RuleDraft& r) {
  char* end = nullptr;
  const double s = std::strtod(value.c_str(), &end);
  const bool ok = !value.empty() && *end == '\0' && s >= 0;
  r.rule->at_ns = static_cast<int64_t>(s * 1e9);
  return ok;
}

bool parse_kill_signal(const std::string& value, RuleDraft& r) {
  r.rule->signal = parse_signal(value);
  return r.rule->signal != 0;
}

bool for_ranks(InjectAction a) { return !is_link(a); }
bool for_links(InjectAction a) { return is_link(a); }
bool for_any(InjectAction) { return true; }
bool for_kill(InjectAction a) { return a == InjectAction::kill; }

// The keys of a rule and the actions each applies to.
struct RuleKey {
  const char* name;
  bool (*applies)(InjectAction);
  bool (*parse)(const std::string& value, RuleDraft& r);
};
constexpr RuleKey kKeys[] = {{"rank", for_ranks, parse_rank},
                             {"ranks", for_links, parse_ranks},
                             {"ms", takes_ms, parse_ms},
                             {"op", for_ranks, parse_op},
                             {"after", for_any, parse_after},
                             {"at", for_any, parse_at},
                             {"signal", for_kill, parse_kill_signal}};

// The action before the colon.
Status parse_action(const std::string& action, InjectRule* rule, std::string* error) {
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
  return Status::ok;
}

// One key=value item of the rule's `action`.
Status parse_item(const std::string& item, const std::string& action, RuleDraft& r, std::string* error) {
  const size_t eq = item.find('=');
  if (eq == std::string::npos) {
    *error = "'" + item + "' is not key=value";
    return Status::invalid_argument;
  }
  const std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
  const RuleKey* found = nullptr;
  for (const RuleKey& k : kKeys) {
    if (key == k.name && k.applies(r.rule->action)) found = &k;
  }
  if (found == nullptr) {
    *error = "'";
    error->append(key).append("' does not apply to ").append(action);
    return Status::invalid_argument;
  }
  if (!found->parse(value, r)) {
    *error = "bad value '";
    error->append(value).append("' for ").append(key).append(" in '").append(r.rule->text).append("'");
    return Status::invalid_argument;
  }
  return Status::ok;
}

// What the rule's action needs: a rank or a link, and ms= for delays.
Status check_complete(const RuleDraft& r, std::string* error) {
  const InjectRule& rule = *r.rule;
  const bool link = is_link(rule.action);
  if (link ? rule.link_a < 0 : rule.rank < 0) {
    *error = std::string("'") + rule.text + "' needs " + (link ? "ranks=A-B" : "rank=R");
    return Status::invalid_argument;
  }
  if (takes_ms(rule.action) && !r.have_ms) {
    *error = "'" + rule.text + "' needs ms=D";
    return Status::invalid_argument;
  }
  return Status::ok;
}

Status parse_rule(const std::string& text, InjectRule* rule, std::string* error) {
  const size_t colon = text.find(':');
  const std::string action = trim(text.substr(0, colon));
  STRATA_TRY(parse_action(action, rule, error));
  rule->text = trim(text);
  RuleDraft draft{rule};
  std::string rest = colon == std::string::npos ? std::string() : text.substr(colon + 1);
  size_t start = 0;
  while (start < rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    const std::string item = trim(rest.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    STRATA_TRY(parse_item(item, action, draft, error));
  }
  return check_complete(draft, error);
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
