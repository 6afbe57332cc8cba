#!/usr/bin/env bash
# Runs strata-bench-pingpong between 2 ranks: plain (staged by hand) and
# preloaded with each method of the interposer (oneshot, staged, and the
# model's choice; device too when STRATA_MPI_GPU_AWARE says the MPI takes
# GPU buffers), and prints one markdown table of one-way times.
#   pingpong-compare.sh [--bench PATH] [--preload PATH] [-- bench options]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$here/strata-bench-pingpong
preload=$(head -n 1 "$here/strata-bench-pingpong.preload" 2>/dev/null || true)
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --) shift; extra+=("$@"); break ;;
    *) extra+=("$1"); shift ;;
  esac
done
[ -x "$bench" ] || { echo "pingpong-compare: no $bench" >&2; exit 2; }
[ -f "$preload" ] || { echo "pingpong-compare: no preload library (--preload PATH)" >&2; exit 2; }
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
fi
# STRATA_* settings of this shell (e.g. STRATA_CACHE_DIR) go to the ranks too.
strata_env=()
for v in $(env | sed -n 's/^\(STRATA_[A-Z_]*\)=.*/\1/p'); do strata_env+=(-x "$v"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun -np 2 "$bench" --staging app "${extra[@]}" >"$work/plain" || { echo "plain run failed" >&2; exit 1; }
for m in oneshot staged span auto; do
  mpirun -np 2 ${strata_env[@]+"${strata_env[@]}"} -x LD_PRELOAD="$preload" -x STRATA_METHOD=$m "$bench" \
    --staging none "${extra[@]}" >"$work/$m" ||
    { echo "preloaded run ($m) failed" >&2; exit 1; }
done
if grep -q '"verified":false' "$work"/*; then echo "pingpong-compare: a run did not verify" >&2; exit 1; fi
value() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$1"; }
echo "| block B | bytes | plain, staged by hand (µs) | strata oneshot (µs) | strata staged (µs) | strata span (µs) | strata auto (µs) | plain / auto | auto / best method |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
paste -d' ' <(value "$work/plain" block) <(value "$work/plain" bytes) <(value "$work/plain" us) \
  <(value "$work/oneshot" us) <(value "$work/staged" us) <(value "$work/span" us) <(value "$work/auto" us) |
  awk '{ best = $4; if ($5 < best) best = $5; if ($6 < best) best = $6;
         printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", $1, $2, $3, $4, $5, $6, $7, $3 / $7, $7 / best }'
