// Copies of the device stand-in (fake_device.hpp), done at the call through
// host views: device addresses are translated to their shadows, and a range
// that runs past the end of its device allocation fails as a real GPU's
// copy would, instead of touching whatever is mapped after the shadow.
#include "portability/gpu/fake_device.hpp"

#include <cstring>

namespace strata::gpu::fake {
namespace {

// Overlapping copies are undefined on a GPU's copy engines (and in memcpy):
// reported, never done.
bool overlap(const char* a, size_t a_bytes, const char* b, size_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

}  // namespace

Status memcpy_async(void* dst, const void* src, size_t bytes, Stream stream) noexcept {
  if (bytes == 0) return Status::ok;
  if (dst == nullptr || src == nullptr) return Status::invalid_argument;
  STRATA_TRY(check_stream(stream, "memcpy_async"));
  char* d = nullptr;
  char* s = nullptr;
  STRATA_TRY(host_range(dst, bytes, &d, "memcpy_async (destination)"));
  STRATA_TRY(host_range(src, bytes, &s, "memcpy_async (source)"));
  if (d == s) return Status::ok;  // a copy onto itself changes nothing
  if (overlap(d, bytes, s, bytes)) return fail("memcpy_async", "source and destination overlap");
  std::memcpy(d, s, bytes);
  return Status::ok;
}

Status memset_async(void* dst, int value, size_t bytes, Stream stream) noexcept {
  if (bytes == 0) return Status::ok;
  if (dst == nullptr) return Status::invalid_argument;
  STRATA_TRY(check_stream(stream, "memset_async"));
  char* d = nullptr;
  STRATA_TRY(host_range(dst, bytes, &d, "memset_async"));
  std::memset(d, value, bytes);
  return Status::ok;
}

// As gpu_runtime.cu's cudaMemcpy3D of the box: `depth` slices of `height`
// rows of `width` bytes, `pitch` and `slice_pitch` apart on the user's side,
// dense on the packed side.
Status copy_box_async(const detail::BoxCopy& box, char* user, char* packed, bool pack, Stream stream) noexcept {
  if (box.bytes() == 0) return Status::ok;
  if (user == nullptr || packed == nullptr || box.width <= 0 || box.pitch < box.width ||
      box.slice_pitch < box.pitch * box.height || box.slice_pitch % box.pitch != 0) {
    return Status::invalid_argument;
  }
  STRATA_TRY(check_stream(stream, "copy_box_async"));
  const auto width = static_cast<size_t>(box.width);
  const int64_t user_span = (box.depth - 1) * box.slice_pitch + (box.height - 1) * box.pitch + box.width;
  char* u = nullptr;
  char* k = nullptr;
  STRATA_TRY(host_range(user + box.user_offset, static_cast<size_t>(user_span), &u, "copy_box_async (user side)"));
  STRATA_TRY(
      host_range(packed + box.packed_offset, static_cast<size_t>(box.bytes()), &k, "copy_box_async (packed side)"));
  if (overlap(u, static_cast<size_t>(user_span), k, static_cast<size_t>(box.bytes()))) {
    return fail("copy_box_async", "source and destination overlap");
  }
  for (int64_t z = 0; z < box.depth; ++z) {
    char* row = u + z * box.slice_pitch;
    for (int64_t y = 0; y < box.height; ++y, row += box.pitch, k += width) {
      std::memcpy(pack ? k : row, pack ? row : k, width);
    }
  }
  return Status::ok;
}

}  // namespace strata::gpu::fake
