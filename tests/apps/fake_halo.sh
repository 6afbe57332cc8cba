#!/usr/bin/env bash
# A stand-in for strata-halo3d in the strata-halo-compare tests: prints the
# JSON line the app would (rank 0 only), with "memory" and "staging" taken
# from its arguments, so that a test can check which options each mode got
# without a GPU. Always "verified".
memory=host
staging=none
while [ $# -gt 0 ]; do
  case "$1" in
    --memory) memory=$2; shift 2 ;;
    --memory=*) memory=${1#*=}; shift ;;
    --staging) staging=$2; shift 2 ;;
    --staging=*) staging=${1#*=}; shift ;;
    *) shift ;;
  esac
done
memory=$(printf %s "$memory" | tr "[:upper:]" "[:lower:]")
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
ranks=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-1}}
[ "$rank" = 0 ] || exit 0
preloaded=false
case "${LD_PRELOAD:-}" in *?*) preloaded=true ;; esac
echo "{\"ranks\":$ranks,\"procs\":[$ranks,1,1],\"grid\":[8,8,8],\"radius\":2,\"quantities\":1,\"type\":\"double\",\"layout\":\"aos\",\"memory\":\"$memory\",\"staging\":\"$staging\",\"time_per_exchange_us\":1.000,\"min_us\":1.000,\"max_us\":1.000,\"bytes_per_exchange\":1,\"warmup\":1,\"reps\":1,\"iters\":1,\"mismatches\":0,\"verified\":true,\"preloaded\":$preloaded}"
