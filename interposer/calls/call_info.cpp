#include "interposer/calls/call_ids.hpp"

#include <cstring>
#include <string>
#include <utility>

namespace strata::calls {

const char* name_of(Id id) {
  static const char* const names[] = {
#define STRATA_CALL(fn, kind, lc, params, args, roles) #fn,
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
  };
  const auto i = static_cast<size_t>(id);
  return i < kCallCount ? names[i] : "?";
}

bool is_large_count(Id id) {
  const char* n = name_of(id);
  const size_t length = std::strlen(n);
  return length > 2 && std::strcmp(n + length - 2, "_c") == 0;
}

const char* to_string(Kind k) {
  switch (k) {
    case Kind::special: return "special";
    case Kind::special_local: return "special_local";
    case Kind::completion: return "completion";
    case Kind::routed: return "routed";
    case Kind::packed: return "packed";
    case Kind::flush: return "flush";
    case Kind::send: return "send";
    case Kind::isend: return "isend";
    case Kind::send_init: return "send_init";
    case Kind::recv: return "recv";
    case Kind::irecv: return "irecv";
    case Kind::recv_init: return "recv_init";
    case Kind::mrecv: return "mrecv";
    case Kind::imrecv: return "imrecv";
    case Kind::sendrecv: return "sendrecv";
    case Kind::sendrecv_replace: return "sendrecv_replace";
    case Kind::isendrecv: return "isendrecv";
    case Kind::isendrecv_replace: return "isendrecv_replace";
    case Kind::coll: return "coll";
    case Kind::icoll: return "icoll";
    case Kind::coll_init: return "coll_init";
    case Kind::local: return "local";
    case Kind::refused: return "refused";
    case Kind::file: return "file";
    case Kind::ifile: return "ifile";
    case Kind::file_begin: return "file_begin";
    case Kind::file_end: return "file_end";
  }
  return "?";
}

const char* device_handling(Kind k) {
  switch (k) {
    case Kind::special:
    case Kind::special_local: return "its own handler (see below)";
    case Kind::completion:
      return "finishes Strata's requests among its own: unpacks receives, copies staged results back";
    case Kind::routed:
      return "routed alike on every rank (docs/collectives.md): NCCL where every rank's buffers are on its GPU "
             "(the exchanges as grouped sends and receives), Strata's host algorithm (reductions, broadcast, "
             "allgather), or the library with device buffers staged";
    case Kind::packed:
      return "each side packed per peer (host or device kernels) where that wins; a device side Strata cannot "
             "pack is staged with the whole call (MPI_Alltoallv: grouped NCCL sends and receives first, where "
             "every rank's buffers are on its GPU)";
    case Kind::flush: return "no buffer: deferred sends posted, then the library";
    case Kind::send:
    case Kind::isend:
    case Kind::send_init:
    case Kind::recv:
    case Kind::irecv:
    case Kind::recv_init:
    case Kind::mrecv:
    case Kind::imrecv:
    case Kind::sendrecv:
    case Kind::isendrecv:
      return "packed: Strata's kernels and a measured method (host derived types: host pack where it wins)";
    case Kind::sendrecv_replace:
    case Kind::isendrecv_replace: return "staged: the span copied to host memory and back";
    case Kind::coll:
    case Kind::icoll:
    case Kind::coll_init:
    case Kind::local:
    case Kind::file:
    case Kind::ifile:
    case Kind::file_begin:
    case Kind::file_end: return "staged: each device buffer's span through pinned host memory";
    case Kind::refused: return "refused: MPI_ERR_BUFFER";
  }
  return "?";
}

const char* completion(Kind k) {
  switch (k) {
    case Kind::special:
    case Kind::special_local:
    case Kind::completion:
    case Kind::routed:
    case Kind::packed:
    case Kind::flush:
    case Kind::send:
    case Kind::recv:
    case Kind::mrecv:
    case Kind::sendrecv:
    case Kind::sendrecv_replace:
    case Kind::coll:
    case Kind::local:
    case Kind::file:
    case Kind::refused: return "blocking";
    case Kind::isend:
    case Kind::irecv:
    case Kind::imrecv:
    case Kind::isendrecv:
    case Kind::isendrecv_replace:
    case Kind::icoll:
    case Kind::ifile: return "request";
    case Kind::send_init:
    case Kind::recv_init:
    case Kind::coll_init: return "persistent request";
    case Kind::file_begin: return "split: until the matching _end";
    case Kind::file_end: return "split: ends the _begin";
  }
  return "?";
}

}  // namespace strata::calls

namespace strata::calls {

#define STRATA_DOC_LC_LC true
#define STRATA_DOC_LC_NO false
#define STRATA_DOC(section, fn, kind, lc) {#fn, Kind::kind, STRATA_DOC_LC_##lc, section},
const DocumentedCall kDocumentedCalls[] = {STRATA_DOCUMENTED_CALLS};
#undef STRATA_DOC
const size_t kDocumentedCallCount = sizeof(kDocumentedCalls) / sizeof(kDocumentedCalls[0]);

namespace {
// What a special call's own handler does with device buffers.
const char* special_handling(const std::string& name) {
  static const std::pair<const char*, const char*> table[] = {
      {"MPI_Init", "reads the configuration, loads the model; learns which ranks have GPUs"},
      {"MPI_Init_thread", "as MPI_Init"},
      {"MPI_Finalize", "finishes freed requests, releases staging, then finalizes"},
      {"MPI_Type_commit", "translates the type into its canonical form (cached until freed)"},
      {"MPI_Type_free", "forgets the canonical form"},
      {"MPI_Type_dup", "shares the canonical form"},
      {"MPI_Pack", "Strata's engine (host or device kernels) where the model says so"},
      {"MPI_Unpack", "Strata's engine (host or device kernels) where the model says so"},
      {"MPI_Pack_size", "the library's (same format)"},
      {"MPI_Start", "refills persistent Strata requests (packs a send, copies a staged input in)"},
      {"MPI_Startall", "as MPI_Start"},
      {"MPI_Request_get_status", "a complete Strata request's data is in place when it says so"},
      {"MPI_Request_free", "an active Strata request finishes later; an inactive persistent one is freed"},
      {"MPI_Cancel", "the library's cancel; a cancelled receive is not unpacked"},
      {"MPI_Probe",
       "the library's; with the device-direct transport (STRATA_P2P_IPC) a device-direct message reports its own size"},
      {"MPI_Iprobe", "as MPI_Probe"},
      {"MPI_Mprobe", "as MPI_Probe; a device-direct message gets a handle of Strata's"},
      {"MPI_Improbe", "as MPI_Mprobe"},
  };
  for (const auto& [call, text] : table) {
    if (name == call) return text;
  }
  return "?";
}

const char* section_name(int section) {
  switch (section) {
    case 1: return "MPI-4";
    case 2: return "Open MPI 4.1 (mpi-ext.h)";
    default: return "all";
  }
}
}  // namespace

std::string calls_markdown() {
  std::string out =
      "| call | kind | GPU buffers | completes | `_c` form | MPI |\n| --- | --- | --- | --- | --- | --- |\n";
  for (size_t i = 0; i < kDocumentedCallCount; ++i) {
    const DocumentedCall& c = kDocumentedCalls[i];
    const bool special = c.kind == Kind::special || c.kind == Kind::special_local;
    const bool staged_c = special || c.kind == Kind::routed || c.kind == Kind::packed;
    out += std::string("| `") + c.name + "` | " + to_string(c.kind) + " | " +
           (special ? special_handling(c.name) : device_handling(c.kind)) + " | " + completion(c.kind) + " | " +
           (c.large_count ? (staged_c ? "staged (`coll`)" : "yes") : "") + " | " + section_name(c.section) + " |\n";
  }
  return out;
}

}  // namespace strata::calls
