// The MPI functions Strata calls but does not intercept: the second list of
// the table mechanism (the first, mpi/calls/mpi_calls.hpp, is every function
// the shim defines). mpi/real_mpi.hpp turns each line into a pointer,
// real().MPI_Comm_size, so that no code outside mpi/ names PMPI_* (the
// `architecture` test checks it). Adding a call Strata makes is one line here
// (or nothing, when the interception table has it already).
//
// X(fn)
//   fn  the MPI function; its real entry is the library's P<fn>
//
// These are queries and the bookkeeping of communicators, groups,
// attributes, datatypes and statuses: always the library's PMPI_* entry,
// never a tool's (only the data-moving calls of the interception table are
// resolved past the shim). A call that is intercepted belongs in
// mpi_calls.hpp, not here: the two lists share no name (RealMpi would not
// compile).
//
// Not here: MPI_Wtime and MPI_Wtick, which some MPIs define as macros
// (mpi::wtime() in mpi/helpers.hpp calls the library's timer instead).
//
// This header needs only <mpi.h>, and it must hold under every MPI Strata
// builds with (Open MPI, MPICH): a call only some libraries have would need
// a guarded list, as the interception table has for MPI-4 and Open MPI's
// MPIX extension.
#pragma once

#include <mpi.h>

// clang-format off

// --- communicators, groups and topologies ----------------------------------------
#define STRATA_LIBRARY_CALLS_COMM(X) \
  X(MPI_Comm_size) \
  X(MPI_Comm_rank) \
  X(MPI_Comm_remote_size) \
  X(MPI_Comm_test_inter) \
  X(MPI_Comm_group) \
  X(MPI_Comm_free) \
  X(MPI_Group_translate_ranks) \
  X(MPI_Group_incl) \
  X(MPI_Group_free) \
  X(MPI_Topo_test) \
  X(MPI_Cartdim_get) \
  X(MPI_Graph_neighbors_count) \
  X(MPI_Dist_graph_neighbors_count) \
  X(MPI_Win_shared_query)

// --- attributes and error handlers ---------------------------------------------------
#define STRATA_LIBRARY_CALLS_ATTR(X) \
  X(MPI_Comm_create_keyval) \
  X(MPI_Comm_get_attr) \
  X(MPI_Comm_set_attr) \
  X(MPI_Comm_delete_attr) \
  X(MPI_Comm_set_errhandler) \
  X(MPI_Comm_call_errhandler) \
  X(MPI_Win_call_errhandler) \
  X(MPI_File_call_errhandler)

// --- datatypes ----------------------------------------------------------------------------
#define STRATA_LIBRARY_CALLS_TYPE(X) \
  X(MPI_Type_size) \
  X(MPI_Type_size_x) \
  X(MPI_Type_get_extent) \
  X(MPI_Type_get_true_extent) \
  X(MPI_Type_get_envelope) \
  X(MPI_Type_get_contents) \
  X(MPI_Type_contiguous) \
  X(MPI_Type_create_hvector) \
  X(MPI_Type_create_resized) \
  X(MPI_Get_address)

// --- statuses and generalized requests ----------------------------------------------------
#define STRATA_LIBRARY_CALLS_STATUS(X) \
  X(MPI_Get_count) \
  X(MPI_Status_set_elements) \
  X(MPI_Status_set_cancelled) \
  X(MPI_Test_cancelled) \
  X(MPI_Grequest_start) \
  X(MPI_Grequest_complete)

// --- the environment ------------------------------------------------------------------------
#define STRATA_LIBRARY_CALLS_ENV(X) \
  X(MPI_Initialized) \
  X(MPI_Finalized) \
  X(MPI_Query_thread) \
  X(MPI_Get_processor_name) \
  X(MPI_Get_library_version) \
  X(MPI_Error_string)

// Every call Strata makes without intercepting it.
#define STRATA_LIBRARY_CALLS(X) \
  STRATA_LIBRARY_CALLS_COMM(X) \
  STRATA_LIBRARY_CALLS_ATTR(X) \
  STRATA_LIBRARY_CALLS_TYPE(X) \
  STRATA_LIBRARY_CALLS_STATUS(X) \
  STRATA_LIBRARY_CALLS_ENV(X)

// clang-format on
