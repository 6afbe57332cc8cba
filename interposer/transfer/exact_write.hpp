// Writing a call's result from a host copy back into device memory without
// touching a byte the datatype skips. A program may have other operations
// writing between the blocks of one buffer while this one is in flight (a
// halo exchange receives every face of one field at once), so a written
// device buffer never gets its whole span copied back:
//   contiguous datatypes   one copy
//   reducible datatypes    packed from the host copy by Strata's engine and
//                          unpacked on the device by its kernels
//   any other datatype     the runs of bytes its type map covers (the library
//                          itself says which, by unpacking a buffer of 0xFF
//                          bytes into a zeroed one), one copy per run
#pragma once

#include <strata/status.hpp>

#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace strata::interposer {

// Copies the bytes `count` elements of `type` cover from host memory (their
// host copy, where `host` stands for the user's pointer) to device memory
// at `user`; returns when they are there.
Status write_exactly(char* user, const char* host, int64_t count, MPI_Datatype type);

// The runs [offset, offset + length) of bytes, relative to the buffer
// pointer, that `count` elements of `type` cover, merged and sorted.
Result<std::vector<std::pair<int64_t, int64_t>>> covered_runs(int64_t count, MPI_Datatype type);

}  // namespace strata::interposer
