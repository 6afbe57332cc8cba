# Build switches. The four accelerator/back-end switches take AUTO (use it when
# found), ON (fail when missing) or OFF; the CPU-only build always works.
set(_strata_tristate AUTO ON OFF)
foreach(_feature CUDA HIP KOKKOS NCCL)
  set(STRATA_ENABLE_${_feature} AUTO CACHE STRING "Build the ${_feature} parts: AUTO, ON or OFF")
  set_property(CACHE STRATA_ENABLE_${_feature} PROPERTY STRINGS ${_strata_tristate})
  string(TOUPPER "${STRATA_ENABLE_${_feature}}" _value)
  if(NOT _value IN_LIST _strata_tristate)
    message(FATAL_ERROR "STRATA_ENABLE_${_feature}=${STRATA_ENABLE_${_feature}}: use AUTO, ON or OFF")
  endif()
  set(STRATA_ENABLE_${_feature} "${_value}")
endforeach()

option(STRATA_BUILD_TESTS "Build the GoogleTest suites" ON)
option(STRATA_BUILD_BENCH "Build the benchmarks" ON)
option(STRATA_BUILD_APPS "Build the proxy apps" ON)
set(STRATA_GTEST_SOURCE_DIR "" CACHE PATH
    "Build GoogleTest from this source folder (e.g. a carried /usr/src/googletest) instead of find_package")
set(STRATA_TEST_TIMEOUT 300 CACHE STRING "Default ctest timeout in seconds for one test")

# A feature is wanted when ON, or AUTO and found.
function(strata_resolve_feature feature found)
  if(STRATA_ENABLE_${feature} STREQUAL "ON" AND NOT ${found})
    message(FATAL_ERROR "STRATA_ENABLE_${feature}=ON but ${feature} was not found")
  endif()
  if(NOT STRATA_ENABLE_${feature} STREQUAL "OFF" AND ${found})
    set(STRATA_HAVE_${feature} ON PARENT_SCOPE)
  else()
    set(STRATA_HAVE_${feature} OFF PARENT_SCOPE)
  endif()
endfunction()
