# The linked library and the installable CMake package:
#   find_package(Strata) -> Strata::strata (libstrata.so) and
#   Strata::preload (libstrata_preload.so, for LD_PRELOAD).
# libstrata.so carries the public API (include/strata) over the folder
# libraries; only STRATA_API symbols are exported.
#
# Its parts are the libraries that strata_add_library() registered
# (cmake/StrataLayers.cmake), less the Kokkos layer, which sits on it: their
# objects, each once, and the libraries themselves for their own link
# requirements (MPI, threads, dl, hwloc, the CUDA runtime). Linked after
# their own objects, the archives add no member (every symbol they define
# is already defined); a new part or a new dependency of one needs no line
# here.
get_property(_strata_parts GLOBAL PROPERTY STRATA_LIBSTRATA_PARTS)
set(_strata_part_objects)
foreach(_part IN LISTS _strata_parts)
  list(APPEND _strata_part_objects $<TARGET_OBJECTS:${_part}>)
endforeach()
add_library(strata SHARED ${_strata_part_objects})
target_link_libraries(strata PUBLIC MPI::MPI_C PRIVATE ${_strata_parts})
target_compile_definitions(strata INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
target_include_directories(strata PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_options(strata PRIVATE -Wl,--no-undefined)
set_target_properties(strata PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
add_library(Strata::strata ALIAS strata)

include(CMakePackageConfigHelpers)
install(TARGETS strata EXPORT StrataTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS strata_preload EXPORT StrataTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/strata DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/interposer/shim/strata_preload.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata)
install(EXPORT StrataTargets NAMESPACE Strata:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/StrataConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/StrataConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/StrataConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/StrataConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/StrataConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
# strata.pc for pkg-config users (Makefiles). The prefix is the one given at
# configure time (CMAKE_INSTALL_PREFIX); `cmake --install --prefix` elsewhere
# needs PKG_CONFIG's --define-variable=prefix=... (tests/package does that).
configure_file(${PROJECT_SOURCE_DIR}/cmake/strata.pc.in ${CMAKE_CURRENT_BINARY_DIR}/strata.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/strata.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
