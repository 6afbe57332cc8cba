// What the detectors know of one rank at one moment: built by the
// coordinator from heartbeats (online) and by strata-fault from dumps
// (post mortem), so both diagnose with the same code.
#pragma once

#include "fault/oob/messages.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata::fault {

enum class Liveness {
  alive,
  finished,  // sent its final heartbeat (MPI_Finalize)
  silent,    // no heartbeat for longer than the heartbeat timeout
  dead,      // its connection closed without a final heartbeat
  unknown,   // never heard of (no dump, never connected)
};

struct RankView {
  int rank = -1;
  Liveness liveness = Liveness::unknown;
  int64_t silent_ns = 0;  // silent, dead: since the last word
  bool in_op = false;
  oob::OpBrief current;      // in_op: the oldest blocking operation in progress
  int64_t age_ns = 0;        // in_op: time in it
  int64_t threshold_ns = 0;  // in_op: its hang threshold
  bool suspect = false;      // in_op and age_ns > threshold_ns
  bool has_last = false;
  oob::OpBrief last;                            // the last operation finished
  int64_t idle_ns = 0;                          // !in_op: time since `last` ended (or since start)
  std::vector<oob::OpBrief> pending;            // non-blocking operations not completed
  std::map<uint64_t, oob::CommProgress> comms;  // by communicator id
  uint64_t ops_done = 0;
  std::string host;
  std::string gpu;
};

// "0" for MPI_COMM_WORLD, else the id in hex.
std::string comm_text(uint64_t comm);

}  // namespace strata::fault
