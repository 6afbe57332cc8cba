# Spack recipe for Strata (packaging/spack: `spack repo add packaging/spack`).
# Its variants and CMake arguments follow cmake/StrataOptions.cmake; the test
# tests/packaging/check_spack_package.py holds the two together.

from spack.package import *


class Strata(CMakePackage, CudaPackage, ROCmPackage):
    """CUDA/HIP-aware MPI communication and portability runtime: an LD_PRELOAD
    MPI interposer that handles device buffers and packs derived datatypes on
    the GPU, topology-aware collectives, a fused AllReduce + RMSNorm, Kokkos
    kernels and communication-driven fault detection."""

    # The project has no public address yet: point `git` at a clone, e.g.
    #   spack install strata@main ^... with git=file:///path/to/strata
    homepage = "https://example.invalid/strata"
    git = "https://example.invalid/strata.git"

    version("main", branch="main")

    variant("kokkos", default=False, description="Kokkos views and kernels (Strata::kokkos)")
    variant("nccl", default=True, description="NCCL (with +cuda) or RCCL (with +rocm) collectives")
    variant("tests", default=False, description="Build the GoogleTest suites")
    variant("bench", default=True, description="Build and install the benchmarks")
    variant("apps", default=True, description="Build and install the proxy apps")

    depends_on("cmake@3.25:", type="build")
    depends_on("mpi")
    depends_on("hwloc@2:")
    depends_on("nlohmann-json", type="build")
    depends_on("cli11@2:", type="build")
    depends_on("googletest", type="build", when="+tests")

    depends_on("nccl", when="+nccl +cuda")
    depends_on("rccl", when="+nccl +rocm")
    depends_on("hip", when="+rocm")
    depends_on("kokkos@3.4:", when="+kokkos")
    depends_on("kokkos +cuda +cuda_lambda", when="+kokkos +cuda")
    depends_on("kokkos +rocm", when="+kokkos +rocm")

    conflicts("+cuda", when="+rocm", msg="Strata builds for one GPU vendor at a time")

    def cmake_args(self):
        spec = self.spec

        def on_off(flag):
            return "ON" if flag in spec else "OFF"

        args = [
            self.define("STRATA_ENABLE_CUDA", on_off("+cuda")),
            self.define("STRATA_ENABLE_HIP", on_off("+rocm")),
            self.define("STRATA_ENABLE_KOKKOS", on_off("+kokkos")),
            self.define("STRATA_ENABLE_NCCL", "ON" if "+nccl" in spec and ("+cuda" in spec or "+rocm" in spec) else "OFF"),
            self.define_from_variant("STRATA_BUILD_TESTS", "tests"),
            self.define_from_variant("STRATA_BUILD_BENCH", "bench"),
            self.define_from_variant("STRATA_BUILD_APPS", "apps"),
        ]
        if "+cuda" in spec and not spec.satisfies("cuda_arch=none"):
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", spec.variants["cuda_arch"].value))
        # +rocm: the HIP sources are compiled for gfx90a (MI250X) by hipcc
        # (cmake/StrataHipCheck.cmake); amdgpu_target is not passed on yet.
        return args
