# Installed next to StrataConfig.cmake, which includes it: defines
# Strata::kokkos when this installation was built with Kokkos and the
# consumer's Kokkos is found. Strata stays usable without it.
if(NOT EXISTS "${CMAKE_CURRENT_LIST_DIR}/StrataKokkosTargets.cmake" OR TARGET Strata::kokkos)
  return()
endif()
if(NOT TARGET Kokkos::kokkos)
  find_package(Kokkos QUIET)
  # Debian's Trilinos Kokkos 3.4 target points at a missing include folder.
  if(TARGET Kokkos::kokkos AND Kokkos_INCLUDE_DIRS)
    get_target_property(_strata_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
    if(_strata_kokkos_inc AND NOT EXISTS "${_strata_kokkos_inc}")
      set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
    endif()
    unset(_strata_kokkos_inc)
  endif()
endif()
if(TARGET Kokkos::kokkos)
  include("${CMAKE_CURRENT_LIST_DIR}/StrataKokkosTargets.cmake")
endif()
