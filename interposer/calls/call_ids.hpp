// Every intercepted call as a value (Id::MPI_Send, Id::MPI_Send_c, ...),
// its name and kind, generated from mpi/calls/mpi_calls.hpp.
#pragma once

#include <strata/calls.hpp>
#include <strata/export.h>

#include "interposer/calls/call_kinds.hpp"
#include "mpi/calls/mpi_calls.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::calls {

enum class Id : uint16_t {
#define STRATA_CALL(fn, kind, lc, params, args, roles) fn,
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
};

constexpr Kind kKinds[] = {
#define STRATA_CALL(fn, kind, lc, params, args, roles) Kind::kind,
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
};

constexpr size_t kCallCount = sizeof(kKinds) / sizeof(kKinds[0]);

constexpr Kind kind_of(Id id) { return kKinds[static_cast<size_t>(id)]; }
STRATA_API const char* name_of(Id id);
// Does the call have a large-count form (fn_c) in this build?
STRATA_API bool is_large_count(Id id);

}  // namespace strata::calls

namespace strata::calls {

// One row of the documentation table: every call of every MPI the table
// serves (whether this build's MPI has it or not).
struct DocumentedCall {
  const char* name;
  Kind kind;
  bool large_count;  // MPI-4 also has name_c, handled alike
  int section;       // 0: every MPI; 1: MPI-4 only; 2: Open MPI 4.1's MPIX extension
};
extern STRATA_API const DocumentedCall kDocumentedCalls[];
extern STRATA_API const size_t kDocumentedCallCount;

// The markdown table of docs/interposer.md ("What is intercepted"):
// calls_markdown(), declared in <strata/calls.hpp> for the tools.

}  // namespace strata::calls
