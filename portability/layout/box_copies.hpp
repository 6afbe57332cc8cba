// A canonical strided block as the copy engine moves it: a few boxes of
// rows, each one cudaMemcpy3D/hipMemcpy3D (or 2D) call. The copy engine
// packs with no kernel at all, so no streaming multiprocessor is taken from
// the application's kernels, and work of other processes that time-slice
// the GPU does not delay it (docs/device.md, "Kernels or copy engines").
#pragma once

#include <strata/layout.hpp>

#include <cstdint>
#include <vector>

namespace strata::detail {

// `depth` slices `slice_pitch` bytes apart, each of `height` rows `pitch`
// bytes apart, each row `width` contiguous bytes, starting `user_offset`
// bytes from the user's pointer; in the packed stream the box's bytes are
// contiguous from `packed_offset`, in traversal order. slice_pitch is a
// whole number of pitches, at least height of them (the runtimes describe a
// box by a row pitch and a number of rows per slice).
struct BoxCopy {
  int64_t user_offset = 0;
  int64_t packed_offset = 0;
  int64_t width = 0;
  int64_t height = 1;
  int64_t pitch = 0;
  int64_t depth = 1;
  int64_t slice_pitch = 0;
  int64_t bytes() const { return width * height * depth; }
};

// The largest pitch the runtimes take for a strided copy.
inline constexpr int64_t kMaxCopyPitch = (int64_t{1} << 31) - 1;

// The boxes that move every block of `layout`, in packed order; false (and
// `boxes` empty) when the copy engine cannot move it in at most `max_boxes`
// boxes: rows that overlap or run backwards (a zero, negative or
// smaller-than-block stride of the innermost dimension), a pitch over
// kMaxCopyPitch, or too many outer repetitions. An empty layout needs no
// box.
bool plan_box_copies(const StridedBlock& layout, int64_t max_boxes, std::vector<BoxCopy>* boxes);

}  // namespace strata::detail
