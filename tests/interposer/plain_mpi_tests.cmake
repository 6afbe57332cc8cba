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
strata_add_test_variant(NAME test_mpi_p2p_np3_preload_always TARGET test_mpi_p2p NP 3 TIMEOUT 120 PRELOAD
                        LABELS interposer ENV STRATA_HOST_PACK=always)

# The random datatype corpus through MPI_Pack/MPI_Unpack and self-messages,
# against PMPI_Pack/PMPI_Unpack (random_datatype links only MPI).
strata_add_test(NAME test_mpi_pack_random SOURCES test_mpi_pack_random.cpp PLAIN_MPI NP 2 TIMEOUT 180
                LIBS strata_test_main strata_random_datatype LABELS interposer PRELOAD)
strata_add_test_variant(NAME test_mpi_pack_random_preload_always TARGET test_mpi_pack_random NP 2 TIMEOUT 180
                        PRELOAD LABELS interposer ENV STRATA_HOST_PACK=always STRATA_TEST_EXPECT_PACKING=1)
