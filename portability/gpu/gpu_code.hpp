// Does the program carry GPU code of its own? Asked at MPI_Init, before the
// program may have touched a GPU (most MPI programs pick their device after
// MPI_Init, from their node-local rank), by policies that must not make a
// GPU context for a host-only program (the device-direct transport's auto).
#pragma once

#include <string>

namespace strata::gpu {

// True where a GPU runtime library is loaded (libcudart, libamdhip64) or a
// loaded object holds device code (a .nv_fatbin or .hip_fatbin section),
// not counting what Strata loads itself whatever the program (its own
// library, NCCL/RCCL, the GPU driver; in a HIP build the HIP runtime). Reads the loaded objects' section
// headers; makes no GPU call. `what` (may be null) names the first object
// that answered.
bool process_carries_gpu_code(std::string* what = nullptr) noexcept;

// Is this a GPU program, as STRATA_GPU_PROGRAM says: `on` yes, `off` no,
// `auto` (the default) where it shows GPU use at MPI_Init: the launcher
// bound GPUs to it (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES,
// ROCR_VISIBLE_DEVICES), a GPU context of its process is live, or it
// carries GPU code (above). The context's state is asked of the driver
// (which starts it, but makes no context). A host program run with the
// preload on a GPU node is not one: its job is then a host job (its
// communicators left to the library from the start, its host collectives
// passed from the exported function, no device-direct transport). `why`
// (may be null) says what decided.
bool uses_gpus(std::string* why = nullptr) noexcept;

}  // namespace strata::gpu
