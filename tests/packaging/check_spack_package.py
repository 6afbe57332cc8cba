#!/usr/bin/env python3
"""Holds packaging/spack/packages/strata/package.py to the build it packages.

Spack is not installable on the CI machine, so the recipe is read as Python
(ast: it must parse) and checked against the CMake files:
- every build switch of cmake/StrataOptions.cmake (STRATA_ENABLE_<F> of its
  feature list, option(STRATA_BUILD_*)) is set in cmake_args, and cmake_args
  sets no STRATA_ variable that CMake does not have;
- every third-party dependency the CMake files look for (find_package,
  pkg_check_modules, the NCCL and hipcc lookups) is a depends_on of the
  recipe or comes with one of its base classes (CudaPackage, ROCmPackage).

Usage: check_spack_package.py SOURCE_DIR. Prints "ok ..." and exits 0, or
lists each mismatch and exits 1.
"""
import ast
import pathlib
import re
import sys

# CMake's name of a dependency -> what provides it in the Spack recipe.
SPACK_NAME = {
    "MPI": "mpi",
    "hwloc": "hwloc",
    "nlohmann_json": "nlohmann-json",
    "CLI11": "cli11",
    "GTest": "googletest",
    "Kokkos": "kokkos",
    "CUDAToolkit": "CudaPackage",
    "NCCL": "nccl",
    "RCCL": "rccl",
    "hipcc": "hip",
}
# Looked for by CMake but not a package: CMake's own modules, Strata itself
# (the installed-package test's consumer).
NOT_PACKAGES = {"PkgConfig", "Threads", "Strata"}


def cmake_text(root):
    files = list((root / "cmake").glob("*.cmake")) + list(root.glob("CMakeLists.txt"))
    files += [p for p in root.glob("*/**/CMakeLists.txt") if "build" not in p.parts[len(root.parts)]
              and "tests" not in p.relative_to(root).parts[:1] and ".carry" not in p.parts]
    return "\n".join(p.read_text() for p in files)


def cmake_dependencies(text):
    deps = set(re.findall(r"find_package\((\w+)", text))
    deps |= {"hwloc"} if re.search(r"pkg_check_modules\(HWLOC\b", text) else set()
    deps |= {"NCCL"} if re.search(r"nccl", text, re.I) else set()
    deps |= {"RCCL"} if re.search(r"rccl", text, re.I) else set()
    deps |= {"hipcc"} if "STRATA_HIPCC" in text else set()
    return deps - NOT_PACKAGES


def cmake_switches(options_text):
    features = re.search(r"foreach\(_feature ([A-Z ]+)\)", options_text).group(1).split()
    switches = {"STRATA_ENABLE_" + f for f in features}
    switches |= set(re.findall(r"option\((STRATA_BUILD_\w+)", options_text))
    # Tests-only and developer switches a package does not set.
    switches -= {"STRATA_BUILD_FUZZERS"}
    return switches


def recipe_facts(tree):
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    bases = {b.id for b in cls.bases if isinstance(b, ast.Name)}
    variants, depends, defined = set(), set(), set()
    for node in ast.walk(cls):
        if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        first = node.args[0].value
        if name == "variant":
            variants.add(first)
        elif name == "depends_on":
            depends.add(re.match(r"[\w-]+", first).group(0))
        elif name in ("define", "define_from_variant") and first.startswith("STRATA_"):
            defined.add(first)
    return bases, variants, depends, defined


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    recipe = root / "packaging/spack/packages/strata/package.py"
    try:
        tree = ast.parse(recipe.read_text(), str(recipe))
    except SyntaxError as e:
        print(f"{recipe}: not Python: {e}")
        return 1
    bases, variants, depends, defined = recipe_facts(tree)
    problems = []
    for base in ("CMakePackage", "CudaPackage", "ROCmPackage"):
        if base not in bases:
            problems.append(f"the recipe does not derive from {base}")
    for v in ("kokkos", "nccl"):
        if v not in variants:
            problems.append(f"no variant '{v}'")
    switches = cmake_switches((root / "cmake/StrataOptions.cmake").read_text())
    for s in sorted(switches - defined):
        problems.append(f"cmake_args does not set {s} (cmake/StrataOptions.cmake has it)")
    for s in sorted(defined - switches):
        problems.append(f"cmake_args sets {s}, which cmake/StrataOptions.cmake does not have")
    provided = depends | bases
    for dep in sorted(cmake_dependencies(cmake_text(root))):
        spack = SPACK_NAME.get(dep)
        if spack is None:
            problems.append(f"CMake looks for {dep}: say in SPACK_NAME what provides it in the recipe")
        elif spack not in provided:
            problems.append(f"CMake looks for {dep}, the recipe has no depends_on('{spack}')")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"ok: {len(variants)} variants, {len(depends)} dependencies, {len(defined)} switches match the CMake build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
