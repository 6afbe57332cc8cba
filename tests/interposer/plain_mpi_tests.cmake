# --- Plain-MPI programs run with and without libstrata_preload.so ---------
# They link only MPI and GoogleTest. Variants: plain (the library alone: the
# test's own proof), _preload (auto model), _preload_always (Strata packs
# every reducible type), _preload_disabled (STRATA_DISABLE=1).
add_library(strata_mpi_type_cases STATIC mpi_type_cases.cpp)
target_link_libraries(strata_mpi_type_cases PUBLIC MPI::MPI_C)

foreach(prog p2p errors alltoall threads)
  set(target test_mpi_${prog})
  strata_add_test(NAME ${target} SOURCES test_mpi_${prog}.cpp PLAIN_MPI NP 4 TIMEOUT 120
                  LIBS strata_test_main strata_mpi_type_cases LABELS interposer PRELOAD)
  strata_add_test_variant(NAME ${target}_preload_always TARGET ${target} NP 4 TIMEOUT 120 PRELOAD
                          LABELS interposer ENV STRATA_HOST_PACK=always STRATA_TEST_EXPECT_PACKING=1)
  strata_add_test_variant(NAME ${target}_preload_disabled TARGET ${target} NP 4 TIMEOUT 120 PRELOAD
                          LABELS interposer ENV STRATA_DISABLE=1 STRATA_TEST_EXPECT_PACKING=0)
endforeach()
# The threaded tests: also run under ThreadSanitizer (dev/quality.sh, tsan).
set_tests_properties(test_mpi_threads test_mpi_threads_preload test_mpi_threads_preload_always
                     test_mpi_threads_preload_disabled PROPERTIES LABELS "interposer;threads")
strata_add_test_variant(NAME test_mpi_p2p_np3_preload_always TARGET test_mpi_p2p NP 3 TIMEOUT 120 PRELOAD
                        LABELS interposer ENV STRATA_HOST_PACK=always)
# Deferred sends (interposer/transfer/deferred_sends.hpp) on the CPU: host-
# packed sends deferred too, through every completion call, and the calls
# that must flush them (test_mpi_deferred: patterns that hang if one does not).
strata_add_test_variant(NAME test_mpi_p2p_preload_deferred TARGET test_mpi_p2p NP 4 TIMEOUT 120 PRELOAD
                        LABELS interposer
                        ENV STRATA_HOST_PACK=always STRATA_DEFER_SENDS=all STRATA_TEST_EXPECT_PACKING=1
                            STRATA_TEST_EXPECT_DEFERRED=1)
strata_add_test(NAME test_mpi_deferred SOURCES test_mpi_deferred.cpp PLAIN_MPI NP 2 TIMEOUT 120
                LIBS strata_test_main LABELS interposer PRELOAD
                ENV STRATA_HOST_PACK=always STRATA_DEFER_SENDS=all STRATA_TEST_EXPECT_DEFERRED=1)

# The random datatype corpus through MPI_Pack/MPI_Unpack and self-messages,
# against PMPI_Pack/PMPI_Unpack (random_datatype links only MPI).
strata_add_test(NAME test_mpi_pack_random SOURCES test_mpi_pack_random.cpp PLAIN_MPI NP 2 TIMEOUT 180
                LIBS strata_test_main strata_random_datatype LABELS interposer PRELOAD)
strata_add_test_variant(NAME test_mpi_pack_random_preload_always TARGET test_mpi_pack_random NP 2 TIMEOUT 180
                        PRELOAD LABELS interposer ENV STRATA_HOST_PACK=always STRATA_TEST_EXPECT_PACKING=1)

# Device buffers through the preloaded interposer (an MPI that is not
# GPU-aware cannot take them alone, so there is no plain variant). One
# variant per method; several ranks per GPU with STRATA_TEST_GPUS=1.
# The device memory is CUDA's (STRATA_TEST_CUDA) on a GPU build and the
# device stand-in's (STRATA_FAKE_DEVICE, support/test_device_memory.hpp) on
# the CPU build, where the _fake variants run in CI.
if(STRATA_HAVE_CUDA)
  strata_add_test(NAME test_mpi_device SOURCES test_mpi_device.cpp PLAIN_MPI NP 2 TIMEOUT 300 NO_VARIANT_PLAIN
                  LIBS strata_test_main strata_mpi_type_cases strata_random_datatype CUDA::cudart
                  LABELS "device;gpu" PRELOAD)
  target_compile_definitions(test_mpi_device PRIVATE STRATA_TEST_CUDA=1)
  foreach(method oneshot staged span)
    foreach(np 2 4)
      strata_add_test_variant(NAME test_mpi_device_np${np}_${method} TARGET test_mpi_device NP ${np} TIMEOUT 300
                              PRELOAD LABELS "device;gpu" ENV STRATA_METHOD=${method})
    endforeach()
  endforeach()
  strata_add_test_variant(NAME test_mpi_device_np4_one_gpu TARGET test_mpi_device NP 4 TIMEOUT 300 PRELOAD
                          LABELS "device;gpu" ENV STRATA_TEST_GPUS=1)
  # Sends packed and posted by MPI_Isend itself (the default defers them to
  # the next MPI call, deferred_sends.hpp).
  strata_add_test_variant(NAME test_mpi_device_np2_no_defer TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                          LABELS "device;gpu" ENV STRATA_DEFER_SENDS=off)
  # Strided parts packed by the copy engines (strided 2D/3D copies), and by
  # the kernels alone (the default measures both and picks).
  foreach(engine copies kernels)
    strata_add_test_variant(NAME test_mpi_device_np2_${engine} TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                            LABELS "device;gpu" ENV STRATA_DEVICE_ENGINE=${engine})
  endforeach()
  strata_add_test_variant(NAME test_mpi_device_np2_staged_copies TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                          LABELS "device;gpu" ENV STRATA_DEVICE_ENGINE=copies STRATA_METHOD=staged)
else()
  strata_add_test(NAME test_mpi_device SOURCES test_mpi_device.cpp PLAIN_MPI NP 2 TIMEOUT 300 NO_VARIANT_PLAIN
                  LIBS strata_test_main strata_mpi_type_cases strata_random_datatype LABELS "interposer;device")
  strata_add_test_variant(NAME test_mpi_device_fake TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                          LABELS "interposer;device" ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=2)
  strata_add_test_variant(NAME test_mpi_device_fake_np4 TARGET test_mpi_device NP 4 TIMEOUT 300 PRELOAD
                          LABELS "interposer;device" ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=2)
  # Each method, the copy engines, sends not deferred.
  foreach(method oneshot staged span)
    strata_add_test_variant(NAME test_mpi_device_fake_${method} TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                            LABELS "interposer;device" ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=2 STRATA_METHOD=${method})
  endforeach()
  strata_add_test_variant(NAME test_mpi_device_fake_copies TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                          LABELS "interposer;device" ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=2 STRATA_DEVICE_ENGINE=copies)
  strata_add_test_variant(NAME test_mpi_device_fake_no_defer TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                          LABELS "interposer;device" ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=2 STRATA_DEFER_SENDS=off)
  # The staged pipeline in its smallest chunks (4 KiB): the random corpus's
  # messages then cross chunk boundaries too.
  strata_add_test_variant(NAME test_mpi_device_fake_staged_chunks TARGET test_mpi_device NP 2 TIMEOUT 300 PRELOAD
                          LABELS "interposer;device"
                          ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=2 STRATA_METHOD=staged
                              STRATA_PIPELINE_CHUNK=4096)
endif()

# MPI_Allreduce, Reduce_scatter_block, Allgather, Bcast, Reduce as a plain
# MPI program calls them. Host memory: plain, preloaded (the model: the
# library on one node), preloaded with a hierarchical algorithm forced on an
# emulated 3-level topology (8 ranks even, 6 and 5 uneven) and two-level,
# and disabled. Device memory (gpu): preloaded only, flat NCCL and
# hierarchical, several ranks per GPU, and without NCCL (staged).
strata_add_test(NAME test_mpi_collectives SOURCES test_mpi_collectives.cpp PLAIN_MPI NP 8 TIMEOUT 300
                LIBS strata_test_main LABELS "interposer;collectives" PRELOAD)
# A host program on a GPU node (the stand-in's GPUs, with its NCCL, in a CPU
# build): its host collectives pass from the exported function, no routing
# decision taken (before, every rank counted its GPUs and each call took
# the routed handler, with votes); the same program declared a GPU program
# (STRATA_GPU_PROGRAM=on) takes the handler.
if(NOT STRATA_HAVE_CUDA AND NOT STRATA_HAVE_HIP)
  strata_add_test_variant(NAME test_mpi_collectives_gpu_node_host_program TARGET test_mpi_collectives NP 4
                          TIMEOUT 300 PRELOAD LABELS "interposer;collectives"
                          ENV STRATA_FAKE_DEVICE=2 STRATA_TEST_EXPECT_COLLECTIVES=0 STRATA_TEST_EXPECT_DECISIONS=0)
  strata_add_test_variant(NAME test_mpi_collectives_gpu_node_gpu_program TARGET test_mpi_collectives NP 4
                          TIMEOUT 300 PRELOAD LABELS "interposer;collectives"
                          ENV STRATA_FAKE_DEVICE=2 STRATA_GPU_PROGRAM=on STRATA_TEST_EXPECT_COLLECTIVES=0
                              STRATA_TEST_EXPECT_DECISIONS=some)
endif()
foreach(np 8 6 5)
  strata_add_test_variant(NAME test_mpi_collectives_np${np}_hierarchical TARGET test_mpi_collectives NP ${np}
                          TIMEOUT 300 PRELOAD LABELS "interposer;collectives"
                          ENV STRATA_TOPOLOGY=2x2x2 STRATA_COLL_ALGO=hierarchical STRATA_TEST_EXPECT_COLLECTIVES=1)
endforeach()
strata_add_test_variant(NAME test_mpi_collectives_two_level TARGET test_mpi_collectives NP 8 TIMEOUT 300 PRELOAD
                        LABELS "interposer;collectives"
                        ENV STRATA_TOPOLOGY=2x2x2 STRATA_COLL_ALGO=two_level STRATA_TEST_EXPECT_COLLECTIVES=1)
strata_add_test_variant(NAME test_mpi_collectives_preload_disabled TARGET test_mpi_collectives NP 8 TIMEOUT 300
                        PRELOAD LABELS "interposer;collectives" ENV STRATA_DISABLE=1 STRATA_TEST_EXPECT_COLLECTIVES=0)
# Rank 0 started with another STRATA_COLL_ALGO than the others (mpirun's
# MPMD form): every rank must see that at MPI_Init and leave every
# collective to the library (without that, rank 0 ran the host ring alone
# and the job hung).
if(STRATA_SANITIZER_PRELOAD)
  set(_preload ${STRATA_SANITIZER_PRELOAD}:$<TARGET_FILE:strata_preload>)
else()
  set(_preload $<TARGET_FILE:strata_preload>)
endif()
strata_app_env_args(_rank_env LD_PRELOAD=${_preload} STRATA_TEST_EXPECT_PRELOAD=1 STRATA_TEST_EXPECT_COLLECTIVES=0)
strata_app_env_args(_ring_env STRATA_COLL_ALGO=ring)
add_test(NAME test_mpi_collectives_settings_differ
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1 ${MPIEXEC_PREFLAGS} ${_rank_env} ${_ring_env}
                 $<TARGET_FILE:test_mpi_collectives> : ${MPIEXEC_NUMPROC_FLAG} 3 ${_rank_env}
                 $<TARGET_FILE:test_mpi_collectives>)
set_tests_properties(test_mpi_collectives_settings_differ PROPERTIES
                     ENVIRONMENT "${STRATA_TEST_LAUNCHER_ENV}" PROCESSORS 2 LABELS "interposer;collectives"
                     TIMEOUT 300 REQUIRED_FILES "$<TARGET_FILE:test_mpi_collectives>;$<TARGET_FILE:strata_preload>")
if(STRATA_HAVE_CUDA)
  strata_add_test(NAME test_mpi_collectives_device SOURCES test_mpi_collectives.cpp PLAIN_MPI NP 2 TIMEOUT 300
                  NO_VARIANT_PLAIN LIBS strata_test_main CUDA::cudart LABELS "collectives;device;gpu" PRELOAD
                  ENV STRATA_TEST_EXPECT_COLLECTIVES=1)
  target_compile_definitions(test_mpi_collectives_device PRIVATE STRATA_TEST_DEVICE_MEMORY=1 STRATA_TEST_CUDA=1)
  strata_add_test_variant(NAME test_mpi_collectives_device_np4 TARGET test_mpi_collectives_device NP 4 TIMEOUT 300
                          PRELOAD LABELS "collectives;device;gpu" ENV STRATA_TEST_EXPECT_COLLECTIVES=1)
  strata_add_test_variant(NAME test_mpi_collectives_device_np4_hierarchical TARGET test_mpi_collectives_device NP 4
                          TIMEOUT 300 PRELOAD LABELS "collectives;device;gpu"
                          ENV STRATA_TOPOLOGY=1x2x2 STRATA_COLL_ALGO=hierarchical STRATA_TEST_EXPECT_COLLECTIVES=1)
  strata_add_test_variant(NAME test_mpi_collectives_device_np4_one_gpu TARGET test_mpi_collectives_device NP 4
                          TIMEOUT 300 PRELOAD LABELS "collectives;device;gpu"
                          ENV STRATA_TEST_GPUS=1 STRATA_TEST_EXPECT_COLLECTIVES=staged)
  strata_add_test_variant(NAME test_mpi_collectives_device_no_nccl TARGET test_mpi_collectives_device NP 4
                          TIMEOUT 300 PRELOAD LABELS "collectives;device;gpu"
                          ENV STRATA_NCCL_LIBRARY=/nonexistent/libnccl.so STRATA_TEST_EXPECT_COLLECTIVES=staged)
else()
  # The CPU build: device memory from the device stand-in (no NCCL there, so
  # Strata stages device collectives through host memory).
  strata_add_test(NAME test_mpi_collectives_device SOURCES test_mpi_collectives.cpp PLAIN_MPI NP 4 TIMEOUT 300
                  NO_VARIANT_PLAIN LIBS strata_test_main LABELS "interposer;collectives;device")
  target_compile_definitions(test_mpi_collectives_device PRIVATE STRATA_TEST_DEVICE_MEMORY=1)
  strata_add_test_variant(NAME test_mpi_collectives_device_fake TARGET test_mpi_collectives_device NP 4 TIMEOUT 300
                          PRELOAD LABELS "interposer;collectives;device"
                          ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=4 STRATA_TEST_EXPECT_COLLECTIVES=1)
  # Each rank sees one device, device 0, each a GPU of its own (as
  # CUDA_VISIBLE_DEVICES set per rank gives): the NCCL route, not the
  # staged one that ranks sharing a GPU get.
  strata_add_test_variant(NAME test_mpi_collectives_device_fake_own_device_0 TARGET test_mpi_collectives_device NP 4
                          TIMEOUT 300 PRELOAD LABELS "interposer;collectives;device"
                          ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=1 STRATA_FAKE_DEVICE_PER_RANK=1 STRATA_TEST_EXPECT_COLLECTIVES=nccl)
  strata_add_test_variant(NAME test_mpi_collectives_device_fake_one_device TARGET test_mpi_collectives_device NP 4
                          TIMEOUT 300 PRELOAD LABELS "interposer;collectives;device"
                          ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=1 STRATA_TEST_EXPECT_COLLECTIVES=staged)
  strata_add_test_variant(NAME test_mpi_collectives_device_fake_hierarchical TARGET test_mpi_collectives_device NP 4
                          TIMEOUT 300 PRELOAD LABELS "interposer;collectives;device"
                          ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=2 STRATA_TOPOLOGY=1x2x2 STRATA_COLL_ALGO=hierarchical
                              STRATA_TEST_EXPECT_COLLECTIVES=1)
endif()

# The exchanges (all-to-all, gather, scatter, allgatherv and v forms):
# host memory plain and preloaded (4 ranks); device memory preloaded, on the
# NCCL route as grouped sends and receives (the stand-in NCCL in the CPU
# build), and with STRATA_COLL_EXCHANGE=library (the library's call, device
# buffers staged).
strata_add_test(NAME test_mpi_exchanges SOURCES test_mpi_exchanges.cpp PLAIN_MPI NP 4 TIMEOUT 300
                LIBS strata_test_main LABELS "interposer;collectives" PRELOAD)
if(STRATA_HAVE_CUDA)
  strata_add_test(NAME test_mpi_exchanges_device SOURCES test_mpi_exchanges.cpp PLAIN_MPI NP 2 TIMEOUT 300
                  NO_VARIANT_PLAIN LIBS strata_test_main CUDA::cudart LABELS "collectives;device;gpu" PRELOAD
                  ENV STRATA_TEST_EXPECT_EXCHANGES=nccl)
  target_compile_definitions(test_mpi_exchanges_device PRIVATE STRATA_TEST_DEVICE_MEMORY=1 STRATA_TEST_CUDA=1)
  strata_add_test_variant(NAME test_mpi_exchanges_device_library TARGET test_mpi_exchanges_device NP 2 TIMEOUT 300
                          PRELOAD LABELS "collectives;device;gpu" ENV STRATA_COLL_EXCHANGE=library)
else()
  strata_add_test(NAME test_mpi_exchanges_device SOURCES test_mpi_exchanges.cpp PLAIN_MPI NP 4 TIMEOUT 300
                  NO_VARIANT_PLAIN LIBS strata_test_main LABELS "interposer;collectives;device")
  target_compile_definitions(test_mpi_exchanges_device PRIVATE STRATA_TEST_DEVICE_MEMORY=1)
  strata_add_test_variant(NAME test_mpi_exchanges_device_fake TARGET test_mpi_exchanges_device NP 4 TIMEOUT 300
                          PRELOAD LABELS "interposer;collectives;device"
                          ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=4 STRATA_TEST_EXPECT_EXCHANGES=nccl)
  strata_add_test_variant(NAME test_mpi_exchanges_device_fake_library TARGET test_mpi_exchanges_device NP 4
                          TIMEOUT 300 PRELOAD LABELS "interposer;collectives;device"
                          ENV ${_strata_fake_gpu_program} STRATA_FAKE_DEVICE=4 STRATA_COLL_EXCHANGE=library)
endif()

# STRATA_SUMMARY: a preloaded job of 3 ranks prints and writes the job's
# counters at MPI_Finalize (summary_job checks them); set on rank 0 only, no
# rank may wait in the summary's reduction (MPMD launch, as above).
add_executable(summary_job summary_job.cpp)
target_link_libraries(summary_job PRIVATE MPI::MPI_C)
set(_summary_dir ${CMAKE_CURRENT_BINARY_DIR}/summary_job_files)
add_test(NAME summary_job_clean COMMAND sh -c "rm -rf '${_summary_dir}' && mkdir -p '${_summary_dir}'")
set_tests_properties(summary_job_clean PROPERTIES FIXTURES_SETUP summary_job_dir LABELS interposer)
foreach(_case summary none)
  strata_app_env_args(_files STRATA_HOST_PACK=always STRATA_SUMMARY_JSON=${_summary_dir}/${_case}.json
                      STRATA_LOG_FILE=${_summary_dir}/${_case}.log)
  strata_app_env_args(_on STRATA_SUMMARY=1)
  if(_case STREQUAL "summary")
    set(_command ${MPIEXEC_NUMPROC_FLAG} 3 ${MPIEXEC_PREFLAGS} ${_rank_env} ${_files} ${_on} $<TARGET_FILE:summary_job>
                 ${_case})
  else()
    set(_command ${MPIEXEC_NUMPROC_FLAG} 1 ${MPIEXEC_PREFLAGS} ${_rank_env} ${_files} ${_on} $<TARGET_FILE:summary_job>
                 ${_case} : ${MPIEXEC_NUMPROC_FLAG} 2 ${_rank_env} ${_files} $<TARGET_FILE:summary_job> ${_case})
  endif()
  add_test(NAME summary_job_${_case} COMMAND ${MPIEXEC_EXECUTABLE} ${_command})
  set_tests_properties(summary_job_${_case} PROPERTIES
                       ENVIRONMENT "${STRATA_TEST_LAUNCHER_ENV}" LABELS interposer TIMEOUT 120
                       FIXTURES_REQUIRED summary_job_dir PASS_REGULAR_EXPRESSION "(^|\n)ok "
                       FAIL_REGULAR_EXPRESSION "FAILED"
                       REQUIRED_FILES "$<TARGET_FILE:summary_job>;$<TARGET_FILE:strata_preload>")
endforeach()

# MPI_Init makes no communicator in a host job (comms_at_init_job): counted
# by comm_counter, preloaded after Strata. A host program, plain and on the
# stand-in's GPU node, must make none; STRATA_P2P_IPC=on (and on the
# stand-in a GPU program) make the node's: the proof that the count works.
add_executable(comms_at_init_job comms_at_init_job.c)
target_link_libraries(comms_at_init_job PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
add_library(strata_test_comm_counter MODULE comm_counter.c)
target_link_libraries(strata_test_comm_counter PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
set_target_properties(strata_test_comm_counter PROPERTIES C_VISIBILITY_PRESET default)
set(_comms_cases host:none ipc_on:some)
if(NOT STRATA_HAVE_CUDA AND NOT STRATA_HAVE_HIP)
  list(APPEND _comms_cases fake_gpu_host_program:none fake_gpu_program:some)
endif()
foreach(_pair IN LISTS _comms_cases)
  string(REPLACE ":" ";" _pair "${_pair}")
  list(GET _pair 0 _case)
  list(GET _pair 1 _expect)
  set(_extra)
  if(_case STREQUAL "ipc_on")
    strata_app_env_args(_extra STRATA_P2P_IPC=on)
  elseif(_case STREQUAL "fake_gpu_host_program")
    strata_app_env_args(_extra STRATA_FAKE_DEVICE=2)
  elseif(_case STREQUAL "fake_gpu_program")
    strata_app_env_args(_extra STRATA_FAKE_DEVICE=2 STRATA_GPU_PROGRAM=on)
  endif()
  strata_app_env_args(_counted LD_PRELOAD=${_preload}:$<TARGET_FILE:strata_test_comm_counter>)
  add_test(NAME comms_at_init_${_case}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} ${_counted} ${_extra}
                   $<TARGET_FILE:comms_at_init_job> ${_expect})
  set_tests_properties(comms_at_init_${_case} PROPERTIES
                       ENVIRONMENT "${STRATA_TEST_LAUNCHER_ENV}" LABELS interposer TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "(^|\n)ok " FAIL_REGULAR_EXPRESSION "FAILED"
                       REQUIRED_FILES "$<TARGET_FILE:comms_at_init_job>;$<TARGET_FILE:strata_preload>")
endforeach()

# A host program under the preload never starts the GPU driver
# (gpu_driver_untouched_job): only where CUDA is built in, since elsewhere
# there is no driver to start.
if(STRATA_HAVE_CUDA)
  add_executable(gpu_driver_untouched_job gpu_driver_untouched_job.c)
  target_link_libraries(gpu_driver_untouched_job PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
  strata_app_env_args(_preloaded LD_PRELOAD=${_preload})
  add_test(NAME gpu_driver_untouched_host_program
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} ${_preloaded}
                   $<TARGET_FILE:gpu_driver_untouched_job>)
  set_tests_properties(gpu_driver_untouched_host_program PROPERTIES
                       ENVIRONMENT "${STRATA_TEST_LAUNCHER_ENV}" LABELS "interposer;gpu" TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "(^|\n)ok " FAIL_REGULAR_EXPRESSION "FAILED"
                       REQUIRED_FILES "$<TARGET_FILE:gpu_driver_untouched_job>;$<TARGET_FILE:strata_preload>")
endif()
