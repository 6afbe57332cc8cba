#include "mpi_type_cases.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace strata_test {
namespace {

MPI_Datatype commit(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

std::vector<long> grid(std::initializer_list<long> counts, std::initializer_list<long> strides, long base = 0) {
  // Nested loops, first dimension outermost.
  std::vector<long> c(counts), s(strides), out;
  std::vector<long> idx(c.size(), 0);
  for (;;) {
    long off = base;
    for (size_t d = 0; d < c.size(); ++d) off += idx[d] * s[d];
    out.push_back(off);
    size_t d = c.size();
    while (d > 0) {
      --d;
      if (++idx[d] < c[d]) break;
      idx[d] = 0;
      if (d == 0) return out;
    }
  }
}

MPI_Datatype vector_type() {
  MPI_Datatype t;
  MPI_Type_vector(5, 3, 7, MPI_INT, &t);
  return commit(t);
}

MPI_Datatype hvector_of_vector() {
  MPI_Datatype inner, t;
  MPI_Type_vector(4, 2, 5, MPI_INT, &inner);
  MPI_Type_create_hvector(3, 1, 100 * sizeof(int), inner, &t);
  MPI_Type_free(&inner);
  return commit(t);
}

MPI_Datatype subarray_c() {
  int sizes[3] = {6, 5, 8}, sub[3] = {2, 3, 4}, starts[3] = {1, 1, 2};
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
  return commit(t);
}

MPI_Datatype subarray_fortran() {
  int sizes[3] = {8, 5, 6}, sub[3] = {4, 3, 2}, starts[3] = {2, 1, 1};
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
  return commit(t);
}

MPI_Datatype indexed_block() {
  int displs[4] = {1, 6, 11, 16};
  MPI_Datatype t;
  MPI_Type_create_indexed_block(4, 2, displs, MPI_INT, &t);
  return commit(t);
}

MPI_Datatype resized_vector() {
  MPI_Datatype v, t;
  MPI_Type_vector(3, 1, 4, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 13 * sizeof(int), &t);
  MPI_Type_free(&v);
  return commit(t);
}

MPI_Datatype struct_one_member() {
  MPI_Datatype v, t;
  MPI_Type_vector(2, 2, 3, MPI_INT, &v);
  int blocklen = 1;
  MPI_Aint displ = 2 * sizeof(int);
  MPI_Type_create_struct(1, &blocklen, &displ, &v, &t);
  MPI_Type_free(&v);
  return commit(t);
}

MPI_Datatype irregular_indexed() {
  int blocklens[3] = {1, 2, 1}, displs[3] = {0, 3, 7};
  MPI_Datatype t;
  MPI_Type_indexed(3, blocklens, displs, MPI_INT, &t);
  return commit(t);
}

}  // namespace

const std::vector<TypeCase>& type_cases() {
  static const std::vector<TypeCase> cases = {
      {"vector", vector_type, grid({5, 3}, {7, 1}), 31, true},
      {"hvector_of_vector", hvector_of_vector, grid({3, 4, 2}, {100, 5, 1}), 217, true},
      {"subarray_c", subarray_c, grid({2, 3, 4}, {40, 8, 1}, 40 + 8 + 2), 240, true},
      {"subarray_fortran", subarray_fortran, grid({2, 3, 4}, {40, 8, 1}, 40 + 8 + 2), 240, true},
      {"indexed_block", indexed_block, grid({4, 2}, {5, 1}, 1), 17, true},
      {"resized_vector", resized_vector, grid({3}, {4}), 13, true},
      {"struct_one_member", struct_one_member, grid({2, 2}, {3, 1}, 2), 5, true},
      {"irregular_indexed", irregular_indexed, {0, 3, 4, 7}, 8, false},
  };
  return cases;
}

std::vector<int> filled_buffer(const TypeCase& c, int count, int rank) {
  std::vector<int> buf(static_cast<size_t>(c.extent_ints * std::max(count, 1) + 64));
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = value_at(rank, static_cast<long>(i));
  return buf;
}

std::vector<int> poisoned_buffer(const TypeCase& c, int count) {
  return std::vector<int>(static_cast<size_t>(c.extent_ints * std::max(count, 1) + 64), kPoison);
}

std::string check_received(const TypeCase& c, const std::vector<int>& buf, int received, int source) {
  std::set<long> written;
  for (int e = 0; e < received; ++e) {
    for (long off : c.offsets) written.insert(e * c.extent_ints + off);
  }
  for (size_t i = 0; i < buf.size(); ++i) {
    const long pos = static_cast<long>(i);
    const int expected = written.count(pos) ? value_at(source, pos) : kPoison;
    if (buf[i] != expected) {
      std::ostringstream os;
      os << c.name << ": int " << pos << " holds " << buf[i] << ", expected " << expected
         << (written.count(pos) ? " (data)" : " (untouched)");
      return os.str();
    }
  }
  return "";
}

}  // namespace strata_test
