#include "interposer/transfer/exchange_side.hpp"

#include "interposer/transfer/sides.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/copies.hpp"

namespace strata::interposer {
namespace {

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  return mpi::real().MPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS ? extent : 0;
}

}  // namespace

int ExchangeSide::open_block(int p, void* at, int64_t count, MPI_Datatype type, bool read) {
  if (count <= 0) return MPI_SUCCESS;
  ContiguousView view;
  if (const int rc = view.open(at, count, type, read); rc != MPI_SUCCESS) return rc;
  coll::Block& b = blocks_[static_cast<size_t>(p)];
  b.data = view.data();
  b.bytes = static_cast<size_t>(view.bytes());
  if (b.data != at) {
    all_direct_ = false;
    views_.push_back({p, true, std::move(view)});  // packed: kept for flush()
  }
  return MPI_SUCCESS;
}

int ExchangeSide::every_peer(void* buf, int64_t count, MPI_Datatype type, bool read) {
  const MPI_Aint step = extent_of(type) * count;
  for (size_t p = 0; p < blocks_.size(); ++p) {
    char* at = static_cast<char*>(buf) + static_cast<int64_t>(p) * step;
    if (const int rc = open_block(static_cast<int>(p), at, count, type, read); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int ExchangeSide::every_peer_v(void* buf, const int counts[], const int displs[], MPI_Datatype type, bool read) {
  const MPI_Aint extent = extent_of(type);
  for (size_t p = 0; p < blocks_.size(); ++p) {
    char* at = static_cast<char*>(buf) + static_cast<int64_t>(displs[p]) * extent;
    if (const int rc = open_block(static_cast<int>(p), at, counts[p], type, read); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int ExchangeSide::one_peer(int p, void* buf, int64_t count, MPI_Datatype type, bool read) {
  return open_block(p, buf, count, type, read);
}

int ExchangeSide::same_for_every_peer(void* buf, int64_t count, MPI_Datatype type) {
  if (const int rc = open_block(0, buf, count, type, true); rc != MPI_SUCCESS) return rc;
  for (coll::Block& b : blocks_) b = blocks_.front();
  return MPI_SUCCESS;
}

void ExchangeSide::same_block_for_every_peer(const coll::Block& block, int skip) {
  for (size_t p = 0; p < blocks_.size(); ++p) blocks_[p] = static_cast<int>(p) == skip ? coll::Block{} : block;
}

void ExchangeSide::clear(int p) {
  blocks_[static_cast<size_t>(p)] = {};
  for (View& v : views_) {
    if (v.peer == p) v.write_back = false;
  }
}

int ExchangeSide::copy_of(const ExchangeSide& other) {
  all_direct_ = false;
  for (size_t p = 0; p < blocks_.size(); ++p) {
    const coll::Block& from = other.blocks_[p];
    if (from.bytes == 0) continue;
    mover::Staging copy = mover::Staging::acquire(mover::pinned_pool(), static_cast<int64_t>(from.bytes));
    if (!copy) return MPI_ERR_NO_MEM;
    const Status s = mover::copy_bytes(copy.data(), from.data, static_cast<int64_t>(from.bytes));
    if (s != Status::ok) return mpi::error_class(s);
    blocks_[p] = {copy.data(), from.bytes};
    copies_.push_back(std::move(copy));
  }
  return MPI_SUCCESS;
}

bool ExchangeSide::on_current_device() const {
  if (!all_direct_) return false;
  int current = -1;
  if (gpu::get_device(&current) != Status::ok) return false;
  for (const coll::Block& b : blocks_) {
    if (b.bytes == 0) continue;
    const device::Pointer w = gpu::classify(b.data);
    if ((w.kind != device::MemoryKind::device && w.kind != device::MemoryKind::managed) || w.device != current) {
      return false;
    }
  }
  return true;
}

int ExchangeSide::flush() {
  for (View& v : views_) {
    if (!v.write_back) continue;
    if (const int rc = v.view.flush(); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace strata::interposer
