// Where one collective call runs, decided alike on every rank of the
// communicator (docs/collectives.md, "What every rank must agree on"):
//
//   library  the MPI library's own collective, each rank handing it its own
//            arguments (device buffers staged through host memory by the
//            rank that has them)
//   host     Strata's host algorithm (hierarchical, two-level), device
//            buffers staged
//   nccl     NCCL on device buffers (a rank whose buffers are in host memory
//            stages them into device memory)
//
// The inputs are what MPI guarantees identical on every rank (the
// communicator, the collective, the type signature's size in bytes, whether
// the datatype and op map to Strata's: for reductions MPI requires the same
// datatype and op everywhere) and what the ranks agreed: the job's facts
// (job_facts.hpp), the communicator's context (made at the first routed
// call every rank makes, whatever its buffers), and, where NCCL could run
// the call, an agreement on whether every rank's buffers are in device
// memory (Context::agree_on_device). The rank's own buffers never decide
// alone.
#pragma once

#include <strata/collectives.hpp>

#include "collectives/context.hpp"

#include <cstdint>
#include <initializer_list>

namespace strata::coll {

enum class Route : uint8_t { library, host, nccl };
const char* to_string(Route route) noexcept;

struct Decision {
  Route route = Route::library;
  Algorithm algorithm = Algorithm::library;
  Context* context = nullptr;  // null on the library route of a communicator without one
};

// `mine_on_device`: this rank's buffers of the call all lie in the current
// device's memory. `algorithm`: the caller's (automatic: STRATA_COLL_ALGO,
// then the cost model). `require_context`: make the context even where no
// Strata collective applies (the public API runs every route through it).
// Collective over `comm` where it makes the context or agrees.
Result<Decision> decide(Collective collective, MPI_Comm comm, size_t bytes, bool mappable, bool mine_on_device,
                        Algorithm algorithm = Algorithm::automatic, bool require_context = false) noexcept;

// The library's route of a call that decide() would take without a word
// with the other ranks, known in a few nanoseconds: this rank's buffers in
// host memory (the caller knows), the datatype and op mappable, a
// communicator the routing made its context for by its facts (a GPU job's),
// no algorithm forced, and the call between two agreements the last of
// which found host memory on some rank. Counted as decide() would count it
// (decisions_taken). False, nothing counted, where decide() must be asked.
// (A GPU program's host collectives: 70 ns through decide() on the
// stand-in, 2 ranks, before this.)
bool library_between_agreements(Collective collective, MPI_Comm comm, size_t bytes) noexcept;
// The same for an exchange (decide_exchange): true also where the
// exchanges are left to the library (STRATA_COLL_EXCHANGE=library; nothing
// counted, as decide_exchange counts nothing there). The caller has found
// the communicator not left to the library (surely_library_only).
bool library_between_agreements(Exchange exchange, MPI_Comm comm) noexcept;

// Where an exchange (all-to-all, gather, scatter, allgatherv and their v
// forms) runs: nccl, as grouped sends and receives (exchange.hpp), where
// STRATA_COLL_EXCHANGE allows it, the communicator is NCCL-capable and the
// ranks agree that every rank's buffers are in device memory and its NCCL
// has ncclSend; the library's call otherwise. Collective over `comm` where
// it makes the context or agrees.
Result<Decision> decide_exchange(Exchange exchange, MPI_Comm comm, bool mine_on_device) noexcept;
const char* to_string(Exchange exchange) noexcept;

// How many steps that must line up across the ranks of a communicator this
// process took: contexts made (collective) and agreement calls (each counts
// towards the next vote, an MPI_Allreduce; Context::agree). Tests compare
// the counts across ranks after each collective: a rank that passed a call
// to the library on its own while another decided would, on a GPU machine,
// hang or vote at another call.
uint64_t decisions_taken() noexcept;

// Are all the call's buffers (null and MPI_IN_PLACE aside, and at least
// one) in the memory of the current device? A rank's vote in the agreement.
bool on_current_device(std::initializer_list<const void*> buffers) noexcept;

}  // namespace strata::coll
