// What every rank of the job told the others once, at MPI_Init: its host,
// whether it has a GPU, whether NCCL (RCCL) loads there. From these each
// rank works out alone, and alike, what a communicator's members have
// (group translation to MPI_COMM_WORLD ranks): no communication per
// communicator, and so no per-communicator state on communicators that
// cannot use any of Strata's collectives.
#pragma once

#include <strata/export.h>
#include <strata/status.hpp>

#include "base/handle_table.hpp"

#include <mpi.h>

#include <cstdint>

namespace strata::coll {

// Collective over `world` (the interposer calls it in MPI_Init): one
// MPI_Allgather of a few bytes per rank.
// `caller_flags`: bits of the caller's own, gathered with the rest: whether
// every rank set one (caller_flag_everywhere: before the caller acts on it
// collectively) and how many did (job_census).
Status learn_job(MPI_Comm world, uint8_t caller_flags = 0) noexcept;
// Is this rank a GPU program (gpu::uses_gpus)? Decided once, by learn_job
// or before it: a host program's GPU runtime is then left unstarted
// (gpu::defer_runtime_until_driver_loaded), so the interposer calls this
// in MPI_Init before anything asks the runtime (the GPU-awareness of the
// library, the devices in a debug line).
void know_program() noexcept;
// Forgets them (MPI_Finalize).
void forget_job() noexcept;

// What the members of one communicator have.
struct CommFacts {
  bool known = false;            // learn_job ran and every member is a world rank
  bool gpus_everywhere = false;  // every member has a GPU and is a GPU program (gpu::uses_gpus)
  bool nccl_everywhere = false;  // ... and loads NCCL
  bool multi_node = false;       // the members span several hosts
};

// How many of the job's ranks share this rank's host (0 before learn_job).
int ranks_on_my_host() noexcept;
// Is this rank a GPU program (gpu::uses_gpus), as learn_job found at
// MPI_Init? False before it. Asked once there, for the job's facts and the
// device-direct transport alike.
bool this_rank_uses_gpus() noexcept;
// Did every rank start with the same routing settings (settings.hpp)? The
// same answer on every rank (each compares all ranks' digests); true
// where nothing is known (no MPI_Init exchange). Where they differ, every collective is left
// to the library, whatever the settings say, so no two ranks can route one
// call differently.
bool settings_agree() noexcept;
// Did every rank pass `flag` to learn_job? False before it and after
// forget_job. The same answer on every rank.
bool caller_flag_everywhere(uint8_t flag) noexcept;

// The job as its ranks described themselves to learn_job, counted over all
// of them (for the one line rank 0 logs at MPI_Init). All zeros before
// learn_job and after forget_job.
struct JobCensus {
  int ranks = 0;
  int hosts = 0;            // distinct processor names
  int ranks_with_gpu = 0;   // GPU programs (gpu::uses_gpus) that see at least one device
  int ranks_with_nccl = 0;  // ... and load NCCL (RCCL)
  int fewest_devices = 0;   // devices seen, over the ranks with a GPU
  int most_devices = 0;
  int ranks_with_flag[8] = {};  // learn_job's caller flags, bit by bit
};
// Counts over the gathered facts (a sort of the host names): for MPI_Init,
// not for a call's path.
JobCensus job_census() noexcept;

// Cached on the communicator (an attribute, freed with it), and in a
// lock-free table the per-call question below reads.
CommFacts facts_of(MPI_Comm comm) noexcept;

// Does member `rank` of `comm` run on this rank's host? (Cached on the
// communicator with its facts; false where they are not known.)
bool member_on_my_host(MPI_Comm comm, int rank) noexcept;
// Member `rank` of `comm` as a rank of MPI_COMM_WORLD (cached alike); -1
// where not known.
int world_rank_of(MPI_Comm comm, int rank) noexcept;

// A number every rank of the job holds alike after learn_job and that
// another job is unlikely to (made of a random draw of every rank), for
// messages that must be told apart from a program's own; 0 before
// learn_job and after forget_job.
uint64_t job_token() noexcept;

// The communicators surely left to the library (below): non-zero value.
extern STRATA_API HandleTable<1024> g_library_only;
// Lock-free and inline (the exported functions ask it on every collective):
// are the communicator's facts known, and do they say that no Strata
// collective can run on it (no context needed: its members do not all have
// GPUs, and share one node)? False also when not known yet.
inline bool surely_library_only(MPI_Comm comm) noexcept { return g_library_only.find(comm) != 0; }
// Says so of a communicator whose context showed it (routing.cpp): ranks
// that share GPUs or lack NCCL, within one node, no algorithm forced.
void mark_library_only(MPI_Comm comm) noexcept;

}  // namespace strata::coll
