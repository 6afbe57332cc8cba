# Unity builds (CMAKE_UNITY_BUILD=ON): dev/quality.sh's checking builds and
# the compile database of its clang-tidy stage compile the sources of each
# target in batches, which parses the common headers once per batch instead
# of once per file. The main build of dev/run and a plain `cmake -B build`
# are not unity builds, so a file that misses an #include still fails there.
#
# These files stay out of the batches: each defines a name in an anonymous
# namespace that another file of its target defines too. A new collision
# fails a unity build with "redefinition of ...": rename, or list the file.
function(_strata_unity_skip dir)
  list(TRANSFORM ARGN PREPEND ${PROJECT_SOURCE_DIR}/${dir}/)
  set_source_files_properties(${ARGN} DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
                              PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
_strata_unity_skip(fault agent/scanner.cpp agent/agent_messages.cpp agent/agent_policy.cpp)
_strata_unity_skip(collectives p2p_api.cpp job_facts.cpp)
_strata_unity_skip(collectives/host flat_recursive.cpp flat_ring.cpp hierarchical_leaders.cpp)
_strata_unity_skip(interposer handlers/routed_exchange.cpp model/device_model.cpp)
_strata_unity_skip(tools measure/device_measure.cpp)
if(STRATA_BUILD_BENCH)
  _strata_unity_skip(bench/pack device.cpp)
endif()
# Generated sources too: clang-tidy checks the tree's own sources, and
# version.cpp is written at build time, after clang-tidy reads the batches.
set_source_files_properties(${PROJECT_BINARY_DIR}/tools/cli/version.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/tools
                            PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
set_source_files_properties(${PROJECT_BINARY_DIR}/interposer/reference_host_model.cpp
                            DIRECTORY ${PROJECT_SOURCE_DIR}/interposer PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

# A batch #includes .cpp files on purpose: not a finding of clang-tidy's
# bugprone-suspicious-include there (it still checks the sources themselves).
function(_strata_unity_nolint dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    set_property(TARGET ${target} PROPERTY UNITY_BUILD_CODE_BEFORE_INCLUDE
                 "// NOLINTNEXTLINE(bugprone-suspicious-include)")
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _strata_unity_nolint(${subdir})
  endforeach()
endfunction()
_strata_unity_nolint(${PROJECT_SOURCE_DIR})
