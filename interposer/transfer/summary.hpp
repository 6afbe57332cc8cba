// STRATA_SUMMARY=1: at MPI_Finalize, rank 0 prints what Strata did in the
// whole job (each counter summed over the ranks, with the smallest and largest
// rank's; the calls and their time by path: passed straight to the library,
// or through Strata's handlers split into Strata's own code and the
// library's), as a table on the log's destination, and with
// STRATA_SUMMARY_JSON=FILE also as JSON. It is a reduction over
// MPI_COMM_WORLD, so it runs only where every rank asked for it (agreed at
// MPI_Init through the job facts); a rank that asked alone is told why.
#pragma once

#include "interposer/transfer/job_flags.hpp"

#include <cstdint>

namespace strata::interposer {

// This rank's STRATA_SUMMARY, as the flag for learn_job (0 or kSummaryFlag);
// where it is set, the calls are timed from here on (summary_time.hpp: the
// summary's time by path). Called once, at MPI_Init.
uint8_t summary_flag();

// In MPI_Finalize, before the job facts are forgotten: collective over
// MPI_COMM_WORLD when every rank asked, else nothing (and a warning on the
// ranks that asked).
void summarise_job();

}  // namespace strata::interposer
