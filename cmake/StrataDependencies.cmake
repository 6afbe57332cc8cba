# Finds what Strata builds against. MPI is required; everything else optional.
find_package(MPI REQUIRED COMPONENTS C)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.9 QUIET)
find_package(CLI11 QUIET CONFIG)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
endif()

# Which MPI: the interposer's ABI differs (MPI_Datatype is a pointer in Open MPI
# and an int in MPICH), so we record it for the docs and the tests.
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
check_symbol_exists(OPEN_MPI "mpi.h" STRATA_MPI_IS_OPENMPI)
check_symbol_exists(MPICH "mpi.h" STRATA_MPI_IS_MPICH)
unset(CMAKE_REQUIRED_INCLUDES)
if(STRATA_MPI_IS_OPENMPI)
  set(STRATA_MPI_FLAVOR "Open MPI")
elseif(STRATA_MPI_IS_MPICH)
  set(STRATA_MPI_FLAVOR "MPICH")
else()
  set(STRATA_MPI_FLAVOR "unknown MPI")
endif()
find_program(STRATA_MPIEXEC NAMES ${MPIEXEC_EXECUTABLE} mpiexec mpirun)

# CUDA: detected by a working nvcc; only compiled, never required.
set(_cuda_found OFF)
if(NOT STRATA_ENABLE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_cuda_found ON)
  endif()
endif()
strata_resolve_feature(CUDA _cuda_found)
if(STRATA_HAVE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()

# HIP: Debian's hipcc compiles for gfx90a.
set(_hip_found OFF)
if(NOT STRATA_ENABLE_HIP STREQUAL "OFF")
  find_program(STRATA_HIPCC hipcc)
  if(STRATA_HIPCC)
    set(_hip_found ON)
  endif()
endif()
strata_resolve_feature(HIP _hip_found)

# NCCL: header and library, from the CUDA toolkit or the system.
set(_nccl_found OFF)
if(NOT STRATA_ENABLE_NCCL STREQUAL "OFF")
  find_path(STRATA_NCCL_INCLUDE_DIR nccl.h HINTS /usr/local/cuda/include /usr/include)
  find_library(STRATA_NCCL_LIBRARY nccl HINTS /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu)
  if(STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY)
    set(_nccl_found ON)
  endif()
endif()
strata_resolve_feature(NCCL _nccl_found)

# Kokkos: Debian ships Trilinos' 3.4.01 whose target points at a missing
# include folder; repair it after find_package.
set(_kokkos_found OFF)
if(NOT STRATA_ENABLE_KOKKOS STREQUAL "OFF")
  find_package(Kokkos QUIET)
  if(Kokkos_FOUND)
    set(_kokkos_found ON)
    if(TARGET Kokkos::kokkos AND Kokkos_INCLUDE_DIRS)
      set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
    endif()
  endif()
endif()
strata_resolve_feature(KOKKOS _kokkos_found)

function(strata_print_summary)
  message(STATUS "Strata ${PROJECT_VERSION}: MPI=${STRATA_MPI_FLAVOR} (${MPI_C_VERSION})"
                 " CUDA=${STRATA_HAVE_CUDA} HIP=${STRATA_HAVE_HIP} NCCL=${STRATA_HAVE_NCCL}"
                 " KOKKOS=${STRATA_HAVE_KOKKOS} hwloc=${HWLOC_FOUND}")
endfunction()
