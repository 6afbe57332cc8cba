#include "fault/op_kind.hpp"

#include <cstring>

namespace strata::fault {
namespace {

constexpr const char* kNames[] = {"none",
                                  "send",
                                  "recv",
                                  "sendrecv",
                                  "isend",
                                  "irecv",
                                  "wait",
                                  "allreduce",
                                  "reduce_scatter",
                                  "allgather",
                                  "bcast",
                                  "reduce",
                                  "alltoallv",
                                  "neighbor_alltoall",
                                  "secondary_partition",
                                  "fused_allreduce_rmsnorm"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(OpKind::count_), "one name per kind");

}  // namespace

const char* to_string(OpKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i < static_cast<size_t>(OpKind::count_) ? kNames[i] : "?";
}

bool parse_op_kind(const char* text, OpKind* out) {
  for (size_t i = 1; i < static_cast<size_t>(OpKind::count_); ++i) {
    if (std::strcmp(text, kNames[i]) == 0) {
      *out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

}  // namespace strata::fault
