# The quality stages of `dev/run test` (sourced by dev/run; issue 8): each is
# a function that fails the run on any finding (each step ends in `|| return`:
# stage() runs them where `set -e` does not apply). They use their own build
# folders next to the main one ($build_dir-asan, -tsan, -mpich, -fuzz), and
# build only what their tests need.
#
#   format   clang-format --dry-run --Werror on every tracked C/C++/CUDA file
#   tidy     clang-tidy (.clang-tidy) on the library, tool and app sources of
#            the main build's compile database
#   asan     the CPU test suite again, AddressSanitizer + UBSan (preload
#            tests included: the sanitizer runtime is preloaded first)
#   tsan     the threaded tests (label `threads`) under ThreadSanitizer
#   mpich    the interposer tests built and run against MPICH
#   fuzz     the datatype fuzzer (clang, libFuzzer) for $fuzz_seconds

quality_stages=(format tidy asan tsan mpich fuzz)
fuzz_seconds=${fuzz_seconds:-60}

tracked_sources() {
  git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu'
}

quality_format() {
  tracked_sources | xargs clang-format --dry-run --Werror || return
  echo "clang-format: $(tracked_sources | wc -l) files clean"
}

quality_tidy() {
  # Library, tool, app and benchmark sources (tests are GoogleTest macros),
  # from the compile database of the main build's configuration as a unity
  # build (cmake/StrataUnity.cmake): clang-tidy then walks the common
  # headers once per batch of sources instead of once per file. Only
  # configured, never built. A batch is a file of the build folder that
  # includes the sources; the sources left out of the batches are checked
  # on their own.
  local dir=$build_dir-tidy files
  configure "$dir" "${main_options[@]}" -DCMAKE_UNITY_BUILD=ON >/dev/null || return
  files=$(python3 - "$dir" <<'EOF'
import json, os, sys
root = os.getcwd() + "/"
build = os.path.realpath(sys.argv[1]) + "/"
seen = set()
for e in json.load(open(build + "compile_commands.json")):
    f = e["file"]
    if f.startswith(build):  # a batch, in its target's folder
        keep = "/Unity/" in f and f.endswith(".cxx") and not f[len(build):].startswith("tests/")
    else:
        keep = f.endswith(".cpp") and f.startswith(root) and not f[len(root):].startswith("tests/")
    if keep and f not in seen:
        seen.add(f)
        print(f)
EOF
) || return
  echo "$files" | xargs -P "$(nproc)" -n 1 clang-tidy -p "$dir" --config-file=.clang-tidy --quiet || return
  echo "clang-tidy: $(echo "$files" | wc -l) batches and files clean"
}

# Configures $1 with the remaining arguments and builds only the executables
# (and preload library) of the tests `ctest $ctest_selection` selects: each
# test's REQUIRED_FILES (cmake/StrataTesting.cmake) and the build outputs its
# command names. A selected test without any is an error here, not a test
# that ctest reports "Not Run" later.
build_tests_of() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null || return
  local targets
  # Before the build ctest cannot find the executables of the tests that run
  # one directly: it prints "Could not find executable ..." on stdout ahead
  # of the JSON and leaves out those tests' "command".
  targets=$(ctest --test-dir "$dir" "${ctest_selection[@]}" --show-only=json-v1 | python3 -c '
import json, os, re, subprocess, sys
build = os.path.realpath(sys.argv[1]) + "/"
known = set(line.split(":")[0] for line in
            subprocess.run(["ninja", "-C", sys.argv[1], "-t", "targets", "all"], capture_output=True,
                           text=True, check=True).stdout.splitlines())
text = sys.stdin.read()
tests = json.loads(text[text.index("{"):])["tests"]
if not tests:
    sys.exit("the selection has no tests")
out = set()
for t in tests:
    words = list(t.get("command", []))
    for prop in t.get("properties", []):
        if prop["name"] == "REQUIRED_FILES":
            words += prop["value"]
    mine = set()
    for word in words:
        for part in re.split("[=:|]", word):  # -DVAR=a|b|c lists, VAR=a:b paths
            p = os.path.realpath(part) if part.startswith("/") else ""
            if p.startswith(build) and p[len(build):] in known:
                mine.add(p[len(build):])
    # A test whose program is not ours (sh, python3: fixtures, source
    # checks) needs nothing built; one without a command is a program ctest
    # could not find, which only the build makes.
    command = t.get("command", [])
    foreign = command and not os.path.realpath(command[0]).startswith(build)
    if not mine and not foreign:
        sys.exit("%s: no build target among its command and REQUIRED_FILES" % t["name"])
    out |= mine
print("\n".join(sorted(out)))' "$dir") || return
  # shellcheck disable=SC2086 # one target per word
  cmake --build "$dir" -j "$(nproc)" --target $targets
}

run_selected() {
  ctest --test-dir "$1" -j "$(nproc)" --output-on-failure --timeout 600 "${ctest_selection[@]}"
}

cpu_only=(-DSTRATA_ENABLE_CUDA=OFF -DSTRATA_ENABLE_HIP=OFF -DSTRATA_BUILD_BENCH=OFF)
# The checking builds (sanitizers, MPICH) are built unoptimised, with line
# tables only and assertions on: GCC compiles a file under ASan + UBSan 5-6x
# faster at -O0 -g1 than at -O2 -g (43 s against 7 s for
# fault/detect/diagnosis.cpp), the build was most of the asan stage, and the
# tests they run spend their time in MPI start-up and the library, not in
# Strata's code. Line tables are all a sanitizer report needs. They (and
# the fuzzer's) are unity builds (cmake/StrataUnity.cmake): each target's
# sources compiled in batches, the common headers parsed once per batch.
checking_build=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-Og -g1" "-DCMAKE_CXX_FLAGS_DEBUG=-Og -g1"
                -DCMAKE_UNITY_BUILD=ON)

quality_asan() {
  # Every test of Strata's code but (docs/testing.md, "What each stage runs"):
  # - the fault drills (timing scenarios of 8 ranks: their code runs here
  #   through the fault unit tests and the _preload_fault variants) and the
  #   launcher plumbing of strata-halo3d (usage errors, the compare script);
  # - the plain variants of the interposer's MPI tests (the test program
  #   against the MPI library alone, no Strata code loaded);
  # - the larger shapes of the multi-rank tests, whose code the smaller
  #   shapes run: the collective tests' 8- and 6-rank shapes (test_coll_host
  #   too: 156 s with 8 ranks under ASan), the divergence
  #   test's 4 to 8 ranks (3 here), the every-call test's 3 and 4 (2 here);
  # - the Kokkos layer (built without Kokkos: Kokkos' templates under ASan
  #   cost minutes of compile per test; the main stage runs its tests);
  # - the install checks (plain consumers of instrumented libraries) and
  #   test_architecture (reads the sources, runs no Strata code) and
  #   test_public_headers (compiles the public headers alone), and
  #   test_tool_command_lines (every tool's --version, --help and usage
  #   errors: building every tool under ASan for it costs minutes, and the
  #   code behind the tools runs in the library's tests here), and
  #   docs_commands (the docs' runnable commands: the same tools and
  #   programs, minutes under ASan; the main stage runs it) and
  #   pingpong_compare_osu_json (a shell script and its stand-in benchmark,
  #   no Strata code; its instrumented stand-in preload would not load into
  #   bash), and the other Python-only checks (test_strata_plot,
  #   results_charts_current, docs_runner_selftest,
  #   test_bench_overhead_verdicts: no Strata code at all,
  #   about two minutes of the stage), and test_tool_json / test_tool_osu
  #   (they run benchmark tools, which the stage would build under ASan
  #   for output formatting the main stage checks), and
  #   strata_measure_calibration (strata-measure end to end: the tool under
  #   ASan is minutes of build; its fit runs under ASan in test_coll_model);
  # - the variants that run code another selected variant runs, each an
  #   MPI start of 2-4 s under ASan (issue 25): the _preload_disabled ones
  #   (STRATA_DISABLE=1: Strata's code is the switch alone); two of the four
  #   element types and layouts of halo3d with 8 ranks (float AoS and
  #   double SoA stay); the log lines of init_line_debug, _info and
  #   _measured (_fake_gpus and _clean stay) and summary_job_none; the
  #   train proxy's shapes tp4_fp32, dp2, tp3_uneven and its usage errors
  #   (tp2_dp2, the device run and the wrong-result check stay); the
  #   emulated topologies 4x1x1, 1x2x2, shared_die and list_np5 (2x2x2,
  #   2x2x2_np6 and mixed_np8 stay, the spec errors too).
  # The randomized tests run 400 cases each (memory errors show early; the main
  # stage runs the full counts). Only the selected tests' programs are built.
  ctest_selection=(-E "^test_architecture\$|^test_public_headers\$|^test_tool_(command_lines|json|osu)\$|^strata_measure_calibration|^docs_commands\$|^docs_runner_selftest\$|^test_strata_plot\$|^test_bench_overhead_verdicts\$|^results_charts_current\$|^pingpong_compare_|^fault_|^halo3d_(usage|compare|detects|device)|package_find_package\$|^test_mpi_(p2p|errors|alltoall|threads|pack_random|collectives|divergence|every_call|exchanges)\$|^test_mpi_collectives_(np8_hierarchical|np6_hierarchical|preload_disabled)\$|^test_coll_host(_np6)?\$|^test_mpi_divergence_np[4-8]_preload\$|^test_mpi_every_call_np[34]_preload\$|_preload_disabled\$|^halo3d_np8_(double_aos|float_soa)\$|^init_line_(debug|info|measured)\$|^summary_job_none\$|^train_proxy_(tp4_fp32|dp2|tp3_uneven|usage)\$|^test_topology_emulated_(4x1x1|1x2x2|shared_die|list_np5)\$")
  export STRATA_TEST_ITERATIONS=400 STRATA_TEST_QUICK=1
  local rc=0
  build_tests_of "$build_dir-asan" "${checking_build[@]}" -DSTRATA_SANITIZE=address "${cpu_only[@]}" -DSTRATA_ENABLE_KOKKOS=OFF &&
    run_selected "$build_dir-asan" || rc=1
  unset STRATA_TEST_ITERATIONS STRATA_TEST_QUICK
  return $rc
}

quality_tsan() {
  ctest_selection=(-L threads)
  build_tests_of "$build_dir-tsan" "${checking_build[@]}" -DSTRATA_SANITIZE=thread "${cpu_only[@]}" -DSTRATA_ENABLE_KOKKOS=OFF || return
  run_selected "$build_dir-tsan"
}

quality_mpich() {
  # The interposer tests against MPICH, the collective routing test with
  # three of its variants: plain (the test against MPICH alone), _preload
  # and np5_hierarchical (Strata's own algorithm, uneven groups). The other
  # shapes (8 and 6 ranks, two_level, _preload_disabled) run the same Strata
  # code, each 8-rank run costs ~30 s here, and the main stage runs them all.
  # Of test_mpi_divergence the plain run and 3 ranks (MPICH's busy-polling
  # ranks oversubscribed on 2 cores took 75 s with 4 ranks and 140-600 s
  # for each of 5 to 8; 3 ranks take every path, uneven splits included).
  # test_mpi_divergence in its quick form (STRATA_TEST_QUICK: one flavour
  # rotation per memory pattern instead of three, as in the asan stage; 27 s
  # against 66 s with 3 ranks here); the main stage runs all three.
  # Of test_mpi_every_call the 2- and 3-rank runs (4 ranks on 2 cores cost
  # MPICH ~15 s and take no path the 3-rank run does not).
  # The install check needs the whole tree installed (checked by hand).
  ctest_selection=(-L interposer
                   -E '^test_mpi_collectives_(np8_hierarchical|np6_hierarchical|two_level|preload_disabled)$|^test_mpi_every_call_np4_preload$|^test_mpi_divergence_np[4-8]_preload$|^package_find_package$')
  build_tests_of "$build_dir-mpich" "${checking_build[@]}" -DMPI_C_COMPILER=/usr/bin/mpicc.mpich -DMPI_CXX_COMPILER=/usr/bin/mpicxx.mpich \
    -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich "${cpu_only[@]}" -DSTRATA_ENABLE_KOKKOS=OFF || return
  STRATA_TEST_QUICK=1 run_selected "$build_dir-mpich"
}

quality_fuzz() {
  local dir=$build_dir-fuzz
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1" -DSTRATA_SANITIZE=address \
    -DSTRATA_BUILD_FUZZERS=ON -DCMAKE_UNITY_BUILD=ON "${cpu_only[@]}" -DSTRATA_ENABLE_KOKKOS=OFF -DSTRATA_ENABLE_NCCL=OFF \
    -DSTRATA_BUILD_APPS=OFF >/dev/null || return
  cmake --build "$dir" -j "$(nproc)" --target fuzz_datatype || return
  local corpus=$dir/fuzz-corpus artifacts=$dir/fuzz-artifacts
  rm -rf "$corpus" "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  # New inputs go to the scratch corpus; a failing one is written to
  # $artifacts (keep it in tests/fuzz/regressions once fixed).
  ASAN_OPTIONS=detect_leaks=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/sanitizers/lsan.supp:fast_unwind_on_malloc=0:use_tls=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$dir/tests/fuzz/fuzz_datatype" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" tests/fuzz/corpus 2>&1 | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)'
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "fuzz_datatype found a failing input (rc $rc): $(ls "$artifacts")"
    return 1
  fi
}
