// Every intercepted call as a value (Id::MPI_Send, Id::MPI_Send_c, ...),
// its name and kind, generated from interposer/calls/mpi_calls.hpp.
#pragma once

#include "interposer/calls/call_kinds.hpp"
#include "interposer/calls/mpi_calls.hpp"

#include <cstddef>
#include <cstdint>

namespace strata::calls {

enum class Id : uint16_t {
#define STRATA_CALL(fn, kind, lc, params, args, roles) fn,
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
};

constexpr Kind kKinds[] = {
#define STRATA_CALL(fn, kind, lc, params, args, roles) Kind::kind,
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
};

constexpr size_t kCallCount = sizeof(kKinds) / sizeof(kKinds[0]);

constexpr Kind kind_of(Id id) { return kKinds[static_cast<size_t>(id)]; }
const char* name_of(Id id);
// Does the call have a large-count form (fn_c) in this build?
bool is_large_count(Id id);

}  // namespace strata::calls
