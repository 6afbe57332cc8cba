// Where the log goes: stderr, or STRATA_LOG_FILE, a file name pattern with
// NCCL_DEBUG_FILE's substitutions, so that each process of a job writes its
// own file (`STRATA_LOG_FILE=strata.%h.%p.log`).
#pragma once

#include <string>

namespace strata::log {

// The file name for one process: %h host, %p pid, %r MPI rank ("x" while it
// is not known), %% a percent sign; any other character is kept.
std::string expand_file_name(const std::string& pattern, const std::string& host, int pid, int rank);

// Opens the file for `pattern` (empty: stderr) with this process's host, pid
// and rank, and makes it the log's destination. A file that cannot be opened
// leaves the log where it was (stderr at start-up) and says so there, at any
// level. Called by configure() and, for a pattern with %r, by set_rank(); not
// while other threads log.
void open_destination(const std::string& pattern, int rank);

// This machine's name (gethostname), for file names and the line prefix.
std::string host_name();

// The descriptor log lines are written to.
int destination();

}  // namespace strata::log
