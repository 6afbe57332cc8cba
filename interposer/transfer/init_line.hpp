// What Strata says at MPI_Init: one line per job, logged by rank 0 at info
// level from the facts every rank gave the job-facts exchange
// (coll::learn_job), e.g.
//   strata 0.1.0: interposer active on 8 ranks (2 hosts) over Open MPI v4.1.6;
//   GPUs: 8 ranks see 1-2 devices (cuda), NCCL on all, MPI not GPU-aware;
//   host model: reference
// (one line in the log). Each rank's own details (the library's full
// version, its devices, its model's file) are logged at debug level.
#pragma once

#include <cstdint>

namespace strata::interposer {

// This rank's part of the line, as learn_job's caller flags
// (kGpuAwareFlag, kMeasuredHostModelFlag; job_flags.hpp). Loads the host
// model and asks the library's GPU support, once.
uint8_t init_line_flags();

// Each rank, at debug level: the MPI library, the GPU backend and devices,
// the library's GPU support.
void log_rank_details();

// Rank 0, at info level, after learn_job: the job's line.
void log_init_line(int rank);

}  // namespace strata::interposer
