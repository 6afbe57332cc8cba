// The MPI calls the interposer intercepts, as documentation: the table of
// docs/interposer.md ("What is intercepted") that `strata-config --calls`
// prints. The table itself is interposer/calls/call_ids.hpp (internal).
#pragma once

#include <strata/export.h>

#include <string>

namespace strata::calls {

// The markdown table: one row per call of every MPI the interposer serves
// (whether this build's MPI has it or not), its kind, what it does with GPU
// buffers, how it completes, its large-count form and the MPI that has it.
STRATA_API std::string calls_markdown();

}  // namespace strata::calls
