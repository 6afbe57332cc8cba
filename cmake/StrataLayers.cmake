# The layers of docs/architecture.md as CMake targets (issue 24; the
# section "How the build holds the layers" there says why it is built so).
#
#   strata_add_library(<target> LAYER <folder> [NO_MPI] [NOT_IN_LIBSTRATA]
#                      SOURCES ...)
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
# strata_check_layers() holds the links to the chain of docs/architecture.md
# (the line that starts with "base"; tests/architecture reads the same
# line), at configure time: a library may link libraries of its own layer and
# of the layers to its left only (a layer's neighbour in its group is not to
# its left), a NO_MPI library nothing that reaches MPI, and none may put the
# source tree itself or another layer's root on its include path. So the
# compile failure cannot be "fixed" by a link or an include folder that
# breaks the rule.
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
  cmake_parse_arguments(A "NO_MPI;NOT_IN_LIBSTRATA" "LAYER" "SOURCES" ${ARGN})
  if(NOT A_LAYER OR A_LAYER MATCHES "/" OR NOT IS_DIRECTORY "${PROJECT_SOURCE_DIR}/${A_LAYER}")
    message(FATAL_ERROR "strata_add_library(${target}): LAYER must name a top folder of the source tree")
  endif()
  set(root "${PROJECT_BINARY_DIR}/layers/${A_LAYER}")
  strata_include_root("${root}" ${A_LAYER})
  add_library(${target} STATIC ${A_SOURCES})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<BUILD_INTERFACE:${root}>)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:strata_warnings>)
  set_target_properties(${target} PROPERTIES STRATA_LAYER ${A_LAYER} STRATA_NO_MPI "${A_NO_MPI}")
  set_property(GLOBAL APPEND PROPERTY STRATA_LIBRARY_TARGETS ${target})
  if(NOT A_NOT_IN_LIBSTRATA)
    set_property(GLOBAL APPEND PROPERTY STRATA_LIBSTRATA_PARTS ${target})
  endif()
endfunction()

# The targets a library links directly (PRIVATE and PUBLIC), generator
# expressions of the kind the build uses ($<BUILD_INTERFACE:x>,
# $<LINK_ONLY:x>) reduced to their target.
function(_strata_direct_links target out)
  get_target_property(links ${target} LINK_LIBRARIES)
  set(names)
  foreach(item IN LISTS links)
    string(REGEX REPLACE "^\\$<(BUILD_INTERFACE|LINK_ONLY):(.*)>$" "\\2" item "${item}")
    if(item AND NOT item MATCHES "^\\$<")
      list(APPEND names ${item})
    endif()
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# The chain "base  <-  mpi  <-  ...  <-  apps, tools, bench" of
# docs/architecture.md: STRATA_LAYER_RANK_<folder> in the caller's scope.
function(_strata_read_chain)
  set(doc "${PROJECT_SOURCE_DIR}/docs/architecture.md")
  set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${doc}")
  file(STRINGS "${doc}" lines REGEX "^base .*<-")
  list(LENGTH lines n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "docs/architecture.md: expected one line 'base  <-  ...' (the layer chain), found ${n}")
  endif()
  string(REPLACE "<-" ";" groups "${lines}")
  set(rank 0)
  foreach(group IN LISTS groups)
    string(REPLACE "," ";" folders "${group}")
    foreach(folder IN LISTS folders)
      string(STRIP "${folder}" folder)
      if(folder)
        set(STRATA_LAYER_RANK_${folder} ${rank} PARENT_SCOPE)
      endif()
    endforeach()
    math(EXPR rank "${rank} + 1")
  endforeach()
endfunction()

# Does <target> reach MPI (strata_mpi or MPI::MPI_C) through its links?
function(_strata_reaches_mpi target out)
  set(seen ${target})
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo t)
    if(t STREQUAL "strata_mpi" OR t MATCHES "^MPI::")
      set(${out} ON PARENT_SCOPE)
      return()
    endif()
    if(TARGET ${t})
      get_target_property(imported ${t} IMPORTED)
      get_target_property(type ${t} TYPE)
      if(imported OR type STREQUAL "INTERFACE_LIBRARY")
        get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
      else()
        _strata_direct_links(${t} links)
      endif()
      foreach(l IN LISTS links)
        if(l AND NOT l IN_LIST seen)
          list(APPEND seen ${l})
          list(APPEND todo ${l})
        endif()
      endforeach()
    endif()
  endwhile()
  set(${out} OFF PARENT_SCOPE)
endfunction()

function(strata_check_layers)
  _strata_read_chain()
  get_property(libraries GLOBAL PROPERTY STRATA_LIBRARY_TARGETS)
  set(errors)
  foreach(t IN LISTS libraries)
    get_target_property(layer ${t} STRATA_LAYER)
    if(NOT DEFINED STRATA_LAYER_RANK_${layer})
      list(APPEND errors "${t}: folder ${layer}/ is not in the chain of docs/architecture.md")
      continue()
    endif()
    _strata_direct_links(${t} links)
    foreach(d IN LISTS links)
      if(NOT d IN_LIST libraries)
        continue()  # a third-party library or an interface target
      endif()
      get_target_property(dlayer ${d} STRATA_LAYER)
      if(NOT dlayer STREQUAL layer AND NOT STRATA_LAYER_RANK_${dlayer} LESS STRATA_LAYER_RANK_${layer})
        list(APPEND errors "${t} (${layer}/) links ${d} (${dlayer}/): a folder uses the folders to its left only")
      endif()
    endforeach()
    get_target_property(no_mpi ${t} STRATA_NO_MPI)
    if(no_mpi)
      _strata_reaches_mpi(${t} mpi)
      if(mpi)
        list(APPEND errors "${t} (${layer}/) reaches MPI through its links, and is marked NO_MPI")
      endif()
    endif()
    get_target_property(dirs ${t} INCLUDE_DIRECTORIES)
    foreach(dir IN LISTS dirs)
      string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" dir "${dir}")
      string(REGEX REPLACE "/$" "" dir "${dir}")
      string(FIND "${dir}/" "${PROJECT_BINARY_DIR}/layers/" at)
      if(dir STREQUAL PROJECT_SOURCE_DIR OR (at EQUAL 0 AND NOT dir STREQUAL "${PROJECT_BINARY_DIR}/layers/${layer}"))
        list(APPEND errors "${t}: include folder ${dir} (another layer's headers come only through its targets)")
      endif()
    endforeach()
  endforeach()
  if(errors)
    list(JOIN errors "\n  " text)
    message(FATAL_ERROR "The libraries' links break the layers of docs/architecture.md:\n  ${text}")
  endif()
  list(LENGTH libraries n)
  message(STATUS "Strata layers: ${n} libraries, links checked against docs/architecture.md")
endfunction()
