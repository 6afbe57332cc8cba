// A call whose device buffers go to the library as host copies: for each
// buffer role (interposer/calls/roles.hpp) that matters on this rank and lies
// in GPU memory, a pinned host mirror of the bytes it spans. The call's
// pointer argument is moved to the mirror, so the library works on host
// memory with the user's own counts and datatypes; what the call reads is
// copied in before it, what it writes is copied back once its work is
// complete (at return, at the completion of its request, at the end of a
// split collective).
//
// A written buffer is first copied in too, so that the elements the call
// leaves alone go back unchanged, and only the bytes its datatypes cover are
// written back (exact_write.hpp): the bytes a datatype skips are never
// touched, whatever else the program writes there meanwhile.
#pragma once

#include "interposer/calls/roles.hpp"
#include "portability/mover/staging.hpp"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace strata::interposer {

// What a call's buffer roles mean on this rank.
struct CallShape {
  bool inter = false;             // an intercommunicator
  int rank = 0;                   // in the (local) group
  int group = 1;                  // peers of a per-peer buffer: the group's size, the remote group's
  bool is_root = false;           // this rank is the call's root (MPI_ROOT on an intercommunicator)
  bool contributes = true;        // this rank sends to or receives from the root
  bool bcast_in = false;          // a broadcast buffer is read here (the root)
  MPI_Comm comm = MPI_COMM_NULL;  // for the neighbourhood counts (asked when a role needs them)

  // The shape of a call on `comm` with `root` (calls::roles::no_root: none);
  // MPI_ERR_COMM when the communicator cannot be asked.
  static int of(MPI_Comm comm, int root, CallShape* out);
  // A local call, or one without a communicator (files, windows).
  static CallShape local();
};

class StagedCall {
 public:
  StagedCall() = default;
  StagedCall(StagedCall&&) = default;
  StagedCall& operator=(StagedCall&&) = default;
  StagedCall(const StagedCall&) = delete;
  StagedCall& operator=(const StagedCall&) = delete;

  // Finds the roles that matter here and lie in GPU memory, and moves their
  // pointer arguments to pinned mirrors; with `copy_now` the mirrors of what
  // the call reads are filled at once (else at copy_in: persistent calls).
  // Returns MPI_SUCCESS or an MPI error class (nothing is moved then).
  int stage(const CallShape& shape, calls::Bufs bufs, bool copy_now);
  // Does any buffer of the call lie in GPU memory? (Without staging.)
  static bool any_on_device(const CallShape& shape, calls::Bufs bufs);
  // The pass-through test, without a lock, an allocation or a question to
  // the library: every buffer is certainly host memory (its pointer in a
  // host granule, its datatype one run of bytes per element, known as such
  // from an earlier call). False says nothing: ask any_on_device. It never
  // asks the library about a handle (a role may not matter on this rank,
  // and then its datatype may be anything).
  static bool all_host_at_a_glance(calls::Bufs bufs) noexcept;
  bool empty() const { return mirrors_.empty(); }
  // Device to host for every mirror the call reads or writes.
  int copy_in();
  // Host to device for every mirror the call writes.
  int copy_out();
  // The mirror standing for the user's `user` pointer argument (a split
  // collective's end call passes it again), or null.
  void* mirror_of(const void* user) const;

 private:
  struct Mirror {
    struct Part {  // count elements of type at byte offset from user
      int64_t offset;
      int64_t count;
      MPI_Datatype type;
    };
    char* user = nullptr;  // the user's pointer argument
    int64_t lo = 0;        // the bytes [lo, hi) relative to it
    int64_t hi = 0;
    bool write = false;  // the call writes it
    std::vector<Part> parts;
    mover::Staging host;
  };
  std::vector<Mirror> mirrors_;
};

}  // namespace strata::interposer
