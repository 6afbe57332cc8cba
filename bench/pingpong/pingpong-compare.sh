#!/usr/bin/env bash
# Runs strata-bench-pingpong between 2 ranks: plain (staged by hand) and
# preloaded with each method of the interposer (oneshot, staged, span and
# auto, the model's choice), and prints one markdown table of one-way times.
#   pingpong-compare.sh [--bench PATH] [--preload PATH] [--osu] [--json FILE] [--ipc] [-- bench options]
# --contiguous (a bench option): contiguous messages, block 0 in the table.
# The method runs keep the device-direct transport off (STRATA_P2P_IPC=off).
# --ipc: two more preloaded runs, one with the device-direct transport for
#   every message of at least 512 B (STRATA_P2P_IPC=on: the receiver pulls
#   from the sender's GPU), one with STRATA_P2P_IPC=auto and nothing else
#   set (the runtime's own choice of transport and method, "default"), and
#   their columns: ipc, default, the GB/s of ipc, the peer copy floor (one
#   process copying GPU 1 -> GPU 0, measured by the plain run), plain /
#   default and default / best (the best of the methods and ipc;
#   docs/device.md);
# --osu: OSU micro-benchmark columns instead of the table, per block size:
#   # Size, Plain and Strata (auto) Latency (us) and Bandwidth (MB/s), Ratio
#   (plain / Strata);
# --json FILE: every run's points as one strata-bench-pingpong document (the
#   bench's version and commit, this command, host, time; rows of the plain
#   run, staging "app", and of each method, staging "none"); strata-plot
#   draws it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$here/strata-bench-pingpong
preload=$(head -n 1 "$here/strata-bench-pingpong.preload" 2>/dev/null || true)
extra=()
osu=no
ipc=no
json_out=""
command_line=$(printf "%q " "$0" "$@")
command_line=${command_line% }
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
}
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --bench) bench=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --osu) osu=yes; shift ;;
    --ipc) ipc=yes; shift ;;
    --json) json_out=$2; shift 2 ;;
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
  mpirun -np 2 ${strata_env[@]+"${strata_env[@]}"} -x LD_PRELOAD="$preload" -x STRATA_METHOD=$m -x STRATA_P2P_IPC=off \
    "$bench" \
    --staging none "${extra[@]}" >"$work/$m" ||
    { echo "preloaded run ($m) failed" >&2; exit 1; }
done
if [ "$ipc" = yes ]; then
  mpirun -np 2 ${strata_env[@]+"${strata_env[@]}"} -x LD_PRELOAD="$preload" -x STRATA_P2P_IPC=on \
    -x STRATA_P2P_IPC_MIN_BYTES=512 -x STRATA_P2P_IPC_MIN_STRIDED_BYTES=512 "$bench" --staging none "${extra[@]}" \
    >"$work/ipc" || { echo "preloaded run (ipc) failed" >&2; exit 1; }
  mpirun -np 2 ${strata_env[@]+"${strata_env[@]}"} -x LD_PRELOAD="$preload" -x STRATA_P2P_IPC=auto "$bench" \
    --staging none "${extra[@]}" >"$work/default" || { echo "preloaded run (default) failed" >&2; exit 1; }
fi
if grep -q '"verified":false' "$work"/*; then echo "pingpong-compare: a run did not verify" >&2; exit 1; fi
value() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$1"; }
# One line per point: block bytes stride plain oneshot staged span auto.
paste -d' ' <(value "$work/plain" block) <(value "$work/plain" bytes) <(value "$work/plain" stride) \
  <(value "$work/plain" us) <(value "$work/oneshot" us) <(value "$work/staged" us) <(value "$work/span" us) \
  <(value "$work/auto" us) >"$work/joined"
if [ "$osu" = yes ]; then
  echo "# strata-bench-pingpong-compare --osu: one-way time of a derived datatype in GPU memory, ranks 0 and 1"
  echo "# Plain: MPI on a host copy staged by hand (the peer); Strata: device pointers to MPI under"
  echo "# libstrata_preload.so, STRATA_METHOD=auto; Size: bytes the type selects; Ratio: Plain / Strata"
  # OSU's layout: the size in %-10d, values in %20.2f (wider where the name is).
  awk 'BEGIN { n = split("Plain Latency (us)|Strata Latency (us)|Plain Bandwidth (MB/s)|Strata Bandwidth (MB/s)|Ratio", h, "|");
               for (i = 1; i <= n; ++i) w[i] = length(h[i]) + 2 > 20 ? length(h[i]) + 2 : 20 }
       $1 != block { block = $1; printf "\n# hvector of %s B blocks at stride %s B\n%-10s", $1, $3, "# Size";
                     for (i = 1; i <= n; ++i) printf "%*s", w[i], h[i]; printf "\n" }
       { printf "%-10s%*.2f%*.2f%*.2f%*.2f%*.2f\n", $2, w[1], $4, w[2], $8, w[3], $2 / $4, w[4], $2 / $8, w[5], $4 / $8 }' \
    <(sort -n -k1,1 -k2,2 -s "$work/joined")
elif [ "$ipc" = yes ]; then
  echo "| block B | bytes | plain, staged by hand (µs) | strata oneshot (µs) | strata staged (µs) | strata span (µs) | strata auto (µs) | strata ipc (µs) | strata default (µs) | ipc GB/s | peer copy (µs) | peer copy GB/s | plain / default | default / best |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  # Fields: 1 block, 2 bytes, 3 stride, 4 plain, 5-8 oneshot staged span auto, 9 ipc, 10 default, 11 peer copy.
  paste -d' ' "$work/joined" <(value "$work/ipc" us) <(value "$work/default" us) \
    <(value "$work/plain" peer_copy_us | sed 's/^$/-1/') |
    awk '{ best = $5; if ($6 < best) best = $6; if ($7 < best) best = $7; if ($9 < best) best = $9;
           block = $1 == 0 ? "contig" : $1;
           peer = $11 != "" && $11 > 0 ? sprintf("%.1f | %.1f", $11, $2 / $11 / 1e3) : "- | -";
           printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %.2f | %.2f |\n",
                  block, $2, $4, $5, $6, $7, $8, $9, $10, $2 / $9 / 1e3, peer, $4 / $10, $10 / best }'
else
  echo "| block B | bytes | plain, staged by hand (µs) | strata oneshot (µs) | strata staged (µs) | strata span (µs) | strata auto (µs) | plain / auto | auto / best method |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  awk '{ best = $5; if ($6 < best) best = $6; if ($7 < best) best = $7;
         printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", $1, $2, $4, $5, $6, $7, $8, $4 / $8, $8 / best }' \
    "$work/joined"
fi
if [ -n "$json_out" ]; then
  # The bench's own --version line: "strata-bench-pingpong 0.1.0 (git 1a2b3c)".
  version_line=$("$bench" --version 2>/dev/null | head -n 1)
  version=$(printf '%s' "$version_line" | awk '{ print $2 }')
  commit=$(printf '%s' "$version_line" | sed -n 's/.*(git \([^)]*\)).*/\1/p')
  {
    printf '{\n  "tool": "strata-bench-pingpong",\n  "version": "%s",\n  "git_commit": "%s",\n' "$version" "$commit"
    printf '  "command": "%s",\n' "$(printf '%s' "$command_line" | sed 's/\\/\\\\/g; s/"/\\"/g')"
    printf '  "host": "%s",\n  "time_utc": "%s",\n  "ranks": 2,\n' "$(hostname)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '  "compare": "plain: --staging app; Strata: --staging none preloaded, one run per STRATA_METHOD",\n'
    printf '  "rows": [\n'
    # The ipc and default runs set no STRATA_METHOD (their rows say auto): named by their run here.
    { cat "$work/plain" "$work/oneshot" "$work/staged" "$work/span" "$work/auto"
      if [ "$ipc" = yes ]; then
        sed 's/"method":"auto"/"method":"ipc"/' "$work/ipc"
        sed 's/"method":"auto"/"method":"default"/' "$work/default"
      fi; } |
      grep '^{' | sed 's/^/    /; $!s/$/,/'
    printf '  ]\n}\n'
  } >"$json_out" || { echo "pingpong-compare: cannot write $json_out" >&2; exit 1; }
fi
