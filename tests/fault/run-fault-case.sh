#!/usr/bin/env bash
# run-fault-case.sh CASE SEED: one fault-detection scenario, end to end.
#
# Runs tests/fault/fault_workload (a plain MPI program) on NP ranks under
# libstrata_preload.so with STRATA_FAULT=1, injects the fault of CASE at a
# rank or link drawn from SEED, and checks:
#   - the exit code (75 when the policy ends a hung job, 0 otherwise),
#   - the diagnosis the coordinator wrote (<job>.diagnosis.jsonl): its class
#     and culprit, nothing else diagnosed, detected within 10 iterations of
#     the onset (slow) or 5 s (hang),
#   - strata-fault parses the flight records and reports the same culprit.
# Prints one summary line: "fault-case: CASE seed=S ... detect_ms=... lag=...".
#
# Environment (set by ctest, tests/fault/CMakeLists.txt): FAULT_MPIRUN,
# FAULT_NP, FAULT_PRELOAD, FAULT_WORKLOAD, FAULT_TOOL, FAULT_MPIRUN_FLAGS
# (e.g. --oversubscribe), FAULT_ENV_STYLE (x: Open MPI's -x, genv: MPICH).
#
# Cases: noncomm_hang comm_hang comm_hang_nonblocking noncomm_slow comm_slow
# comm_slow_probe death death_coordinator signal_dump exclude clean; each
# with the prefix device_ runs the allreduce on device memory (routed to
# NCCL: the GPU drills), with FAULT_FAKE_DEVICE=N on the CPU build's device
# stand-in; FAULT_EXPECT_NCCL_ABORT=1 (a GPU) also checks that a hang ended
# by the policy aborted the NCCL communicators.
set -u
case_name=$1
seed=$2
memory=host
case $case_name in device_*) memory=device ;; esac
scenario=${case_name#device_}
np=${FAULT_NP:-8}
mpirun=${FAULT_MPIRUN:-mpirun}
flags=${FAULT_MPIRUN_FLAGS:---oversubscribe}
RANDOM=$seed
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-fault-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "run-fault-case: $case_name seed $seed: $*" >&2; status=1; }
status=0

# The fault's place, from the seed.
rank=$((RANDOM % np))
ring_a=$((RANDOM % np)); ring_b=$(((ring_a + 1) % np))
# A link the ring exchange does not use (|a-b| mod np not 1).
far_a=$((RANDOM % np)); far_b=$(((far_a + 2 + RANDOM % (np - 3)) % np))
after=$((40 + RANDOM % 40))

expect_rc=0 expect_class="" expect_ranks="" expect_link="" inject="" max_lag=10 max_ms=""
args=(--iters $((after + 40)) --compute-us 100)
env=(STRATA_FAULT=1 STRATA_FAULT_DIR="$dir" STRATA_LOG=warn)
case $scenario in
  noncomm_hang)  # a rank stops before an allreduce: computing forever
    inject="stall:rank=$rank,op=allreduce,after=$after"
    env+=(STRATA_FAULT_ACTION=abort); args=(--iters 100000)
    expect_rc=75 expect_class="non-comm hang" expect_ranks="[$rank]" max_ms=5000 max_lag="" ;;
  comm_hang|comm_hang_nonblocking)  # a ring link stops delivering
    inject="cutlink:ranks=$ring_a-$ring_b,after=$after"
    env+=(STRATA_FAULT_ACTION=abort); args=(--iters 100000)
    [ "$case_name" = comm_hang_nonblocking ] && args+=(--nonblocking)
    lo=$((ring_a < ring_b ? ring_a : ring_b)); hi=$((ring_a < ring_b ? ring_b : ring_a))
    expect_rc=75 expect_class="comm hang" expect_link="[$lo,$hi]" max_ms=5000 max_lag="" ;;
  noncomm_slow)  # a rank computes 50 ms longer before each allreduce
    inject="delay:rank=$rank,op=allreduce,ms=50,after=$after"
    expect_class="non-comm slow" expect_ranks="[$rank]" ;;
  comm_slow)  # a ring link takes 50 ms longer per message
    inject="slowlink:ranks=$ring_a-$ring_b,ms=50,after=$after"
    lo=$((ring_a < ring_b ? ring_a : ring_b)); hi=$((ring_a < ring_b ? ring_b : ring_a))
    expect_class="comm slow" expect_link="[$lo,$hi]" ;;
  comm_slow_probe)  # a link no message uses: found by the out-of-band probes
    inject="slowlink:ranks=$far_a-$far_b,ms=50,at=1"
    env+=(STRATA_FAULT_PROBE_MS=100); args=(--seconds 4 --compute-us 100)
    lo=$((far_a < far_b ? far_a : far_b)); hi=$((far_a < far_b ? far_b : far_a))
    expect_class="comm slow" expect_link="[$lo,$hi]" max_lag="" max_ms=5000 ;;
  death)  # a rank is killed (SIGKILL): the launcher ends the job, the coordinator names it first
    inject="kill:rank=$rank,op=allreduce,after=$after"
    args=(--iters 100000 --compute-us 100)
    expect_rc=137 expect_class="non-comm hang" expect_ranks="[$rank]" max_lag="" ;;
  death_coordinator)  # rank 0, the coordinator, is killed: rank 1 takes over and names it
    inject="kill:rank=0,op=allreduce,after=$after"
    args=(--iters 100000 --compute-us 100)
    expect_rc=137 expect_class="non-comm hang" expect_ranks="[0]" max_lag="" ;;
  signal_dump)  # a rank crashes (SIGSEGV): it writes its flight record on the way out
    # The exit code is 139 (the signal), or 1 when a sanitizer's SEGV handler,
    # which Strata's handler passes the signal to, reports it and exits.
    inject="kill:rank=$rank,op=allreduce,after=$after,signal=SEGV"
    args=(--iters 100000 --compute-us 100)
    expect_rc=nonzero expect_class="non-comm hang" expect_ranks="[$rank]" max_lag="" ;;
  exclude)  # as noncomm_hang, with the exclude policy
    inject="stall:rank=$rank,op=allreduce,after=$after"
    env+=(STRATA_FAULT_ACTION=exclude); args=(--iters 100000)
    expect_rc=75 expect_class="non-comm hang" expect_ranks="[$rank]" max_ms=5000 max_lag="" ;;
  clean)  # no fault: 2500 iterations (2500 allreduces, 5000 sendrecvs), nothing may be diagnosed
    args=(--iters 2500 --compute-us 100) max_lag="" ;;
  *) echo "run-fault-case: unknown case $case_name" >&2; exit 2 ;;
esac
[ -n "$inject" ] && env+=("STRATA_FAULT_INJECT=$inject")
if [ "$memory" = device ]; then
  args+=(--memory device)
  [ -n "${FAULT_FAKE_DEVICE:-}" ] && env+=("STRATA_FAKE_DEVICE=$FAULT_FAKE_DEVICE")
fi
[ -n "${FAULT_PRELOAD:-}" ] && env+=("LD_PRELOAD=$FAULT_PRELOAD")

env_args=()
for kv in "${env[@]}"; do
  if [ "${FAULT_ENV_STYLE:-x}" = genv ]; then env_args+=(-genv "${kv%%=*}" "${kv#*=}"); else env_args+=(-x "$kv"); fi
done

start=$(date +%s%N)
output=$("$mpirun" -np "$np" $flags "${env_args[@]}" "$FAULT_WORKLOAD" "${args[@]}" 2>&1)
rc=$?
wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
printf '%s\n' "$output" | grep -v '^\s*$' | grep -v 'backtrace\|^\[vm:\|\*\*\*' | tail -n 25
echo "run-fault-case: $case_name seed $seed: inject '$inject', mpirun exit $rc after $wall_ms ms"
if printf '%s\n' "$output" | grep -q '^fault_workload: skipped:'; then
  echo "run-fault-case: $case_name seed $seed: skipped (no device)"; exit 77
fi

if [ "$expect_rc" = nonzero ]; then
  [ "$rc" -ne 0 ] || fail "exit code 0, expected a failure"
else
  [ "$rc" -eq "$expect_rc" ] || fail "exit code $rc, expected $expect_rc"
fi
diag=$(cat "$dir"/*.diagnosis.jsonl 2>/dev/null)
ndiag=$(printf '%s' "$diag" | grep -c '"type":"diagnosis"')
field() { printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -1 | sed 's/^[^:]*://; s/"//g'; }
array() { printf '%s\n' "$1" | grep -o "\"$2\":\[[^]]*\]*\]" | head -1 | sed 's/^[^:]*://'; }

lag="" detect_ms=""
if [ -z "$expect_class" ]; then
  [ "$ndiag" -eq 0 ] || fail "a clean run was diagnosed: $diag"
else
  first=$(printf '%s\n' "$diag" | head -1)
  [ "$ndiag" -ge 1 ] || fail "nothing was diagnosed"
  # Every diagnosis must name the injected fault (no false culprit).
  while IFS= read -r d; do
    [ -z "$d" ] && continue
    cls=$(field "$d" class)
    [ "$cls" = "$expect_class" ] || fail "diagnosed '$cls', expected '$expect_class': $d"
    [ -z "$expect_ranks" ] || [ "$(array "$d" ranks)" = "$expect_ranks" ] || fail "ranks $(array "$d" ranks), expected $expect_ranks: $d"
    if [ -n "$expect_link" ]; then
      printf '%s' "$(array "$d" links)" | grep -qF -- "$expect_link" || fail "links $(array "$d" links), expected [$expect_link]: $d"
    fi
  done <<< "$diag"
  detected=$(field "$first" detected_ns) onset=$(field "$first" onset_ns)
  [ -n "$detected" ] && [ -n "$onset" ] && detect_ms=$(( (detected - onset) / 1000000 ))
  if [ -n "$max_ms" ] && [ -n "$detect_ms" ] && [ "$detect_ms" -gt "$max_ms" ]; then
    fail "detected $detect_ms ms after the onset, more than $max_ms"
  fi
  if [ -n "$max_lag" ]; then
    lag=$(( $(field "$first" detect_seq) - after ))
    [ "$lag" -le "$max_lag" ] || fail "detected $lag iterations after the onset, more than $max_lag"
  fi
fi
if [ "${FAULT_EXPECT_NCCL_ABORT:-0}" = 1 ] && [ "$expect_rc" = 75 ]; then
  printf '%s\n' "$output" | grep -q "NCCL communicator(s) aborted" || fail "no rank aborted its NCCL communicators"
fi
if [ "$scenario" = signal_dump ]; then
  grep -q '"reason":"signal:11"' "$dir"/*.rank$rank.jsonl || fail "rank $rank wrote no flight record at SIGSEGV"
fi
if [ "$scenario" = exclude ]; then
  grep -q "^host " "$dir"/*.exclude || fail "no exclude file with a host line"
fi

# strata-fault reads the records and says the same.
report=$("$FAULT_TOOL" "$dir" --json)
trc=$?
[ "$trc" -eq 0 ] || fail "strata-fault exit code $trc"
printf '%s' "$report" | grep -q "\"size\": $np" || fail "strata-fault: no job of $np ranks in its report"
if [ -n "$expect_class" ]; then
  printf '%s' "$report" | grep -q "\"class\": \"$expect_class\"" || fail "strata-fault does not report '$expect_class'"
fi
case $scenario in
  noncomm_hang|exclude|comm_hang|comm_hang_nonblocking)  # post mortem from the records alone, too
    printf '%s' "$report" | sed -n '/"post_mortem"/,$p' | grep -q "\"class\": \"$expect_class\"" ||
      fail "strata-fault's post-mortem analysis does not find the '$expect_class'" ;;
  clean)
    printf '%s' "$report" | grep -q '"diagnoses": \[\]' || fail "strata-fault reports diagnoses on a clean run"
    printf '%s' "$report" | grep -q '"post_mortem": \[\]' || fail "strata-fault's post-mortem finds a fault in a clean run" ;;
esac
"$FAULT_TOOL" "$dir" > /dev/null || fail "strata-fault (text) failed"

echo "fault-case: $case_name seed=$seed inject='$inject' rc=$rc diagnoses=$ndiag class='$(field "$(printf '%s\n' "$diag" | head -1)" class)' detect_ms=${detect_ms:-} lag=${lag:-} wall_ms=$wall_ms"
[ $status -eq 0 ] && echo "run-fault-case: passed"
exit $status
