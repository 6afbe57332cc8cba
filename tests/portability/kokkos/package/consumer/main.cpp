// Packs a column slab, normalises a row and sends to MPI_PROC_NULL through
// the installed Strata::kokkos; prints "ok" when the values are right.
#include <strata/kokkos.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Kokkos::initialize();
  bool good = false;
  {
    using Space = Kokkos::DefaultExecutionSpace;
    Space space;
    Kokkos::View<double**, Kokkos::LayoutRight> a("a", 8, 8);
    Kokkos::deep_copy(a, 2.0);
    auto slab = Kokkos::subview(a, Kokkos::ALL, std::make_pair(1, 3));
    Kokkos::View<double*> packed("packed", slab.size());
    const strata::Status s1 = strata::kokkos::pack_view(space, slab, packed);
    Kokkos::View<double*> w("w", 8), y("y", 8);
    Kokkos::deep_copy(w, 1.0);
    const strata::Status s2 = strata::kokkos::rms_norm(space, Kokkos::subview(a, 0, Kokkos::ALL), w, y, 0.0);
    const strata::Status s3 = strata::kokkos::send(space, slab, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    space.fence();
    auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    good = s1 == strata::Status::ok && s2 == strata::Status::ok && s3 == strata::Status::ok && hp(15) == 2.0 &&
           hy(7) == 1.0;
    std::printf("%s pack %s, rms_norm %s, send %s\n", good ? "ok" : "FAILED", strata::to_string(s1),
                strata::to_string(s2), strata::to_string(s3));
  }
  Kokkos::finalize();
  MPI_Finalize();
  return good ? 0 : 1;
}
