// Committed datatypes -> their canonical layouts, kept from MPI_Type_commit
// to MPI_Type_free. A type Strata never saw committed (predefined types,
// uncommitted or freed handles) is unknown and goes to the library untouched,
// which then reports whatever error the library reports.
#pragma once

#include <strata/datatype.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <unordered_map>

namespace strata::interposer {

struct TypeInfo {
  TypeLayout layout;  // for an irreducible type only size, lb and extent
  bool reducible = false;
};

class TypeCache {
 public:
  // Translates a newly committed type (irreducible types are remembered as
  // such). Returns whether it reduced.
  bool on_commit(MPI_Datatype type);
  void on_free(MPI_Datatype type);
  void on_dup(MPI_Datatype original, MPI_Datatype copy);
  // The layout of a committed, reducible type; null otherwise.
  std::shared_ptr<const TypeInfo> find(MPI_Datatype type) const;
  // Any committed type Strata saw (reducible or not); null otherwise.
  std::shared_ptr<const TypeInfo> find_committed(MPI_Datatype type) const;
  // find_committed, and predefined (named) types too: those are described
  // on first use and kept (they are never freed). Null for derived types
  // Strata never saw committed (uncommitted or freed handles).
  std::shared_ptr<const TypeInfo> find_usable(MPI_Datatype type);
  void clear();

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<MPI_Datatype, std::shared_ptr<const TypeInfo>> map_;
  std::atomic<size_t> size_{0};  // lets find() skip the lock when empty
};

TypeCache& type_cache();

}  // namespace strata::interposer
