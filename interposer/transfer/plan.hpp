// Which path one side of a transfer takes:
//   library      the library as is (host data it handles well, predefined and
//                contiguous types, GPU data for a GPU-aware MPI when contiguous)
//   host_pack    host data: Strata's host pack into a staging buffer
//   device_pack  GPU data of a reducible type: Strata's kernels and a method
//                (portability/mover/device_transfer.hpp)
//   device_span  GPU data of an irreducible type (or, read, by the span
//                method): the bytes it spans are copied to pinned host
//                memory, where the library packs (a send) or unpacks (a
//                receive) with the user's datatype; written data goes back
//                exactly, never over the bytes the datatype skips, which the
//                application may be writing meanwhile (exact_write.hpp)
#pragma once

#include <strata/datatype.hpp>
#include <strata/layout.hpp>

#include "interposer/model/device_model.hpp"
#include "interposer/model/host_model.hpp"
#include "interposer/types/type_cache.hpp"

#include <mpi.h>

#include <memory>

namespace strata::interposer {

enum class Path { library, host_pack, device_pack, device_span };
const char* to_string(Path path);

// The bytes of `count` elements of a committed type, without copying the
// type's layout in the common count == 1 case (no allocation per call).
class BufferLayout {
 public:
  BufferLayout() = default;
  BufferLayout(std::shared_ptr<const TypeInfo> type, int64_t count)
      : type_(std::move(type)),
        count_(count),
        repeated_(count_ == 1 ? StridedBlock{} : repeat(type_->layout.element, count_)) {}
  const StridedBlock& block() const { return count_ == 1 ? type_->layout.element : repeated_; }

 private:
  std::shared_ptr<const TypeInfo> type_;
  int64_t count_ = 0;
  StridedBlock repeated_;
};

struct Plan {
  Path path = Path::library;
  BufferLayout layout;             // host_pack, device_pack: of (count, datatype)
  int64_t bytes = 0;               // packed bytes
  int device = -1;                 // device_pack, device_span: the GPU that owns the buffer
  Method method = Method::staged;  // device_pack
  Span span;                       // device_span: the bytes (count, datatype) can touch
  const char* reason = "";         // why the library, for debug logs
  bool host_contiguous = false;    // library: contiguous data in host memory (classified)
};

// Whether a call reads the buffer (send, pack) or writes it (receive, unpack).
enum class Access { read, write };

// The plan for `count` elements of `type` at `buf`, for this kind of call.
Plan plan_buffer(const void* buf, int64_t count, MPI_Datatype type, HostOp op, Access access);

// An MPI_Isend's plan: contiguous device data the model gave the span copy
// is packed instead (the one-shot method: its span is its bytes), so that
// the send is deferred and joins its flush's one launch. A window of 64
// small Isends (osu_bw) took a copy and a wait each: 4.4-4.9x the rate at
// 4-512 B on 2 x H200. Blocking sends keep the span copy, which measured
// 1-2 us faster at 256-512 B in a ping-pong (osu_latency).
Plan isend_plan(Plan plan);

// Is the interposer switched off (STRATA_DISABLE=1)? Read once, when the
// preload library is loaded (read_disable_switch) or at the first question.
extern int g_disabled;  // -1: not read yet
int read_disable_switch() noexcept;
inline bool disabled() {
  const int d = __atomic_load_n(&g_disabled, __ATOMIC_RELAXED);
  return (d < 0 ? read_disable_switch() : d) != 0;
}

}  // namespace strata::interposer
