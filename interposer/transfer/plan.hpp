// Which path one side of a transfer takes: the library as is, or Strata's
// host pack into a staging buffer. (The device methods join here later.)
#pragma once

#include <strata/layout.hpp>

#include "interposer/model/host_model.hpp"
#include "interposer/types/type_cache.hpp"

#include <mpi.h>

namespace strata::interposer {

enum class Path { library, host_pack };

// The bytes of `count` elements of a committed type, without copying the
// type's layout in the common count == 1 case (no allocation per call).
class BufferLayout {
 public:
  BufferLayout() = default;
  BufferLayout(std::shared_ptr<const TypeInfo> type, int64_t count)
      : type_(std::move(type)), count_(count), repeated_(count_ == 1 ? StridedBlock{} : repeat(type_->layout.element, count_)) {}
  const StridedBlock& block() const { return count_ == 1 ? type_->layout.element : repeated_; }

 private:
  std::shared_ptr<const TypeInfo> type_;
  int64_t count_ = 0;
  StridedBlock repeated_;
};

struct Plan {
  Path path = Path::library;
  BufferLayout layout;  // of (count, datatype) when path != library
  int64_t bytes = 0;    // packed bytes
  const char* reason = "";  // why the library, for debug logs
};

// The plan for `count` elements of `type` at `buf`, for this kind of call.
Plan plan_buffer(const void* buf, int64_t count, MPI_Datatype type, HostOp op);

// Is the interposer switched off (STRATA_DISABLE=1)?
bool disabled();

}  // namespace strata::interposer
