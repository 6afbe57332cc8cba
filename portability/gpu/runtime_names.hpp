// Backend-neutral names for the CUDA and HIP runtime APIs: the one place that
// knows which runtime a device source file is compiled against. gpu_runtime.cu
// and pack_kernels.cu are written once with these names; hipcc (__HIPCC__)
// gets HIP, nvcc (__CUDACC__) or a STRATA_HAVE_CUDA host compile gets CUDA.
// A flat list on purpose: no logic, no wrappers. Behaviour that differs
// between the runtimes (pointer-attribute fields, optional properties) is
// handled where it is used, in gpu_runtime.cu.
//
// Include only from portability/gpu sources: it pulls in the runtime headers.
#pragma once

#if defined(__HIPCC__)

#include <hip/hip_runtime.h>

#define STRATA_GPU_BACKEND_NAME "hip"

// --- types ---------------------------------------------------------------------
#define gpuError_t hipError_t
#define gpuStream_t hipStream_t
#define gpuEvent_t hipEvent_t
#define gpuDeviceProp_t hipDeviceProp_t
#define gpuPointerAttributes hipPointerAttribute_t
#define gpuIpcMemHandle_t hipIpcMemHandle_t
#define gpuIpcEventHandle_t hipIpcEventHandle_t
#define gpuFuncAttributes hipFuncAttributes
#define gpuDeviceptr_t hipDeviceptr_t
#define gpuMemcpyKind hipMemcpyKind

// --- error codes and messages ------------------------------------------------------
#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuErrorInvalidValue hipErrorInvalidValue
#define gpuErrorMemoryAllocation hipErrorOutOfMemory
#define gpuErrorNoDevice hipErrorNoDevice
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuGetLastError hipGetLastError
#define gpuPeekAtLastError hipPeekAtLastError

// --- devices -------------------------------------------------------------------------
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuSetDevice hipSetDevice
#define gpuGetDevice hipGetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuDevAttrMaxThreadsPerBlock hipDeviceAttributeMaxThreadsPerBlock
#define gpuDevAttrMaxBlockDimX hipDeviceAttributeMaxBlockDimX
#define gpuDevAttrMaxBlockDimY hipDeviceAttributeMaxBlockDimY
#define gpuDevAttrMaxBlockDimZ hipDeviceAttributeMaxBlockDimZ
#define gpuDevAttrMaxGridDimX hipDeviceAttributeMaxGridDimX
#define gpuDevAttrMaxGridDimY hipDeviceAttributeMaxGridDimY
#define gpuDevAttrMaxGridDimZ hipDeviceAttributeMaxGridDimZ
#define gpuDevAttrWarpSize hipDeviceAttributeWarpSize
#define gpuDevAttrMaxSharedMemoryPerBlock hipDeviceAttributeMaxSharedMemoryPerBlock

// --- streams and events ------------------------------------------------------------------
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamQuery hipStreamQuery
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDefault hipStreamDefault
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventQuery hipEventQuery
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDefault hipEventDefault
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuEventInterprocess hipEventInterprocess

// --- memory ------------------------------------------------------------------------------
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocManaged hipMallocManaged
#define gpuMemAttachGlobal hipMemAttachGlobal
#define gpuHostAlloc hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuHostAllocDefault hipHostMallocDefault
#define gpuHostAllocPortable hipHostMallocPortable
#define gpuHostAllocMapped hipHostMallocMapped
#define gpuHostRegister hipHostRegister
#define gpuHostUnregister hipHostUnregister
#define gpuHostRegisterDefault hipHostRegisterDefault
#define gpuHostRegisterPortable hipHostRegisterPortable
#define gpuHostRegisterMapped hipHostRegisterMapped
#define gpuHostGetDevicePointer hipHostGetDevicePointer
#define gpuPointerGetAttributes hipPointerGetAttributes
#define gpuMemGetAddressRange hipMemGetAddressRange
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpy2DAsync hipMemcpy2DAsync
#define gpuMemcpy3DAsync hipMemcpy3DAsync
#define gpuMemcpy3DParms hipMemcpy3DParms
#define make_gpuPitchedPtr make_hipPitchedPtr
#define make_gpuExtent make_hipExtent
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyDefault hipMemcpyDefault
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice

// --- IPC ---------------------------------------------------------------------------------
#define gpuIpcGetMemHandle hipIpcGetMemHandle
#define gpuIpcOpenMemHandle hipIpcOpenMemHandle
#define gpuIpcCloseMemHandle hipIpcCloseMemHandle
#define gpuIpcGetEventHandle hipIpcGetEventHandle
#define gpuIpcOpenEventHandle hipIpcOpenEventHandle
#define gpuIpcMemLazyEnablePeerAccess hipIpcMemLazyEnablePeerAccess

// --- kernels (launch with <<<grid, block, shmem, stream>>>, valid in both) ---------------
#define gpuFuncGetAttributes hipFuncGetAttributes
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuOccupancyMaxPotentialBlockSize hipOccupancyMaxPotentialBlockSize

// --- graphs ------------------------------------------------------------------------------
#define gpuGraph_t hipGraph_t
#define gpuGraphExec_t hipGraphExec_t
#define gpuStreamBeginCapture hipStreamBeginCapture
#define gpuStreamIsCapturing hipStreamIsCapturing
#define gpuStreamCaptureStatus hipStreamCaptureStatus
#define gpuStreamCaptureStatusNone hipStreamCaptureStatusNone
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define gpuGraphInstantiate(exec, graph, flags) hipGraphInstantiate(exec, graph, nullptr, nullptr, 0)
#define gpuGraphDestroy hipGraphDestroy
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphExecDestroy hipGraphExecDestroy

#elif defined(__CUDACC__) || defined(STRATA_HAVE_CUDA)

#include <cuda_runtime.h>

#define STRATA_GPU_BACKEND_NAME "cuda"

// --- types ---------------------------------------------------------------------
#define gpuError_t cudaError_t
#define gpuStream_t cudaStream_t
#define gpuEvent_t cudaEvent_t
#define gpuDeviceProp_t cudaDeviceProp
#define gpuPointerAttributes cudaPointerAttributes
#define gpuIpcMemHandle_t cudaIpcMemHandle_t
#define gpuIpcEventHandle_t cudaIpcEventHandle_t
#define gpuFuncAttributes cudaFuncAttributes
#define gpuDeviceptr_t void*
#define gpuMemcpyKind cudaMemcpyKind

// --- error codes and messages ------------------------------------------------------
#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuErrorInvalidValue cudaErrorInvalidValue
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuGetLastError cudaGetLastError
#define gpuPeekAtLastError cudaPeekAtLastError

// --- devices -------------------------------------------------------------------------
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuSetDevice cudaSetDevice
#define gpuGetDevice cudaGetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuDevAttrMaxThreadsPerBlock cudaDevAttrMaxThreadsPerBlock
#define gpuDevAttrMaxBlockDimX cudaDevAttrMaxBlockDimX
#define gpuDevAttrMaxBlockDimY cudaDevAttrMaxBlockDimY
#define gpuDevAttrMaxBlockDimZ cudaDevAttrMaxBlockDimZ
#define gpuDevAttrMaxGridDimX cudaDevAttrMaxGridDimX
#define gpuDevAttrMaxGridDimY cudaDevAttrMaxGridDimY
#define gpuDevAttrMaxGridDimZ cudaDevAttrMaxGridDimZ
#define gpuDevAttrWarpSize cudaDevAttrWarpSize
#define gpuDevAttrMaxSharedMemoryPerBlock cudaDevAttrMaxSharedMemoryPerBlock

// --- streams and events ------------------------------------------------------------------
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamQuery cudaStreamQuery
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDefault cudaStreamDefault
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventQuery cudaEventQuery
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDefault cudaEventDefault
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuEventInterprocess cudaEventInterprocess

// --- memory ------------------------------------------------------------------------------
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocManaged cudaMallocManaged
#define gpuMemAttachGlobal cudaMemAttachGlobal
#define gpuHostAlloc cudaHostAlloc
#define gpuFreeHost cudaFreeHost
#define gpuHostAllocDefault cudaHostAllocDefault
#define gpuHostAllocPortable cudaHostAllocPortable
#define gpuHostAllocMapped cudaHostAllocMapped
#define gpuHostRegister cudaHostRegister
#define gpuHostUnregister cudaHostUnregister
#define gpuHostRegisterDefault cudaHostRegisterDefault
#define gpuHostRegisterPortable cudaHostRegisterPortable
#define gpuHostRegisterMapped cudaHostRegisterMapped
#define gpuHostGetDevicePointer cudaHostGetDevicePointer
#define gpuPointerGetAttributes cudaPointerGetAttributes
// No runtime equivalent of gpuMemGetAddressRange on CUDA: gpu_runtime.cu
// reaches the driver's range query through cudaGetDriverEntryPoint*.
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpy2DAsync cudaMemcpy2DAsync
#define gpuMemcpy3DAsync cudaMemcpy3DAsync
#define gpuMemcpy3DParms cudaMemcpy3DParms
#define make_gpuPitchedPtr make_cudaPitchedPtr
#define make_gpuExtent make_cudaExtent
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyDefault cudaMemcpyDefault
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice

// --- IPC ---------------------------------------------------------------------------------
#define gpuIpcGetMemHandle cudaIpcGetMemHandle
#define gpuIpcOpenMemHandle cudaIpcOpenMemHandle
#define gpuIpcCloseMemHandle cudaIpcCloseMemHandle
#define gpuIpcGetEventHandle cudaIpcGetEventHandle
#define gpuIpcOpenEventHandle cudaIpcOpenEventHandle
#define gpuIpcMemLazyEnablePeerAccess cudaIpcMemLazyEnablePeerAccess

// --- kernels (launch with <<<grid, block, shmem, stream>>>, valid in both) ---------------
#define gpuFuncGetAttributes cudaFuncGetAttributes
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuOccupancyMaxPotentialBlockSize cudaOccupancyMaxPotentialBlockSize

// --- graphs ------------------------------------------------------------------------------
#define gpuGraph_t cudaGraph_t
#define gpuGraphExec_t cudaGraphExec_t
#define gpuStreamBeginCapture cudaStreamBeginCapture
#define gpuStreamIsCapturing cudaStreamIsCapturing
#define gpuStreamCaptureStatus cudaStreamCaptureStatus
#define gpuStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define gpuGraphInstantiate(exec, graph, flags) cudaGraphInstantiate(exec, graph, flags)
#define gpuGraphDestroy cudaGraphDestroy
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphExecDestroy cudaGraphExecDestroy

#else
#error "portability/gpu/runtime_names.hpp: compile with hipcc, nvcc or STRATA_HAVE_CUDA"
#endif
