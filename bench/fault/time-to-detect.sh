#!/usr/bin/env bash
# time-to-detect.sh BUILD_DIR [SEEDS]: runs every fault scenario of
# tests/fault/run-fault-case.sh with seeds 1..SEEDS (default 5) and prints,
# per fault class, how long detection took after the fault's onset (hangs:
# milliseconds from the stuck operation's start to the diagnosis; slow
# faults: iterations from the first slowed one to the alarm, and
# milliseconds) as a markdown table, plus every run's summary line.
set -u
build=${1:?usage: time-to-detect.sh BUILD_DIR [SEEDS]}
seeds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
export FAULT_MPIRUN=${FAULT_MPIRUN:-mpirun} FAULT_NP=${FAULT_NP:-8} FAULT_MPIRUN_FLAGS=${FAULT_MPIRUN_FLAGS:---oversubscribe}
export FAULT_PRELOAD=$build/interposer/libstrata_preload.so FAULT_WORKLOAD=$build/tests/fault/fault_workload
export FAULT_TOOL=$build/tools/strata-fault
lines=()
for c in noncomm_hang comm_hang comm_hang_nonblocking noncomm_slow comm_slow comm_slow_probe death; do
  for s in $(seq 1 "$seeds"); do
    line=$(bash "$here/../../tests/fault/run-fault-case.sh" "$c" "$s" 2>&1 | grep '^fault-case:\|^run-fault-case:' | tr '\n' ' ')
    echo "$line"
    lines+=("$c|$line")
  done
done
echo
echo "| fault (injected) | class diagnosed | runs correct | time to detect, ms (min / median / max) | iterations after onset (min / median / max) |"
echo "| --- | --- | ---: | ---: | ---: |"
stats() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print "-"} else {printf "%s / %s / %s", a[1], a[int((NR+1)/2)], a[NR]}}'; }
for c in noncomm_hang comm_hang comm_hang_nonblocking noncomm_slow comm_slow comm_slow_probe death; do
  ok=0 total=0 ms=() lag=() cls=""
  for l in "${lines[@]}"; do
    [ "${l%%|*}" = "$c" ] || continue
    total=$((total + 1))
    body=${l#*|}
    case $body in *"run-fault-case: passed"*) ok=$((ok + 1)) ;; esac
    [ -z "$cls" ] && cls=$(printf '%s' "$body" | sed -n "s/.*class='\([^']*\)'.*/\1/p")
    m=$(printf '%s' "$body" | sed -n 's/.*detect_ms=\([0-9-]*\).*/\1/p'); [ -n "$m" ] && ms+=("$m")
    g=$(printf '%s' "$body" | sed -n 's/.* lag=\([0-9-]*\) .*/\1/p'); [ -n "$g" ] && lag+=("$g")
  done
  printf '| %s | %s | %d/%d | %s | %s |\n' "$c" "$cls" "$ok" "$total" \
    "$(printf '%s\n' "${ms[@]+"${ms[@]}"}" | grep . | stats)" "$(printf '%s\n' "${lag[@]+"${lag[@]}"}" | grep . | stats)"
done
