// The parts of test_mpi_every_call that are not collectives or point to
// point (those are call_cases.hpp's): local calls on buffers, MPI-IO, and
// the calls Strata refuses for device buffers. Each case returns "" or what
// went wrong on this rank; every rank runs every case (some are
// collective). `s.device(rank)` says whether this rank's buffers are device
// memory, `s.large_count` selects the MPI-4 fn_c forms.
#pragma once

#include "call_cases.hpp"

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

namespace every_call {

struct Case {
  std::string name;
  std::function<std::string()> run;
};

// MPI_Reduce_local (device in, inout, both), MPI_Pack/MPI_Unpack and
// MPI_Pack_external/MPI_Unpack_external ("external32") between device and
// host buffers, named and derived types, against the same calls of the
// library on host copies.
std::vector<Case> local_cases(const cases::Setting& s);

// Every data access of MPI-IO with a buffer in the setting's memory, in
// every form it has (blocking; non-blocking, completed by each completion
// call in turn; split collective _begin/_end), on files in `dir` opened on
// `comm`, against the same access by PMPI_File_* with host buffers.
std::vector<Case> file_cases(MPI_Comm comm, const std::string& dir, const cases::Setting& s);

// One-sided calls with a device origin buffer, windows and attached
// buffers in device memory, partitioned requests on device memory: each
// must fail with MPI_ERR_BUFFER (not crash); the same calls on host memory
// still work. `device` false: only the host half.
std::vector<Case> refused_cases(MPI_Comm comm, const cases::Setting& s);

// True once a one-sided case found that this MPI configuration has no
// window component (MPI_Win_allocate fails): those cases were skipped.
bool windows_missing();

// The collectives on an intercommunicator of the even and the odd ranks
// (groups of 1 and 1, 2 and 1, 2 and 2), against the PMPI_ calls on host
// ints.
std::vector<Case> intercommunicator_cases(const cases::Setting& s);

// The error class of an MPI return code.
int error_class(int rc);

}  // namespace every_call
