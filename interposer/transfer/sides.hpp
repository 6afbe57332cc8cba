// One side of a transfer as MPI sees it, once Strata has prepared it:
// the buffer, count and datatype handed to the library, and the staging
// that backs them. Every path of plan.hpp goes through here, so point-to-
// point, all-to-all and pack calls share one implementation.
#pragma once

#include "interposer/transfer/direct.hpp"
#include "interposer/transfer/plan.hpp"
#include "portability/mover/device_transfer.hpp"
#include "portability/mover/staging.hpp"

#include <mpi.h>

namespace strata::interposer {

struct Outgoing {
  const void* buffer = nullptr;  // what the library sends
  int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  mover::Staging host;          // host_pack: the packed bytes; device_span: the span's copy
  mover::DeviceMessage device;  // device_pack
  DirectSend direct;            // device_pack to a node peer that pulls the bytes itself (direct.hpp)
  void leak() {
    host.leak();
    device.leak();
  }
};

// The one part of a point-to-point device message: the plan's block over `buf`.
mover::DevicePart whole(const Plan& plan, const void* buf);

// The send carries Strata's packed bytes: `bytes` of them at `packed`, as
// MPI_PACKED (counted in sends_packed).
void send_packed(Outgoing* out, const void* packed, int64_t bytes);

// Packs or copies as the plan says. Returns MPI_SUCCESS, or an MPI error
// code when device work failed (host packing never fails: without staging
// memory the library sends the user's buffer itself).
int prepare_send(const Plan& plan, const void* buf, int64_t count, MPI_Datatype type, Outgoing* out);
// prepare_send for a message to member `dest` of `comm`: a device message
// to a node peer that reads this GPU goes as a descriptor (direct.hpp).
int prepare_send_to(const Plan& plan, const void* buf, int64_t count, MPI_Datatype type, MPI_Comm comm, int dest,
                    Outgoing* out);

// prepare_send in two steps, for persistent sends: reserve_send sets up the
// staging and what the library sends (once, at MPI_Send_init); fill_send
// packs or copies the user's data into it (at every MPI_Start).
int reserve_send(const Plan& plan, const void* buf, int64_t count, MPI_Datatype type, Outgoing* out);
int fill_send(const Plan& plan, const void* buf, Outgoing* out);

struct Incoming {
  void* buffer = nullptr;  // what the library receives into
  int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  Plan plan;
  void* user = nullptr;  // the user's buffer, count and datatype
  int64_t user_count = 0;
  MPI_Datatype user_type = MPI_DATATYPE_NULL;
  mover::Staging host;
  mover::DeviceMessage device;
  void leak() {
    host.leak();
    device.leak();
  }
};

int prepare_recv(const Plan& plan, void* buf, int64_t count, MPI_Datatype type, Incoming* in);

// A persistent receive started again (MPI_Start): a device span's host
// copy is taken again, so that the elements a shorter message does not
// reach keep what the buffer holds now, not what it held at MPI_Recv_init.
int refresh_recv(Incoming& in);

// After the library completed the receive (successfully) with `status`:
// moves what arrived into the user's buffer. With `wait` false device work
// may still be queued: `in` must then live until wait_for_queued_unpacks().
// `kept`: the bytes of a message a probe kept (probed.hpp) where they are a
// descriptor, instead of those in the receive's buffer.
int complete_recv(Incoming& in, MPI_Status& status, bool wait = true, const unsigned char* kept = nullptr);

// complete_recv of a receive the library served into the user's host
// buffer (contiguous data): looks only at a message of exactly a
// descriptor's size.
int complete_host_recv(void* buf, int64_t count, MPI_Datatype type, MPI_Status& status);

// A message a probe kept (kDirectDescriptorBytes bytes, a descriptor or the
// program's own) delivered to a prepared receive as the library would have,
// then completed; `status` says what arrived.
int complete_kept_recv(Incoming& in, const unsigned char* bytes, bool descriptor, MPI_Status& status);

// Reports a failed Strata step: logs it, raises `code` on `comm`'s error
// handler (as the library would for its own errors) and returns it.
int raise_error(MPI_Comm comm, int code, const char* what);

}  // namespace strata::interposer
