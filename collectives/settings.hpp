// The collectives' settings that steer routing. Every rank must see the
// same values (mpirun -x, srun --export): MPI_Init warns when they differ
// (job_facts.cpp).
#pragma once

#include <strata/collectives.hpp>

#include <cstdint>

namespace strata::coll {

// STRATA_COLL_ALGO (automatic when unset).
Algorithm forced_algorithm() noexcept;
// STRATA_TOPOLOGY is set: every communicator gets a context (the emulated
// levels are there to be used).
bool topology_emulated() noexcept;
// STRATA_COLL_AGREE_EVERY: the longest period, in calls, between two
// agreements on device memory (Context::agree_on_device).
int agreement_period_limit() noexcept;
// STRATA_COLL_EXCHANGE: may all-to-all, gather, scatter and allgatherv on
// device buffers run as grouped NCCL sends and receives (exchange.hpp)?
bool nccl_exchanges() noexcept;
// STRATA_COLL_GATHER_NCCL_MIN: the smallest MPI_Gather block (bytes) that
// goes to NCCL; smaller ones go to the library.
int64_t gather_nccl_min_bytes() noexcept;
// A digest of the settings above, compared across ranks at MPI_Init.
uint64_t routing_settings_digest() noexcept;

}  // namespace strata::coll
