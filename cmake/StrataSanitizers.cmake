# STRATA_SANITIZE: build every target (libraries, the preload library, tests,
# apps) with a sanitizer. "address" means AddressSanitizer + UndefinedBehavior-
# Sanitizer, "thread" ThreadSanitizer; any report aborts the process (tests fail).
#
# Under LD_PRELOAD the sanitizer runtime must come first in the process's
# library list (AddressSanitizer checks it), so the preload tests put the
# compiler's runtime in front of libstrata_preload.so: STRATA_SANITIZER_PRELOAD.
# The MPI library itself is not instrumented: its own leaks and its threads'
# accesses are suppressed by tests/sanitizers/*.supp, nothing of ours is.
set(STRATA_SANITIZE "" CACHE STRING "Sanitizer build: empty, address (ASan+UBSan) or thread (TSan)")
set_property(CACHE STRATA_SANITIZE PROPERTY STRINGS "" address thread)
set(STRATA_SANITIZER_PRELOAD "")
set(STRATA_SANITIZER_ENV "")
set(STRATA_TEST_TIMEOUT_SCALE 1)  # instrumented tests run several times slower

# STRATA_BUILD_FUZZERS (clang only): the libFuzzer targets, with coverage
# instrumentation of everything they link.
option(STRATA_BUILD_FUZZERS "Build the libFuzzer targets (needs clang)" OFF)
if(STRATA_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "STRATA_BUILD_FUZZERS needs clang (CC=clang CXX=clang++)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(STRATA_SANITIZE STREQUAL "")
  return()
endif()

set(_supp ${PROJECT_SOURCE_DIR}/tests/sanitizers)
if(STRATA_SANITIZE STREQUAL "address")
  set(_flags -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  set(_runtime libasan.so)
  set(STRATA_SANITIZER_ENV
      "ASAN_OPTIONS=detect_leaks=1:exitcode=23:detect_odr_violation=0:verify_asan_link_order=0"
      # use_tls=0: GCC 12's LeakSanitizer crashes walking the dynamic TLS of
      # Open MPI's dlopen-ed components (test_mpi_alltoall); without TLS as
      # a root it can only report more leaks, never hide one.
      "LSAN_OPTIONS=suppressions=${_supp}/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0:use_tls=0"
      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
elseif(STRATA_SANITIZE STREQUAL "thread")
  set(_flags -fsanitize=thread -fno-omit-frame-pointer)
  set(_runtime libtsan.so)
  set(STRATA_SANITIZER_ENV
      "TSAN_OPTIONS=suppressions=${_supp}/tsan.supp:exitcode=23:halt_on_error=1:second_deadlock_stack=1")
else()
  message(FATAL_ERROR "STRATA_SANITIZE=${STRATA_SANITIZE}: use address or thread")
endif()
# Without hwloc's PCI backend. More ranks than cores are not bound by
# mpirun, so every Open MPI rank discovers the machine with hwloc in
# MPI_Init, and the PCI backend reads pci.ids through libpciaccess, which
# grows its device tables one realloc per entry: glibc resizes large blocks
# in place (mremap), the sanitizer allocators copy them (and ASan unmaps
# the old ones through its quarantine), about 15 s per MPI_Init on 4 ranks
# of 2 cores instead of 0.5 s. No test here needs PCI objects (CPU builds).
list(APPEND STRATA_SANITIZER_ENV "HWLOC_COMPONENTS=-pci")
if(STRATA_ENABLE_CUDA STREQUAL "ON" OR STRATA_ENABLE_HIP STREQUAL "ON")
  message(FATAL_ERROR "STRATA_SANITIZE is a CPU build: set STRATA_ENABLE_CUDA=OFF and STRATA_ENABLE_HIP=OFF")
endif()
set(STRATA_ENABLE_CUDA OFF)
set(STRATA_ENABLE_HIP OFF)
set(STRATA_TEST_TIMEOUT_SCALE 3)
add_compile_options(${_flags})  # C and C++ only: CUDA and HIP are off here
add_link_options(${_flags})
# GCC links its sanitizer runtime as a shared library, which the preload
# tests can put first; clang links it statically into executables (the
# fuzzer build), where there is nothing to preload.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_runtime}
                  OUTPUT_VARIABLE STRATA_SANITIZER_PRELOAD OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS "${STRATA_SANITIZER_PRELOAD}")
    message(FATAL_ERROR "STRATA_SANITIZE=${STRATA_SANITIZE}: ${_runtime} not found by ${CMAKE_CXX_COMPILER}")
  endif()
  if(STRATA_SANITIZE STREQUAL "address")
    # Every rank of an MPI test also preloads keep_loaded: the MPI library's
    # components stay mapped until the leak check at exit (see the file).
    add_library(strata_keep_loaded SHARED ${_supp}/keep_loaded.c)
    string(APPEND STRATA_SANITIZER_PRELOAD ":$<TARGET_FILE:strata_keep_loaded>")
  endif()
endif()
message(STATUS "Strata: sanitizer build (${STRATA_SANITIZE}), preload runtime ${STRATA_SANITIZER_PRELOAD}")
