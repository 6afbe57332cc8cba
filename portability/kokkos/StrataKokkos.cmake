# Installed next to StrataConfig.cmake, which includes it. Strata::kokkos is
# defined when this installation was built with Kokkos and the consumer
# either found Kokkos itself first (a Kokkos::kokkos target exists) or asks
# for it: find_package(Strata COMPONENTS kokkos). Other consumers never
# search for Kokkos.
if(NOT EXISTS "${CMAKE_CURRENT_LIST_DIR}/StrataKokkosTargets.cmake")
  return()
endif()
if(NOT TARGET Kokkos::kokkos AND "kokkos" IN_LIST Strata_FIND_COMPONENTS)
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
if(TARGET Kokkos::kokkos AND NOT TARGET Strata::kokkos)
  include("${CMAKE_CURRENT_LIST_DIR}/StrataKokkosTargets.cmake")
endif()
if(TARGET Strata::kokkos)
  set(Strata_kokkos_FOUND TRUE)
endif()
