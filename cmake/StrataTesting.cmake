# Test registration. Every test is a GoogleTest program registered with ctest,
# labelled, and run under a timeout; MPI tests run under mpirun.
#
#   strata_add_test(NAME name SOURCES ... [LIBS ...] [HEADERS_OF ...] LABELS ...
#                   [NP n] [PRELOAD] [PLAIN_MPI] [ARGS ...] [ENV VAR=VALUE ...]
#                   [TIMEOUT s])
#
# NP n       run under mpirun -np n (oversubscribed); 0 or absent: run directly
# PRELOAD    register a second variant, name_preload, with libstrata_preload.so
#            preloaded into every rank (STRATA_TEST_EXPECT_PRELOAD=1 is set so
#            the program can check that the interposer really is there)
# PLAIN_MPI  the program knows nothing of Strata: links MPI and GoogleTest only
# ENV        environment for the ranks (passed through mpirun)
# HEADERS_OF the include path (and compile definitions) of these libraries,
#            not their code: for a program whose code comes from elsewhere
#            (libstrata.so, the preload library, or none: a plain-MPI
#            program that reads the interception table). A library's headers
#            are otherwise reached only by linking it (cmake/StrataLayers.cmake).

if(STRATA_GTEST_SOURCE_DIR)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory(${STRATA_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/_gtest EXCLUDE_FROM_ALL)
  if(NOT TARGET GTest::gtest)
    add_library(GTest::gtest ALIAS gtest)
  endif()
  if(NOT TARGET GTest::gtest_main)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
else()
  find_package(GTest REQUIRED)
endif()

# Open MPI needs --oversubscribe to start more ranks than cores; MPICH's
# Hydra oversubscribes by default and rejects the flag.
if(STRATA_MPI_IS_MPICH)
  set(_strata_np_default "")
else()
  set(_strata_np_default "--oversubscribe")
endif()
set(STRATA_TEST_NP_FLAGS "${_strata_np_default}" CACHE STRING "Extra mpirun flags for the MPI tests")

# How this MPI's launcher passes an environment variable to the ranks.
if(STRATA_MPI_IS_MPICH)
  set(_strata_env_style genv)
else()
  set(_strata_env_style x)
endif()

# KEY=VALUE pairs as launcher flags: MPICH's `flag KEY VALUE` (flag -genv
# for the whole launch, -env for the program it precedes), Open MPI's
# `-x KEY=VALUE` (for the program it precedes either way).
function(_strata_env_flags out mpich_flag)
  set(args)
  foreach(kv IN LISTS ARGN)
    if(_strata_env_style STREQUAL "genv")
      string(FIND "${kv}" "=" eq)
      string(SUBSTRING "${kv}" 0 ${eq} key)
      math(EXPR vstart "${eq} + 1")
      string(SUBSTRING "${kv}" ${vstart} -1 value)
      list(APPEND args ${mpich_flag} ${key} ${value})
    else()
      list(APPEND args -x ${kv})
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

function(_strata_env_args out)
  _strata_env_flags(args -genv ${ARGN})
  set(${out} ${args} PARENT_SCOPE)
endfunction()

# The same for one program of a multi-program (MPMD, `a : b`) launch.
function(strata_app_env_args out)
  _strata_env_flags(args -env ${ARGN})
  set(${out} ${args} PARENT_SCOPE)
endfunction()

# The environment every test gets from ctest itself (for mpirun, not the ranks).
set(STRATA_TEST_LAUNCHER_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
  PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
  ${STRATA_SANITIZER_ENV})  # the ranks inherit it from mpirun

function(_strata_register name exe np preload labels timeout args envs)
  if(preload)
    # A sanitizer build puts the sanitizer runtime first (it must be first).
    if(STRATA_SANITIZER_PRELOAD)
      list(APPEND envs LD_PRELOAD=${STRATA_SANITIZER_PRELOAD}:$<TARGET_FILE:strata_preload>)
    else()
      list(APPEND envs LD_PRELOAD=$<TARGET_FILE:strata_preload>)
    endif()
    list(APPEND envs STRATA_TEST_EXPECT_PRELOAD=1)
  elseif(TARGET strata_keep_loaded AND np GREATER 0)
    list(APPEND envs LD_PRELOAD=${STRATA_SANITIZER_PRELOAD})  # the ranks keep the MPI components loaded
  endif()
  if(np GREATER 0)
    _strata_env_args(envargs ${envs})
    add_test(NAME ${name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${STRATA_TEST_NP_FLAGS}
                     ${MPIEXEC_PREFLAGS} ${envargs} $<TARGET_FILE:${exe}> ${MPIEXEC_POSTFLAGS} ${args})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${STRATA_TEST_LAUNCHER_ENV}" PROCESSORS 2)
  else()
    add_test(NAME ${name} COMMAND $<TARGET_FILE:${exe}> ${args})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${STRATA_TEST_LAUNCHER_ENV};${envs}")
  endif()
  # The build outputs the test runs: ctest reports the test "Not Run" while
  # one is missing, and dev/quality.sh builds a stage's tests from this list
  # (the command alone does not name them: ctest leaves out the command of a
  # test whose executable is not built yet).
  set(required $<TARGET_FILE:${exe}>)
  if(preload)
    list(APPEND required $<TARGET_FILE:strata_preload>)
  endif()
  if(TARGET strata_keep_loaded AND np GREATER 0)
    list(APPEND required $<TARGET_FILE:strata_keep_loaded>)
  endif()
  math(EXPR timeout "${timeout} * ${STRATA_TEST_TIMEOUT_SCALE}")
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} REQUIRED_FILES "${required}")
endfunction()

# Defaults of the parsed T_NP and T_TIMEOUT (a macro: sets the caller's).
macro(_strata_test_defaults)
  if(NOT T_NP)
    set(T_NP 0)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT ${STRATA_TEST_TIMEOUT})
  endif()
endmacro()

# <target> gets the include path and compile definitions of the libraries
# named after it, not their code (HEADERS_OF above).
function(strata_headers_of target)
  foreach(library IN LISTS ARGN)
    target_include_directories(${target} PRIVATE $<TARGET_PROPERTY:${library},INTERFACE_INCLUDE_DIRECTORIES>)
    target_compile_definitions(${target} PRIVATE $<TARGET_PROPERTY:${library},INTERFACE_COMPILE_DEFINITIONS>)
  endforeach()
endfunction()

function(strata_add_test)
  cmake_parse_arguments(T "PRELOAD;PLAIN_MPI;NO_VARIANT_PLAIN" "NAME;NP;TIMEOUT" "SOURCES;LIBS;HEADERS_OF;LABELS;ARGS;ENV" ${ARGN})
  _strata_test_defaults()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE GTest::gtest MPI::MPI_C Threads::Threads ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  strata_headers_of(${T_NAME} ${T_HEADERS_OF})
  target_precompile_headers(${T_NAME} REUSE_FROM strata_test_pch)  # tests/CMakeLists.txt
  if(NOT T_PLAIN_MPI)
    target_link_libraries(${T_NAME} PRIVATE strata_warnings)
  endif()
  if(NOT T_NO_VARIANT_PLAIN)
    _strata_register(${T_NAME} ${T_NAME} ${T_NP} OFF "${T_LABELS}" ${T_TIMEOUT} "${T_ARGS}" "${T_ENV}")
  endif()
  if(T_PRELOAD)
    _strata_register(${T_NAME}_preload ${T_NAME} ${T_NP} ON "${T_LABELS}" ${T_TIMEOUT} "${T_ARGS}" "${T_ENV}")
  endif()
endfunction()

# A second registration of an existing test program, e.g. with other options.
function(strata_add_test_variant)
  cmake_parse_arguments(T "PRELOAD" "NAME;TARGET;NP;TIMEOUT" "LABELS;ARGS;ENV" ${ARGN})
  _strata_test_defaults()
  _strata_register(${T_NAME} ${T_TARGET} ${T_NP} ${T_PRELOAD} "${T_LABELS}" ${T_TIMEOUT} "${T_ARGS}" "${T_ENV}")
endfunction()
