// Derived datatypes with hand-written oracles, for plain-MPI tests that run
// with and without the interposer. Every case is a layout of MPI_INT
// elements: `offsets` lists, in type-map order, the int positions one
// element of the type touches, relative to the buffer; element e of a
// (buffer, count, type) triple touches e * extent_ints + offsets[k].
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace strata_test {

struct TypeCase {
  std::string name;
  MPI_Datatype (*build)();  // returns a committed type
  std::vector<long> offsets;
  long extent_ints;
  bool reducible;  // does Strata's engine take it (a canonical strided form)?
};

const std::vector<TypeCase>& type_cases();

// The value a rank stores at int position `pos` of its send buffer.
inline int value_at(int rank, long pos) { return rank * 1000003 + static_cast<int>(pos) * 7 + 1; }
constexpr int kPoison = -777;

// A send buffer for `count` elements of `c`, filled with value_at(rank, .),
// and a poisoned receive buffer of the same span.
std::vector<int> filled_buffer(const TypeCase& c, int count, int rank);
std::vector<int> poisoned_buffer(const TypeCase& c, int count);

// Checks a receive buffer after `received` elements of `c` arrived from
// `source`: typemap positions hold the source's values, everything else is
// still poisoned. Returns a description of the first mismatch, or "".
std::string check_received(const TypeCase& c, const std::vector<int>& buf, int received, int source);

}  // namespace strata_test
