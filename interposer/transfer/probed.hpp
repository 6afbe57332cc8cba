// Messages a probe took out of the library's queue (device-direct
// transport, direct.hpp). A probe that finds a message of exactly a
// descriptor's size must look at its bytes to report the message's real
// size (a descriptor stands for a larger message), and the library cannot
// look without receiving. So the message is received (MPI_Mprobe +
// MPI_Mrecv of that very message) and kept here, in arrival order, until a
// receive matches it: every receive looks here first while any is kept
// (non-overtaking holds: a kept message left the library's queue before any
// later one of its sender). MPI_Mprobe/MPI_Improbe hand out a message
// handle of Strata's for it, which MPI_Mrecv/MPI_Imrecv recognise.
#pragma once

#include "interposer/transfer/direct_descriptor.hpp"

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace strata::interposer::probed {

struct Message {
  MPI_Comm comm = MPI_COMM_NULL;
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
  unsigned char bytes[kDirectDescriptorBytes] = {};  // as the library delivered them
  bool descriptor = false;                           // one of this job's descriptors (else the program's own bytes)
  int64_t size = 0;  // the message's bytes: a descriptor's message size, else kDirectDescriptorBytes
};

// Are messages kept (one relaxed load: the receives' check)?
extern std::atomic<int64_t> g_kept;
inline bool any_kept() noexcept { return g_kept.load(std::memory_order_relaxed) > 0; }

// The probes' side: MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe with the
// library's signatures. Without the transport on, the library's calls.
int probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);

// The receives' side: the first kept message that (comm, source, tag)
// matches, taken out; null when none.
std::unique_ptr<Message> take(MPI_Comm comm, int source, int tag);
// A handle MPI_Mprobe gave for a kept message: the message, taken out
// (*handle becomes MPI_MESSAGE_NULL); null for the library's handles.
std::unique_ptr<Message> take_handle(MPI_Message* handle);

// The status a receive of `m` reports (source, tag, its size in bytes).
void fill_status(const Message& m, MPI_Status* status);

// Drops every kept message (MPI_Finalize).
void clear();

}  // namespace strata::interposer::probed
