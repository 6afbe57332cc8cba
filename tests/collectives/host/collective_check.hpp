// One collective call of the host algorithms checked against the MPI
// library: fresh seeded random inputs, poisoned output with guard bytes on
// both sides, and the reference from the library's own collective on a copy
// (MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce, MPI_Allgather,
// MPI_Bcast) or, for float16/bfloat16 reductions, the exact reduction in
// double precision (MPI_Allreduce of the decoded inputs).
//
// Precision: integers and min/max must match exactly. Float sums and
// products may differ by the rounding of two different summation orders:
// each is within (p-1)*u*sum|x_i| (products: (p-1)*u*prod|x_i|) of the exact
// value, u = eps/2, so
//   |ours - library| <= (p-1) * eps * sum|x_i|                 (float32/64)
//   |ours - exact|   <= (p-1) * eps * sum|x_i| + (p-1) * tiny  (float16/bfloat16:
//      rounded to the format after every combination, eps its epsilon, tiny
//      its smallest subnormal: the absolute error floor near zero)
// with sum|x_i| (prod|x_i|) computed in double. Also: every rank ends with
// the same bits where the results are replicated.
//
// Every rank makes the same MPI calls whatever the outcome, so a failure
// on one rank does not hang the others.
#pragma once

#include "collectives/host/host_collectives.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace strata_test {

enum class Coll { allreduce, reduce_scatter, allgather, broadcast, reduce };

struct Case {
  Coll coll = Coll::allreduce;
  strata::coll::DataType type = strata::coll::DataType::float32;
  strata::coll::ReduceOp op = strata::coll::ReduceOp::sum;
  strata::coll::Algorithm algorithm = strata::coll::Algorithm::ring;
  bool in_place = false;
  size_t count = 0;  // the MPI count: per rank for reduce_scatter (recv) and allgather (send)
  int root = 0;
};

std::string describe(const Case& c);
bool reduces(Coll c);

::testing::AssertionResult run_case(const Case& c, const strata::coll::host::Hierarchy& h);

}  // namespace strata_test
