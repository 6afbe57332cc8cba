#!/usr/bin/env bash
# A stand-in for strata-bench-pingpong in the compare script's tests (no GPU
# needed): rank 0 prints the JSON lines the benchmark would, for blocks of
# 8 and 64 B and messages of 1 KiB and 64 KiB, with one-way times that
# depend on --staging and STRATA_METHOD; --staging none without LD_PRELOAD
# fails, as device pointers would under an MPI that is not GPU-aware.
if [ "${1:-}" = --version ]; then echo "strata-bench-pingpong 9.8.7 (git fake123)"; exit 0; fi
staging=none
while [ $# -gt 0 ]; do
  case "$1" in
    --staging) staging=$2; shift 2 ;;
    *) shift ;;
  esac
done
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
[ "$rank" = 0 ] || exit 0
if [ "$staging" = none ] && [ -z "${LD_PRELOAD:-}" ]; then
  echo "fake_pingpong: device pointers without the interposer" >&2
  exit 1
fi
method=${STRATA_METHOD:-auto}
[ "${STRATA_P2P_IPC:-}" = on ] && method=ipc
# STRATA_P2P_IPC=auto and no method (the runtime's own choice): "default".
[ "$staging" = none ] && [ "${STRATA_P2P_IPC:-}" = auto ] && [ -z "${STRATA_METHOD:-}" ] && method=default
case "$staging/$method" in
  none/ipc) factor=5 ;;
  none/default) factor=6 ;;
  app/*) factor=40 ;;
  none/oneshot) factor=12 ;;
  none/staged) factor=16 ;;
  none/span) factor=30 ;;
  *) factor=10 ;;
esac
for bytes in 1024 65536; do
  for block in 8 64; do
    stride=$((block * 2 > 64 ? block * 2 : 64))
    us=$(awk -v b="$bytes" -v f="$factor" -v k="$block" 'BEGIN { printf "%.3f", 5 + f * b / 65536 * (k == 8 ? 2 : 1) }')
    peer=$(awk -v b="$bytes" 'BEGIN { printf "%.3f", 2 + b / 65536 }')
    [ "$staging" = app ] || peer=-1
    echo "{\"block\":$block,\"bytes\":$bytes,\"stride\":$stride,\"us\":$us,\"staging\":\"$staging\",\"method\":\"$method\",\"verified\":true,\"peer_copy_us\":$peer}"
  done
done
