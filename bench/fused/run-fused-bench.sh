#!/usr/bin/env bash
# strata-bench-fused with PyTorch's columns, in one job: torch_peer.py times
# PyTorch's NCCL + RMSNorm and symmetric-memory two-shot + RMSNorm on the
# same grid, then strata-bench-fused times NCCL + RMSNorm and Strata and
# prints one markdown table with every column (docs/fused.md).
#
#   bench/fused/run-fused-bench.sh -np 4 [--build DIR] [--tokens L] [--hidden L] [--no-torch] [-- bench options]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
np=2
build=${STRATA_GPU_BUILD:-$root/build-gpu}
tokens=1,8,64,128,512,1024,2048,8192
hidden=4096,8192
torch=1
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --hidden) hidden=$2; shift 2 ;;
    --no-torch) torch=0; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "run-fused-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
# NVLink multicast stays off on these machines (NVLS, PyTorch's multimem).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
torch_args=()
if [ "$torch" = 1 ]; then
  # Each step is bounded (STRATA_TEST_BENCH_STEP_SECONDS, default 600): a stalled
  # step is named and the table is still printed without its columns.
  if timeout "${STRATA_TEST_BENCH_STEP_SECONDS:-600}" mpirun -np "$np" -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST \
      -x PYTHONPATH -x PYTHONFAULTHANDLER=1 \
      python3 "$here/torch_peer.py" --tokens "$tokens" --hidden "$hidden" --out "$tmp/torch.json" >"$tmp/torch.log" 2>&1; then
    torch_args=(--torch "$tmp/torch.json")
  else
    rc=$?
    [ "$rc" = 124 ] && echo "torch_peer.py stalled: no result within ${STRATA_TEST_BENCH_STEP_SECONDS:-600} s" >&2
    echo "torch_peer.py failed (rc $rc; PyTorch columns left empty); its last lines:" >&2
    tail -n 5 "$tmp/torch.log" >&2
  fi
fi
timeout "${STRATA_TEST_BENCH_STEP_SECONDS:-600}" mpirun -np "$np" -x NCCL_NVLS_ENABLE "$build/bench/fused/strata-bench-fused" \
  --tokens "$tokens" --hidden "$hidden" "${torch_args[@]}" "${extra[@]}" ||
  { rc=$?; [ "$rc" = 124 ] && echo "strata-bench-fused stalled: no result within ${STRATA_TEST_BENCH_STEP_SECONDS:-600} s" >&2; exit "$rc"; }
