#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs an
# application that finds it: with find_package(Strata) from a C and C++
# project and from a C++-only one, and with pkg-config and the MPI compiler
# wrapper as a Makefile would (not for the Kokkos consumer, whose Kokkos
# flags pkg-config does not give: third argument "no-pkg-config"). A component
# the installation lacks must fail configuration with the reason.
set -euo pipefail
build_dir=$1
source_dir=$2
pkg_config_check=${3:-pkg-config}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -1)
test -f "$libdir/libstrata_preload.so"
# The application must use the MPI Strata was built against (Open MPI and
# MPICH have different ABIs).
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" | grep -v NOTFOUND || true; }
mpicc=$(cached MPI_C_COMPILER)
mpicxx=$(cached MPI_CXX_COMPILER)
# And the Kokkos it was built against (a Kokkos built by hand, found
# through Kokkos_DIR), with the same CUDA architectures.
kokkos_dir=$(cached Kokkos_DIR)
cuda_arch=$(cached CMAKE_CUDA_ARCHITECTURES)
configure() {  # configure NAME CMAKE-ARGS...: CMake's output only when it fails
  local name=$1
  shift
  cmake -S "$source_dir/consumer" -B "$work/$name" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        ${mpicc:+-DMPI_C_COMPILER="$mpicc"} ${mpicxx:+-DMPI_CXX_COMPILER="$mpicxx"} \
        ${kokkos_dir:+-DKokkos_DIR="$kokkos_dir"} ${cuda_arch:+-DCMAKE_CUDA_ARCHITECTURES="$cuda_arch"} "$@" \
        >"$work/$name.log" 2>&1
}
run_consumer() { LD_LIBRARY_PATH="$libdir" "$1"; }

configure c_and_cxx || { cat "$work/c_and_cxx.log"; exit 1; }
cmake --build "$work/c_and_cxx" >/dev/null
run_consumer "$work/c_and_cxx/consumer" >"$work/c_and_cxx.out"

configure cxx_only -DCONSUMER_LANGUAGES=CXX || { echo "C++-only project:"; cat "$work/cxx_only.log"; exit 1; }
cmake --build "$work/cxx_only" >/dev/null
run_consumer "$work/cxx_only/consumer" | grep -q "^ok " || { echo "C++-only consumer failed"; exit 1; }

if configure missing -DCONSUMER_COMPONENTS=no_such_component; then
  echo "find_package(Strata COMPONENTS no_such_component) succeeded"
  exit 1
fi
grep -q "Strata has no component 'no_such_component'" "$work/missing.log" ||
  { echo "no reason given for a missing component:"; cat "$work/missing.log"; exit 1; }

# pkg-config, as a Makefile would use it (the prefix moved: --define-prefix).
if [ "$pkg_config_check" = pkg-config ]; then
  flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --define-prefix --cflags --libs strata)
  # shellcheck disable=SC2086 # the flags are words
  "${mpicxx:-mpicxx}" -std=c++17 "$source_dir/consumer/main.cpp" $flags -o "$work/pkg_consumer"
  "$work/pkg_consumer" | grep -q "^ok " || { echo "pkg-config consumer failed"; exit 1; }
fi

cat "$work/c_and_cxx.out"
