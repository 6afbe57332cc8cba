#include "interposer/types/type_cache.hpp"

#include "base/log.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/types/fast_types.hpp"
#include "mpi/real_mpi.hpp"

#include <mutex>

namespace strata::interposer {
namespace {

// What the hot paths keep of a type (fast_types.hpp).
FastType fast_of(const TypeInfo* info) {
  FastType f;
  f.shape = TypeShape::other;
  if (info == nullptr) return f;
  const TypeLayout& t = info->layout;
  if (t.lb == 0 && t.true_lb == 0 && t.extent == t.size && t.true_extent == t.size) f.shape = TypeShape::contiguous;
  f.reducible = info->reducible;
  f.block = info->reducible ? t.element.block : 0;
  f.size = t.size;
  return f;
}

}  // namespace

bool TypeCache::on_commit(MPI_Datatype type) {
  Result<TypeLayout> layout = describe_datatype(type);
  const bool reducible = layout.ok();  // read before the value is moved out
  auto info = std::make_shared<TypeInfo>();
  if (layout) {
    info->layout = std::move(layout).value();
    info->reducible = true;
    counters().types_reducible.fetch_add(1, std::memory_order_relaxed);
    STRATA_LOG(debug, kTypes, "commit: canonical %s size=%lld", info->layout.element.to_string().c_str(),
               static_cast<long long>(info->layout.size));
  } else {
    Result<TypeLayout> measured = measure_datatype(type);
    if (measured) {
      info->layout = std::move(measured).value();
    } else {
      info = nullptr;  // not even the size: the library handles everything about it
    }
    counters().types_irreducible.fetch_add(1, std::memory_order_relaxed);
    STRATA_LOG(debug, kTypes, "commit: %s, handled by the library", to_string(layout.status()));
  }
  remember_type(type, fast_of(info.get()));
  std::unique_lock<std::shared_mutex> lock(mutex_);
  map_[type] = std::shared_ptr<const TypeInfo>(std::move(info));
  size_.store(map_.size(), std::memory_order_release);
  return reducible;
}

void TypeCache::on_free(MPI_Datatype type) {
  forget_shape(type);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  map_.erase(type);
  size_.store(map_.size(), std::memory_order_release);
}

void TypeCache::on_dup(MPI_Datatype original, MPI_Datatype copy) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = map_.find(original);
  if (it == map_.end()) return;                       // not committed through us: the copy stays unknown
  std::shared_ptr<const TypeInfo> info = it->second;  // a dup has the same layout
  remember_type(copy, fast_of(info.get()));
  map_[copy] = std::move(info);
  size_.store(map_.size(), std::memory_order_release);
}

std::shared_ptr<const TypeInfo> TypeCache::find_committed(MPI_Datatype type) const {
  if (size_.load(std::memory_order_acquire) == 0) return nullptr;
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = map_.find(type);
  return it == map_.end() ? nullptr : it->second;
}

std::shared_ptr<const TypeInfo> TypeCache::find_usable(MPI_Datatype type) {
  if (std::shared_ptr<const TypeInfo> info = find_committed(type)) return info;
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (type == MPI_DATATYPE_NULL || mpi::real().MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_NAMED) {
    return nullptr;
  }
  on_commit(type);  // a predefined type: describe it once
  return find_committed(type);
}

std::shared_ptr<const TypeInfo> TypeCache::find(MPI_Datatype type) const {
  std::shared_ptr<const TypeInfo> info = find_committed(type);
  return info && info->reducible ? info : nullptr;
}

void TypeCache::clear() {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  map_.clear();
  size_.store(0, std::memory_order_release);
}

TypeCache& type_cache() {
  static TypeCache* cache = new TypeCache();  // never destroyed: used until the process ends
  return *cache;
}

}  // namespace strata::interposer
