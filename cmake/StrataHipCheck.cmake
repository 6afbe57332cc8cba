# strata_hip_compile_check(NAME target TARGET library SOURCES src... DEPENDS header...)
#
# Debian's hipcc compiles device sources for MI250X (gfx90a). Here it is a
# compile-only check (no ROCm runtime to link or run against): the target
# is part of `all`, so the build fails when a source stops compiling for HIP.
# The sources see the include path of the library they belong to (TARGET),
# as its own sources do (cmake/StrataLayers.cmake). hipcc writes the
# headers each source included (a depfile), so a change to any of them
# reruns the check; DEPENDS adds files it must wait for besides.
function(strata_hip_compile_check)
  cmake_parse_arguments(H "" "NAME;TARGET" "SOURCES;DEPENDS" ${ARGN})
  set(objects)
  foreach(src IN LISTS H_SOURCES)
    get_filename_component(name ${src} NAME_WE)
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/hip_check/${name}.o)
    add_custom_command(OUTPUT ${obj}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/hip_check
      COMMAND ${STRATA_HIPCC} -x hip --offload-arch=gfx90a -std=c++17 -O2 -fPIC
              "-I$<JOIN:$<TARGET_PROPERTY:${H_TARGET},INCLUDE_DIRECTORIES>,;-I>"
              -MD -MF ${obj}.d -c ${CMAKE_CURRENT_SOURCE_DIR}/${src} -o ${obj}
      DEPENDS ${src} ${H_DEPENDS}
      DEPFILE ${obj}.d
      COMMAND_EXPAND_LISTS
      COMMENT "hipcc --offload-arch=gfx90a ${src} (compile check)")
    list(APPEND objects ${obj})
  endforeach()
  add_custom_target(${H_NAME} ALL DEPENDS ${objects})
endfunction()
