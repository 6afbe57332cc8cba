// Links Strata::strata from an installed package and packs a vector type.
#include <strata/datatype.hpp>
#include <strata/layout.hpp>

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Datatype v;
  MPI_Type_vector(4, 2, 5, MPI_INT, &v);
  MPI_Type_commit(&v);
  strata::Result<strata::TypeLayout> layout = strata::describe_datatype(v);
  std::vector<int> src(20);
  for (int i = 0; i < 20; ++i) src[i] = i;
  std::vector<char> ours(64), theirs(64);
  int64_t pos = 0;
  int lib_pos = 0;
  const bool packed = strata::pack(src.data(), 1, v, ours.data(), 64, &pos) == strata::Status::ok;
  MPI_Pack(src.data(), 1, v, theirs.data(), 64, &lib_pos, MPI_COMM_WORLD);
  const bool ok = layout.ok() && packed && pos == lib_pos && std::memcmp(ours.data(), theirs.data(), 32) == 0 &&
                  layout->element == strata::StridedBlock{0, 8, {{4, 20}}, 68};
  std::printf("%s %s\n", ok ? "ok" : "FAILED", layout.ok() ? layout->element.to_string().c_str() : "irreducible");
  MPI_Type_free(&v);
  MPI_Finalize();
  return ok ? 0 : 1;
}
