#include "interposer/transfer/exact_write.hpp"

#include <strata/datatype.hpp>

#include "base/log.hpp"
#include "interposer/types/type_cache.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/copies.hpp"
#include "portability/mover/device_transfer.hpp"

#include <climits>
#include <cstring>

namespace strata::interposer {
namespace {

bool contiguous(const TypeLayout& t) { return t.true_extent == t.size && t.extent == t.size; }

// Reducible: the host engine packs, the device kernels unpack (an unpack
// job of one part, as a receive's).
Status write_reducible(char* user, const char* host, int64_t count, const TypeInfo& info) {
  const StridedBlock layout = count == 1 ? info.layout.element : repeat(info.layout.element, count);
  const int64_t bytes = layout.packed_bytes();
  if (bytes <= 0) return Status::ok;
  const device::Pointer where = gpu::classify(user + span_of(info.layout, count).lo);
  mover::DeviceMessage message(where.device, mover::Method::oneshot);
  STRATA_TRY(message.reserve(bytes));
  pack_host(layout, host, message.mpi_buffer());
  const mover::DevicePart part{&layout, user, 0};
  return mover::device_unpack(message, &part, 1, bytes, true);
}

}  // namespace

Result<std::vector<std::pair<int64_t, int64_t>>> covered_runs(int64_t count, MPI_Datatype type) {
  Result<TypeLayout> t = measure_datatype(type);
  if (!t) return t.status();
  const Span s = span_of(t.value(), count);
  std::vector<std::pair<int64_t, int64_t>> runs;
  if (s.hi <= s.lo) return runs;
  const int64_t bytes = t.value().size * count;
  if (bytes > INT_MAX || count > INT_MAX) return Status::not_supported;  // MPI_Unpack's int sizes
  std::vector<unsigned char> mask(static_cast<size_t>(s.hi - s.lo), 0);
  std::vector<unsigned char> ones(static_cast<size_t>(bytes), 0xFF);
  int position = 0;
  if (mpi::real().MPI_Unpack(ones.data(), static_cast<int>(bytes), &position, mask.data() - s.lo,
                             static_cast<int>(count), type, MPI_COMM_SELF) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  for (size_t i = 0; i < mask.size();) {
    if (mask[i] == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < mask.size() && mask[j] != 0) ++j;
    runs.emplace_back(s.lo + static_cast<int64_t>(i), static_cast<int64_t>(j - i));
    i = j;
  }
  return runs;
}

Status write_exactly(char* user, const char* host, int64_t count, MPI_Datatype type) {
  if (count <= 0) return Status::ok;
  std::shared_ptr<const TypeInfo> info = type_cache().find_usable(type);
  Result<TypeLayout> measured = measure_datatype(type);
  if (!measured) return measured.status();
  const TypeLayout& t = measured.value();
  if (contiguous(t)) {
    const Span s = span_of(t, count);
    return mover::copy_bytes(user + s.lo, host + s.lo, s.hi - s.lo);
  }
  if (info && info->reducible) return write_reducible(user, host, count, *info);
  Result<std::vector<std::pair<int64_t, int64_t>>> runs = covered_runs(count, type);
  if (!runs) return runs.status();
  if (runs.value().size() > 4096) {
    STRATA_LOG_ONCE(warn, kDevice,
                    "a device buffer of an irregular datatype is written as %zu separate runs of bytes (one copy "
                    "each): slow, but no byte outside the datatype is touched",
                    runs.value().size());
  }
  return mover::copy_runs(user, host, runs.value().data(), runs.value().size());
}

}  // namespace strata::interposer
