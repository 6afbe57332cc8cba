#include "portability/layout/box_copies.hpp"

#include "portability/layout/strided_index.hpp"

namespace strata::detail {

bool plan_box_copies(const StridedBlock& layout, int64_t max_boxes, std::vector<BoxCopy>* boxes) {
  boxes->clear();
  if (layout.empty()) return true;
  const std::vector<Stream>& dims = layout.dims;
  BoxCopy box;
  box.width = layout.block;
  box.pitch = layout.block;
  box.slice_pitch = layout.block;
  size_t inner = 0;  // dimensions the box itself covers
  if (!dims.empty()) {
    const Stream rows = dims[0];
    if (rows.stride < layout.block || rows.stride > kMaxCopyPitch) return false;
    box.height = rows.count;
    box.pitch = rows.stride;
    box.slice_pitch = rows.stride * rows.count;
    inner = 1;
    // A second dimension whose stride is a whole number of row pitches, at
    // least a slice's rows, makes the box three-dimensional.
    if (dims.size() > 1) {
      const Stream slices = dims[1];
      if (slices.stride > 0 && slices.stride % rows.stride == 0 && slices.stride / rows.stride >= rows.count) {
        box.depth = slices.count;
        box.slice_pitch = slices.stride;
        inner = 2;
      }
    }
  }
  // One box per position of the outer dimensions, innermost first (the
  // packed order).
  int64_t count = 1;
  for (size_t d = inner; d < dims.size(); ++d) {
    if (dims[d].count > max_boxes / count) return false;
    count *= dims[d].count;
  }
  if (count > max_boxes) return false;
  boxes->reserve(static_cast<size_t>(count));
  const int outer = static_cast<int>(dims.size() - inner);
  for (int64_t k = 0; k < count; ++k) {
    box.user_offset = block_offset(layout.offset, dims.data() + inner, outer, k);
    box.packed_offset = k * box.bytes();
    boxes->push_back(box);
  }
  return true;
}

}  // namespace strata::detail
