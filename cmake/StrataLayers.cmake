# The layers of docs/architecture.md as CMake targets (issue 24).
#
#   strata_add_library(<target> LAYER <folder> [NOT_IN_LIBSTRATA] SOURCES ...)
#
# makes one static library of a layer folder (or of one of its wrapped
# third-party parts); LAYER is the top folder (collectives for
# collectives/nccl). Its include path holds exactly two Strata folders,
# both PUBLIC (BUILD_INTERFACE):
#   include/                            the public API (<strata/...>)
#   ${PROJECT_BINARY_DIR}/layers/<L>/   the layer's include root: one
#                                       symbolic link, <L> -> the source folder
# Headers are included from the project root ("fault/hooks.hpp"), and the
# project root is on no library's include path: a target reaches another
# layer's headers only through that layer's root, so only by linking one of
# its targets (PUBLIC where its own headers include the other layer's, else
# PRIVATE). An include of a layer the target does not link fails to compile.
#
# libstrata.so is composed from the libraries registered here, less those
# marked NOT_IN_LIBSTRATA (cmake/StrataPackage.cmake).

# <root> gets one symbolic link per <folder> (a path relative to the project
# root, e.g. portability/numeric), at the same relative path.
function(strata_include_root root)
  foreach(folder IN LISTS ARGN)
    get_filename_component(parent "${root}/${folder}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${root}/${folder}" SYMBOLIC)
  endforeach()
endfunction()

function(strata_add_library target)
  cmake_parse_arguments(A "NOT_IN_LIBSTRATA" "LAYER" "SOURCES" ${ARGN})
  if(NOT A_LAYER OR A_LAYER MATCHES "/" OR NOT IS_DIRECTORY "${PROJECT_SOURCE_DIR}/${A_LAYER}")
    message(FATAL_ERROR "strata_add_library(${target}): LAYER must name a top folder of the source tree")
  endif()
  set(root "${PROJECT_BINARY_DIR}/layers/${A_LAYER}")
  strata_include_root("${root}" ${A_LAYER})
  add_library(${target} STATIC ${A_SOURCES})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<BUILD_INTERFACE:${root}>)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:strata_warnings>)
  if(NOT A_NOT_IN_LIBSTRATA)
    set_property(GLOBAL APPEND PROPERTY STRATA_LIBSTRATA_PARTS ${target})
  endif()
endfunction()
