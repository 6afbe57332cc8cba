#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and
# runs an application that finds it with find_package(Strata).
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/libstrata_preload.so" || test -f "$work/prefix/lib64/libstrata_preload.so"
# The application must use the MPI Strata was built against (Open MPI and
# MPICH have different ABIs).
mpicc=$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
# And the Kokkos it was built against (a Kokkos built by hand, found
# through Kokkos_DIR), with the same CUDA architectures.
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" | grep -v NOTFOUND || true; }
kokkos_dir=$(cached Kokkos_DIR)
cuda_arch=$(cached CMAKE_CUDA_ARCHITECTURES)
# CMake's own output (a warning about a variable one consumer does not use,
# say) only when it fails: the test passes on the consumer's "ok" first.
cmake -S "$source_dir/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
      ${mpicc:+-DMPI_C_COMPILER="$mpicc"} ${kokkos_dir:+-DKokkos_DIR="$kokkos_dir"} \
      ${cuda_arch:+-DCMAKE_CUDA_ARCHITECTURES="$cuda_arch"} >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64" "$work/build/consumer"
