#!/usr/bin/env bash
# strata-halo-compare: runs strata-halo3d twice on the same binary, plain and
# with LD_PRELOAD=libstrata_preload.so, and prints a markdown table of the two.
# With --memory device (and no --staging of the user's) the plain runs use
# --staging app (application staging by hand, what works with any MPI) and
# the preloaded runs --staging none (device pointers to MPI, which the
# interposer takes).
#
# Exit codes: 0 both runs verified, 1 a run failed or did not verify,
# 2 usage error or something missing (binary, preload library, launcher).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  cat <<USAGE
usage: $(basename "$0") [-np N] [--runs R] [--halo PATH] [--preload PATH]
                         [--mpirun PATH] [--json FILE [--label TEXT]]
                         [--] [strata-halo3d options...]

Runs strata-halo3d with N ranks (default 8, oversubscribed), plain and with
libstrata_preload.so preloaded into every rank, alternately R times each
(default 3: an oversubscribed machine drifts, so neither mode gets all the
good or all the bad moments), then prints a markdown table: time per
exchange (the median of the runs' medians, and the min and max over all
runs, in microseconds), bytes per exchange, verified, and the speed-up
(plain time / preloaded time).
Any argument not listed here is passed to strata-halo3d (e.g. --grid 32 32 32
--radius 2 --type float); --json is always added. With --memory device, the
plain runs get --staging app (the field copied to pinned host memory and back
around each exchange, by hand: an MPI that is not GPU-aware cannot take device
pointers) and the preloaded runs --staging none (device pointers to MPI, which
the interposer takes), unless you pass --staging yourself.

  -np N, --np N     ranks (default 8)
  --runs R          runs of each mode, alternated (default 3)
  --halo PATH       strata-halo3d binary (default: next to this script)
  --preload PATH    libstrata_preload.so (default: from the build tree or the
                    install prefix this script lives in)
  --mpirun PATH     launcher (default: mpirun, else mpiexec, from PATH)
  --json FILE       also write the table as JSON (tool "strata-halo-compare",
                    command, host, UTC time, one row: the setup, each mode's
                    median, min and max, the ratio; strata-plot draws it,
                    several files as one chart); written when both modes ran
  --label TEXT      the row's name in the JSON (default: ranks, grid,
                    radius, type, memory)
  -h, --help        this text

Open MPI gets --oversubscribe and LD_PRELOAD through -x; MPICH's mpiexec gets
-genv LD_PRELOAD. For Open MPI these variables get defaults when unset (set
them to override): OMPI_MCA_btl=self,vader,
OMPI_MCA_btl_vader_single_copy_mechanism=none, and when run as root
OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
USAGE
}

die_usage() {
  echo "strata-halo-compare: $*" >&2
  exit 2
}

np=8
runs=3
halo=""
preload=""
launcher=""
json_out=""
label=""
command_line=$(printf "%q " "$0" "$@")
command_line=${command_line% }
halo_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -np|--np)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      np=$2; shift 2 ;;
    --np=*) np=${1#*=}; shift ;;
    --runs)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      runs=$2; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --halo)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      halo=$2; shift 2 ;;
    --halo=*) halo=${1#*=}; shift ;;
    --preload)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      preload=$2; shift 2 ;;
    --preload=*) preload=${1#*=}; shift ;;
    --mpirun)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      launcher=$2; shift 2 ;;
    --mpirun=*) launcher=${1#*=}; shift ;;
    --json)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      json_out=$2; shift 2 ;;
    --json=*) json_out=${1#*=}; shift ;;
    --label)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      label=$2; shift 2 ;;
    --label=*) label=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; halo_args+=("$@"); break ;;
    *) halo_args+=("$1"); shift ;;
  esac
done

# --memory device: the plain runs stage by hand, the preloaded runs hand the
# device pointers to MPI, unless the user chose a --staging.
device_memory=no
user_staging=no
previous=""
for arg in ${halo_args[@]+"${halo_args[@]}"}; do
  case "$arg" in
    --staging|--staging=*) user_staging=yes ;;
    --memory=[Dd][Ee][Vv][Ii][Cc][Ee]) device_memory=yes ;;
    --memory=*) device_memory=no ;;
  esac
  if [ "$previous" = --memory ]; then
    case "$arg" in
      [Dd][Ee][Vv][Ii][Cc][Ee]) device_memory=yes ;;
      *) device_memory=no ;;
    esac
  fi
  previous=$arg
done
plain_args=()
preloaded_args=()
staging_note=""
if [ "$device_memory" = yes ]; then
  if [ "$user_staging" = no ]; then
    plain_args=(--staging app)
    preloaded_args=(--staging none)
    staging_note="; chosen by strata-halo-compare"
  else
    staging_note="; as given"
  fi
fi

case "$np" in
  ''|*[!0-9]*|0) die_usage "-np wants a positive number of ranks, got '$np'" ;;
esac
case "$runs" in
  ''|*[!0-9]*|0) die_usage "--runs wants a positive number, got '$runs'" ;;
esac

# The binary.
[ -n "$halo" ] || halo="$here/strata-halo3d"
[ -x "$halo" ] || die_usage "strata-halo3d not found or not executable at '$halo' (pass --halo PATH)"

# The preload library: the path CMake wrote next to this script, else the
# usual places in a build tree or an install prefix.
if [ -n "$preload" ]; then
  [ -f "$preload" ] || die_usage "the preload library '$preload' does not exist"
else
  candidates=()
  if [ -f "$here/strata-halo-compare.preload" ]; then
    candidates+=("$(head -n 1 "$here/strata-halo-compare.preload")")
  fi
  candidates+=("$here/../../interposer/libstrata_preload.so"
               "$here/../../interposer/shim/libstrata_preload.so"
               "$here/../../lib/libstrata_preload.so"
               "$here/../lib/libstrata_preload.so"
               "$here/../lib64/libstrata_preload.so")
  for candidate in "${candidates[@]}"; do
    if [ -f "$candidate" ]; then
      preload=$candidate
      break
    fi
  done
  if [ -z "$preload" ]; then
    {
      echo "strata-halo-compare: libstrata_preload.so not found; looked in:"
      printf '  %s\n' "${candidates[@]}"
      echo "Build it (ninja strata_preload) or pass --preload PATH."
    } >&2
    exit 2
  fi
fi
preload=$(cd "$(dirname "$preload")" && pwd)/$(basename "$preload")

# The launcher and how it passes LD_PRELOAD to the ranks only (never to
# mpirun itself).
if [ -z "$launcher" ]; then
  launcher=$(command -v mpirun || command -v mpiexec || true)
  [ -n "$launcher" ] || die_usage "no mpirun or mpiexec in PATH (pass --mpirun PATH)"
fi
version=$("$launcher" --version 2>&1 || true)
case "$version" in
  *"Open MPI"*|*OpenRTE*|*"Open RTE"*)
    flavour=openmpi
    launch_flags=(--oversubscribe)
    preload_flags=(-x "LD_PRELOAD=$preload")
    if [ "$(id -u)" = 0 ]; then
      export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
      export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
    fi
    export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
    export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
    ;;
  *HYDRA*|*MPICH*|*"Intel(R) MPI"*)
    flavour=mpich
    launch_flags=()
    preload_flags=(-genv LD_PRELOAD "$preload")
    ;;
  *)
    die_usage "cannot tell whether '$launcher' is Open MPI's or MPICH's launcher"
    ;;
esac

workdir=$(mktemp -d "${TMPDIR:-/tmp}/strata-halo-compare.XXXXXX") || exit 2
trap 'rm -rf "$workdir"' EXIT

# run_halo MODE [launcher flags...]: runs the job (with the mode's own
# arguments, plain_args or preloaded_args); leaves its JSON line in
# $workdir/MODE.json (empty when there is none) and returns its exit code.
run_halo() {
  local mode=$1
  shift
  local rc=0
  local mode_args=()
  if [ "$mode" = plain ]; then
    mode_args=(${plain_args[@]+"${plain_args[@]}"})
  else
    mode_args=(${preloaded_args[@]+"${preloaded_args[@]}"})
  fi
  "$launcher" ${launch_flags[@]+"${launch_flags[@]}"} -np "$np" "$@" \
    "$halo" ${halo_args[@]+"${halo_args[@]}"} ${mode_args[@]+"${mode_args[@]}"} --json \
    >"$workdir/$mode.out" 2>"$workdir/$mode.err" || rc=$?
  grep '^{"ranks"' "$workdir/$mode.out" | tail -n 1 >"$workdir/$mode.json"
  return $rc
}

# json_value FILE KEY: a number or boolean from a one-line JSON object;
# json_text FILE KEY: a string; json_list FILE KEY: an array of numbers as AxBxC.
json_value() {
  sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1"
}
json_text() {
  sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" "$1"
}
json_list() {
  sed -n "s/.*\"$2\":\[\([^]]*\)\].*/\1/p" "$1" | tr ',' 'x'
}

report_failure() {
  local mode=$1 rc=$2
  echo "strata-halo-compare: the $mode run failed (exit $rc); its last output:" >&2
  tail -n 15 "$workdir/$mode.err" "$workdir/$mode.out" >&2
}

# rc_of MODE: the exit code of that run.
rc_of() {
  if [ "$1" = plain ]; then echo "$plain_rc"; else echo "$preloaded_rc"; fi
}

failed=0
plain_rc=0
preloaded_rc=0
echo "strata-halo-compare: $np ranks, $flavour launcher $launcher, $runs runs of each mode" >&2
if [ "$device_memory" = yes ] && [ "$user_staging" = no ]; then
  echo "strata-halo-compare: device memory: plain runs with --staging app, preloaded runs with --staging none" >&2
fi
: >"$workdir/plain.all"
: >"$workdir/preloaded.all"
for run in $(seq 1 "$runs"); do
  echo "strata-halo-compare: run $run/$runs plain" >&2
  rc=0
  run_halo plain || rc=$?
  [ "$rc" -eq 0 ] || plain_rc=$rc
  cat "$workdir/plain.json" >>"$workdir/plain.all"
  echo "strata-halo-compare: run $run/$runs with LD_PRELOAD=$preload" >&2
  rc=0
  run_halo preloaded "${preload_flags[@]}" || rc=$?
  [ "$rc" -eq 0 ] || preloaded_rc=$rc
  cat "$workdir/preloaded.json" >>"$workdir/preloaded.all"
  for mode in plain preloaded; do
    [ -s "$workdir/$mode.json" ] || continue
    echo "strata-halo-compare:   $mode: $(json_value "$workdir/$mode.json" time_per_exchange_us) us per exchange" >&2
  done
done

for mode in plain preloaded; do
  rc=$(rc_of "$mode")
  json="$workdir/$mode.json"
  if [ -s "$json" ] && [ "$(json_value "$json" verified)" != true ]; then
    echo "strata-halo-compare: the $mode run did not verify" \
         "($(json_value "$json" mismatches) wrong values; exit $rc)" >&2
    grep '^strata-halo3d: rank' "$workdir/$mode.err" | head -n 5 >&2
    failed=1
  elif [ "$rc" -ne 0 ] || [ ! -s "$json" ] || [ "$(wc -l <"$workdir/$mode.all")" -ne "$runs" ]; then
    report_failure "$mode" "$rc"
    failed=1
  fi
  # Every run must have verified, not only the last.
  if grep -q '"verified":false' "$workdir/$mode.all"; then
    echo "strata-halo-compare: a $mode run did not verify" >&2
    failed=1
  fi
done

# stat FILE KEY median|min|max: over the runs' JSON lines.
stat() {
  sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1" | sort -g | awk -v how="$3" '
    { v[NR] = $1 }
    END {
      if (NR == 0) { printf "-"; exit }
      if (how == "min") printf "%s", v[1];
      else if (how == "max") printf "%s", v[NR];
      else if (NR % 2) printf "%s", v[(NR + 1) / 2];
      else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2
    }'
}

if [ -s "$workdir/plain.json" ] && [ "$(json_value "$workdir/plain.json" preloaded)" = true ]; then
  echo "strata-halo-compare: warning: the plain run already sees the Strata interposer (LD_PRELOAD set in this shell?)" >&2
fi
if [ -s "$workdir/preloaded.json" ] && [ "$(json_value "$workdir/preloaded.json" preloaded)" != true ]; then
  echo "strata-halo-compare: warning: the preloaded run does not see strata_preload_counters: is '$preload' the Strata interposer?" >&2
fi

plain_us=$(stat "$workdir/plain.all" time_per_exchange_us median)
preloaded_us=$(stat "$workdir/preloaded.all" time_per_exchange_us median)

ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f", a / b; else printf "-" }'
}

# staging_of MODE: that mode's staging, from its JSON line, else from the
# arguments it was given.
staging_of() {
  local json="$workdir/$1.json" value=""
  [ -s "$json" ] && value=$(json_text "$json" staging)
  if [ -z "$value" ]; then
    if [ "$1" = plain ]; then value=${plain_args[1]:-?}; else value=${preloaded_args[1]:-?}; fi
  fi
  echo "$value"
}

staging_text() {
  case "$1" in
    app) echo "--staging app (copies to pinned host memory and back, by hand)" ;;
    none) echo "--staging none (device pointers to MPI)" ;;
    *) echo "--staging $1" ;;
  esac
}

# The setup, from whichever run reported; with device memory, each mode's
# staging (app: copies to pinned host memory and back by hand; none: device
# pointers to MPI).
for mode in plain preloaded; do
  json="$workdir/$mode.json"
  if [ -s "$json" ]; then
    staging=""
    if [ "$device_memory" = yes ]; then
      staging="; plain: $(staging_text "$(staging_of plain)"), preloaded: $(staging_text "$(staging_of preloaded)")$staging_note"
    fi
    echo "strata-halo3d: $(json_value "$json" ranks) ranks ($(json_list "$json" procs))," \
         "grid $(json_list "$json" grid) per rank, radius $(json_value "$json" radius)," \
         "$(json_value "$json" quantities) x $(json_text "$json" type), $(json_text "$json" layout)," \
         "$(json_text "$json" memory) memory$staging"
    echo
    break
  fi
done

echo "| mode | time per exchange (median µs, $runs runs) | min µs | max µs | bytes per exchange | verified | ratio (plain / preloaded) |"
echo "| --- | ---: | ---: | ---: | ---: | --- | ---: |"
for mode in plain preloaded; do
  json="$workdir/$mode.json"
  if [ -s "$json" ]; then
    verified=no
    [ "$(json_value "$json" verified)" = true ] && verified=yes
    if [ "$mode" = plain ]; then r=1.00; else r=$(ratio "$plain_us" "$preloaded_us"); fi
    grep -q '"verified":false' "$workdir/$mode.all" && verified=no
    if [ "$mode" = plain ]; then us=$plain_us; else us=$preloaded_us; fi
    echo "| $mode | $us | $(stat "$workdir/$mode.all" min_us min) |" \
         "$(stat "$workdir/$mode.all" max_us max) | $(json_value "$json" bytes_per_exchange) | $verified | $r |"
  else
    echo "| $mode | failed (exit $(rc_of "$mode")) | - | - | - | no | - |"
  fi
done
echo
echo "preload: $preload"

# json_string TEXT: TEXT as a JSON string.
json_string() {
  local text=${1//\\/\\\\}
  text=${text//\"/\\\"}
  printf '"%s"' "$(printf '%s' "$text" | tr '\n\t' '  ')"
}
# json_number VALUE: VALUE, or null where a run gave none.
json_number() {
  case "$1" in
    ''|-|*[!0-9.eE+-]*) printf null ;;
    *) printf '%s' "$1" ;;
  esac
}
if [ -n "$json_out" ]; then
  if [ -s "$workdir/plain.json" ] && [ -s "$workdir/preloaded.json" ]; then
    j="$workdir/preloaded.json"
    if [ -z "$label" ]; then
      label="$(json_value "$j" ranks) ranks, grid $(json_list "$j" grid), radius $(json_value "$j" radius),"
      label="$label $(json_value "$j" quantities) x $(json_text "$j" type), $(json_text "$j" memory) memory"
    fi
    verified=true
    grep -q '"verified":false' "$workdir/plain.all" "$workdir/preloaded.all" && verified=false
    {
      printf '{\n  "tool": "strata-halo-compare",\n  "command": %s,\n' "$(json_string "$command_line")"
      printf '  "host": %s,\n  "time_utc": "%s",\n' "$(json_string "$(hostname)")" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
      printf '  "launcher": %s,\n  "preload": %s,\n' "$(json_string "$launcher")" "$(json_string "$preload")"
      printf '  "rows": [\n    {"label": %s, "ranks": %s, "procs": [%s], "grid": [%s], "radius": %s,' \
        "$(json_string "$label")" "$(json_value "$j" ranks)" "$(json_list "$j" procs | tr x ,)" \
        "$(json_list "$j" grid | tr x ,)" "$(json_value "$j" radius)"
      printf ' "quantities": %s, "type": "%s", "layout": "%s", "memory": "%s", "runs": %s,' \
        "$(json_value "$j" quantities)" "$(json_text "$j" type)" "$(json_text "$j" layout)" \
        "$(json_text "$j" memory)" "$runs"
      printf ' "plain_staging": "%s", "preloaded_staging": "%s",' "$(staging_of plain)" "$(staging_of preloaded)"
      printf ' "plain_us": %s, "plain_min_us": %s, "plain_max_us": %s,' "$(json_number "$plain_us")" \
        "$(json_number "$(stat "$workdir/plain.all" min_us min)")" \
        "$(json_number "$(stat "$workdir/plain.all" max_us max)")"
      printf ' "preloaded_us": %s, "preloaded_min_us": %s, "preloaded_max_us": %s,' \
        "$(json_number "$preloaded_us")" "$(json_number "$(stat "$workdir/preloaded.all" min_us min)")" \
        "$(json_number "$(stat "$workdir/preloaded.all" max_us max)")"
      printf ' "bytes_per_exchange": %s, "verified": %s, "ratio": %s}\n  ]\n}\n' \
        "$(json_number "$(json_value "$j" bytes_per_exchange)")" "$verified" \
        "$(json_number "$(ratio "$plain_us" "$preloaded_us")")"
    } >"$json_out" || { echo "strata-halo-compare: cannot write $json_out" >&2; failed=1; }
  else
    echo "strata-halo-compare: no JSON written: a mode reported nothing" >&2
    failed=1
  fi
fi
exit $failed
