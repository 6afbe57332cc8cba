#include "collectives/nccl/nccl_library.hpp"

#include "base/config.hpp"
#include "base/log.hpp"

#include <dlfcn.h>

#include <string>

namespace strata::coll::nccl {
namespace {

config::StringParam g_path{"STRATA_NCCL_LIBRARY", "",
                           "NCCL (RCCL) shared library the device collectives load; empty: libnccl.so.2 "
                           "(librccl.so.1 in a HIP build) from the loader's search path"};

#if defined(STRATA_NCCL_IS_RCCL)
constexpr const char* kDefaultNames[] = {"librccl.so.1", "librccl.so"};
#else
constexpr const char* kDefaultNames[] = {"libnccl.so.2", "libnccl.so"};
#endif

template <class F>
bool resolve(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (*out == nullptr) STRATA_LOG(warn, kColl, "NCCL library lacks %s", name);
  return *out != nullptr;
}

Library* load() {
  void* handle = nullptr;
  std::string tried;
  if (!g_path.get().empty()) {
    handle = dlopen(g_path.get().c_str(), RTLD_NOW | RTLD_LOCAL);
    tried = g_path.get();
  }
  for (const char* name : kDefaultNames) {
    if (handle != nullptr || !g_path.get().empty()) break;
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    tried += std::string(tried.empty() ? "" : ", ") + name;
  }
  if (handle == nullptr) {
    STRATA_LOG(debug, kColl, "no NCCL library (%s): device collectives are staged through host memory", tried.c_str());
    return nullptr;
  }
  static Library lib;
  bool ok =
      resolve(handle, "ncclGetVersion", &lib.GetVersion) && resolve(handle, "ncclGetUniqueId", &lib.GetUniqueId) &&
      resolve(handle, "ncclCommInitRank", &lib.CommInitRank) && resolve(handle, "ncclCommDestroy", &lib.CommDestroy) &&
      resolve(handle, "ncclCommAbort", &lib.CommAbort) &&
      resolve(handle, "ncclCommGetAsyncError", &lib.CommGetAsyncError) &&
      resolve(handle, "ncclGetErrorString", &lib.GetErrorString) && resolve(handle, "ncclAllReduce", &lib.AllReduce) &&
      resolve(handle, "ncclReduceScatter", &lib.ReduceScatter) && resolve(handle, "ncclAllGather", &lib.AllGather) &&
      resolve(handle, "ncclBroadcast", &lib.Broadcast) && resolve(handle, "ncclReduce", &lib.Reduce) &&
      resolve(handle, "ncclGroupStart", &lib.GroupStart) && resolve(handle, "ncclGroupEnd", &lib.GroupEnd);
  if (!ok || lib.GetVersion(&lib.version) != ncclSuccess) {
    STRATA_LOG(warn, kColl, "unusable NCCL library (%s): device collectives are staged through host memory",
               tried.c_str());
    return nullptr;  // the handle stays open: resolved pointers may be in use nowhere, but closing gains nothing
  }
  // Optional: ncclSend / ncclRecv came with NCCL 2.7 (device_p2p.cpp checks).
  lib.Send = reinterpret_cast<decltype(lib.Send)>(dlsym(handle, "ncclSend"));
  lib.Recv = reinterpret_cast<decltype(lib.Recv)>(dlsym(handle, "ncclRecv"));
  STRATA_LOG(debug, kColl, "NCCL %d loaded", lib.version);
  return &lib;
}

}  // namespace

const Library* library() noexcept {
  static const Library* lib = load();
  return lib;
}

Status check(ncclResult_t result, const char* what) noexcept {
  if (result == ncclSuccess || result == ncclInProgress) return Status::ok;
  const Library* lib = library();
  STRATA_LOG(error, kColl, "%s: %s", what, lib != nullptr ? lib->GetErrorString(result) : "NCCL error");
  return Status::device_error;
}

}  // namespace strata::coll::nccl
