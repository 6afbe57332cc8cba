// The bits the interposer gives coll::learn_job at MPI_Init (its caller
// flags, one byte per rank, gathered with the job facts): what each rank
// asked for or found. coll::caller_flag_everywhere says whether every rank
// set one, coll::job_census how many did.
#pragma once

#include "collectives/job_facts.hpp"

#include <cstdint>

namespace strata::interposer {

constexpr uint8_t kSummaryFlag = 1;            // STRATA_SUMMARY=1 (summary.hpp)
constexpr uint8_t kGpuAwareFlag = 2;           // the MPI library takes device buffers (gpu_aware.hpp)
constexpr uint8_t kMeasuredHostModelFlag = 4;  // the host model came from a file, not the built-in figures
constexpr uint8_t kDirectFlag = 8;             // STRATA_P2P_IPC=on or auto (direct.hpp)
constexpr uint8_t kDirectForcedFlag = 16;      // STRATA_P2P_IPC=on (direct.hpp)

// How many ranks set one of these flags, by the job's census.
inline int ranks_with(const coll::JobCensus& c, uint8_t flag) { return c.ranks_with_flag[__builtin_ctz(flag)]; }

}  // namespace strata::interposer
