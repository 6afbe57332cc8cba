// Hang diagnosis: given every rank's view, which ranks or links keep the
// suspects (ranks in an operation for longer than its threshold) waiting.
//
// For a collective (#N on comm C): members that never entered #N are
// missing; the others entered and did not leave. Then a wait-for walk:
// a rank in a blocking point-to-point call waits for its peers, a rank in
// a collective for the members still missing from it. Where the walk ends
// at a rank that is outside communication, dead or silent, the hang is
// non-communication (that rank is stuck computing, or gone); where two
// ranks wait for each other in point-to-point calls, or every member is
// inside the collective, it is a communication hang (the link between the
// two; the operation itself).
#pragma once

#include "fault/detect/rank_view.hpp"

#include <strata/fault.hpp>

#include <map>
#include <optional>
#include <vector>

namespace strata::fault {

struct HangInput {
  std::vector<RankView> ranks;                       // by world rank
  std::map<uint64_t, std::vector<int32_t>> members;  // communicator id -> world ranks (0 need not be listed)
};

// The hang that the suspects are part of; nothing when there is no suspect.
std::optional<Diagnosis> diagnose_hang(const HangInput& in, int64_t now_ns);

// "in send to 7 for 5.10 s", "outside communication for 5.10 s since allreduce #12 ended", "dead".
std::string describe(const RankView& v);
// "allreduce #12 on comm 0", "send to 7", "sendrecv (to 4, from 2)".
std::string describe_op(const oob::OpBrief& op);

}  // namespace strata::fault
