// NCCL (RCCL in a HIP build), loaded at run time with dlopen: the preloaded
// interposer lives in processes that may carry their own NCCL, or none, and
// must load where NCCL is absent. The library is searched as
// STRATA_NCCL_LIBRARY, then libnccl.so.2 / librccl.so.1 on the loader's
// path. Only this folder includes nccl.h.
#pragma once

#include <strata/status.hpp>

#include <nccl.h>

namespace strata::coll::nccl {

// The entry points Strata uses, resolved once.
struct Library {
  ncclResult_t (*GetVersion)(int*);
  ncclResult_t (*GetUniqueId)(ncclUniqueId*);
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*CommDestroy)(ncclComm_t);
  ncclResult_t (*CommAbort)(ncclComm_t);
  ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t*);
  const char* (*GetErrorString)(ncclResult_t);
  ncclResult_t (*AllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*ReduceScatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*AllGather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*Broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*Reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
  // Point-to-point (NCCL 2.7 and later): null in older libraries, which
  // still serve the collectives.
  ncclResult_t (*Send)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*Recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  int version = 0;
};

// The loaded library, or null when none could be loaded (said once).
const Library* library() noexcept;

// Status of an NCCL result; logs the first failure with NCCL's message.
Status check(ncclResult_t result, const char* what) noexcept;

}  // namespace strata::coll::nccl
