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
// A digest of the settings above, compared across ranks at MPI_Init.
uint64_t routing_settings_digest() noexcept;

}  // namespace strata::coll
