// Fault injection for tests and drills: STRATA_FAULT_INJECT, parsed once at
// start-up. When it is unset the hooks pay one predictable branch.
//
// Grammar (docs/fault.md has the long form):
//   spec  := rule (';' rule)*
//   rule  := action ':' key '=' value (',' key '=' value)*
//   delay     rank=R, ms=D [, op=K] [, after=N] [, at=S]   sleep D ms before each matching op (late arrival)
//   stall     rank=R [, op=K] [, after=N] [, at=S]         stop for good before the next matching op
//   hang      rank=R [, op=K] [, after=N] [, at=S]         stop for good inside the next matching op
//   kill      rank=R [, op=K] [, after=N] [, at=S] [, signal=KILL|SEGV|ABRT|TERM|BUS]
//   slowlink  ranks=A-B, ms=D [, after=N] [, at=S]         each message between A and B takes D ms longer
//   cutlink   ranks=A-B [, after=N] [, at=S]               messages between A and B never complete
// K: an op kind (allreduce, send, ...), coll, p2p or any (default any).
// after=N: the rule acts from the (N+1)-th matching op on that rank (for
// links: the (N+1)-th message the rank sends over the link); at=S: not
// before S seconds after MPI_Init (decimals allowed). Probes between A and
// B (the out-of-band channel) are slowed or dropped by link rules once
// `at` has passed.
#pragma once

#include "fault/op_kind.hpp"

#include <strata/status.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::fault {

enum class InjectAction { delay, stall, hang, kill, slowlink, cutlink };
const char* to_string(InjectAction action);

struct InjectRule {
  InjectAction action = InjectAction::delay;
  int rank = -1;                 // delay, stall, hang, kill
  int link_a = -1, link_b = -1;  // slowlink, cutlink
  uint32_t ops = ~0u;            // bit (1 << OpKind) per matching kind
  int64_t ms = 0;
  uint64_t after = 0;
  int64_t at_ns = 0;  // onset after start-up
  int signal = 9;     // kill
  std::string text;   // the rule as written (for reports)
};

// Parses a whole spec; on failure `error` says where.
Status parse_injection(const std::string& spec, std::vector<InjectRule>* rules, std::string* error);

namespace inject {

// Installs the rules for this rank (the parsed STRATA_FAULT_INJECT).
void install(std::vector<InjectRule> rules, int my_rank, int64_t start_ns);
// Is any rule installed? (The hooks' one branch.)
inline std::atomic<bool> g_any{false};
inline bool any() { return g_any.load(std::memory_order_acquire); }

// Before a call is recorded: delay, stall, kill.
void before(OpKind kind);
// After it is recorded: hang, and link rules for sends to `peer` (world rank).
void inside(OpKind kind, int32_t peer);
// Extra milliseconds a probe over the out-of-band channel to or from `peer`
// takes now (-1: dropped).
int64_t probe_delay_ms(int32_t peer);
// The installed rules, for the report.
const std::vector<InjectRule>& rules();

}  // namespace inject
}  // namespace strata::fault
