#!/usr/bin/env python3
"""PyTorch's side of strata-bench-fused: the same grid, the same math.

For every (tokens, hidden) point, one rank per GPU, times

  * NCCL + RMSNorm: dist.all_reduce(x) (NCCL, in place; timed with the
    AVG op, see nccl_call), then residual += x and
    torch.nn.functional.rms_norm (the eager path a PyTorch model takes);
  * symmetric-memory two-shot + RMSNorm: x copied into a symmetric buffer,
    torch.ops.symm_mem.two_shot_all_reduce_ (peer loads and stores, no
    multicast: it runs with TORCH_SYMM_MEM_DISABLE_MULTICAST=1), then the
    same residual add and rms_norm (how vLLM's SymmMemCommunicator uses it).

Timing as strata-bench-fused does it: CUDA events around back-to-back calls
after warm-up, enough calls per sample to last --sample-us, the median of
--samples samples, the slowest rank. Writes JSON for strata-bench-fused
--torch (rank 0). Launch with mpirun (Open MPI's environment gives the
ranks) or torchrun:

    mpirun -np 4 python3 bench/fused/torch_peer.py --out /tmp/torch.json
"""

import argparse
import json
import os
import statistics
import sys


def ranks():
    env = os.environ
    rank = int(env.get("RANK", env.get("OMPI_COMM_WORLD_RANK", 0)))
    world = int(env.get("WORLD_SIZE", env.get("OMPI_COMM_WORLD_SIZE", 1)))
    local = int(env.get("LOCAL_RANK", env.get("OMPI_COMM_WORLD_LOCAL_RANK", rank)))
    return rank, world, local


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="1,8,64,128,512,1024,2048,8192")
    ap.add_argument("--hidden", default="4096,8192")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--samples", type=int, default=9)
    ap.add_argument("--sample-us", type=float, default=300.0)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    rank, world, local = ranks()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device)
    group = dist.group.WORLD
    dtype = torch.bfloat16
    tokens = [int(t) for t in args.tokens.split(",") if t]
    hiddens = [int(h) for h in args.hidden.split(",") if h]

    symm = None
    symm_note = ""
    try:
        import torch.distributed._symmetric_memory as symm_mem
        if hasattr(symm_mem, "enable_symm_mem_for_group"):
            symm_mem.enable_symm_mem_for_group(group.group_name)
        largest = max(tokens) * max(hiddens)
        symm = symm_mem.empty(largest, dtype=dtype, device=device)
        symm_mem.rendezvous(symm, group.group_name)
    except Exception as e:  # noqa: BLE001 - report why the column is empty
        symm = None
        symm_note = f"symmetric memory unavailable: {type(e).__name__}: {e}"

    def rmsnorm(residual, x, weight, out):
        residual.add_(x)
        out.copy_(F.rms_norm(residual, (residual.shape[-1],), weight, args.eps))

    def slowest(value):
        t = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def time_call(call):
        for _ in range(args.warmup):
            call()
        torch.cuda.synchronize()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        # Every rank must make the same number of calls of a collective: the
        # calls per sample come from the slowest rank's single call (a count
        # of each rank's own left one rank waiting in the collective while
        # the other went on to the barrier: the hang of issue 21).
        one = max(slowest(start.elapsed_time(stop) * 1e-3), 1e-9)
        iters = max(1, min(10000, int(args.sample_us * 1e-6 / one + 0.999)))
        per_call = []
        for _ in range(args.samples):
            torch.cuda.synchronize()
            dist.barrier()
            start.record()
            for _ in range(iters):
                call()
            stop.record()
            stop.synchronize()
            per_call.append(slowest(start.elapsed_time(stop) * 1e-3 / iters))
        return statistics.median(per_call) * 1e6

    rows = []
    gen = torch.Generator(device=device)
    for h in hiddens:
        weight = (torch.rand(h, generator=gen.manual_seed(11), device=device) + 0.5).to(dtype)
        for t in tokens:
            x0 = (torch.rand(t, h, generator=gen.manual_seed(1000 + rank), device=device) * 2 - 1).to(dtype)
            residual = (torch.rand(t, h, generator=gen.manual_seed(7), device=device) * 4 - 2).to(dtype)
            x = x0.clone()
            out = torch.empty_like(x)
            row = {"tokens": t, "hidden": h}

            def nccl_call():
                # all_reduce is in place: a sum would grow x n-fold per call
                # (to inf within the timing loop); the average moves the same
                # bytes through the same NCCL kernels and keeps x finite,
                # without a copy per call that a model would not make.
                dist.all_reduce(x, op=dist.ReduceOp.AVG, group=group)
                rmsnorm(residual, x, weight, out)

            row["nccl_rmsnorm_us"] = time_call(nccl_call)
            if symm is not None:
                view = symm[: t * h].view(t, h)

                def symm_call():
                    view.copy_(x0)
                    torch.ops.symm_mem.two_shot_all_reduce_(view, "sum", group.group_name)
                    rmsnorm(residual, view, weight, out)

                try:
                    row["two_shot_rmsnorm_us"] = time_call(symm_call)
                except Exception as e:  # noqa: BLE001
                    row["two_shot_rmsnorm_us"] = None
                    row["note"] = f"{type(e).__name__}: {e}"
            else:
                row["two_shot_rmsnorm_us"] = None
                row["note"] = symm_note
            rows.append(row)
            if rank == 0:
                print(json.dumps(row), flush=True)
    if rank == 0:
        machine = f"PyTorch {torch.__version__}, {world} x {torch.cuda.get_device_name(device)}, NCCL " \
                  f"{'.'.join(str(v) for v in torch.cuda.nccl.version())}"
        with open(args.out, "w") as f:
            json.dump({"machine": machine, "rows": rows}, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
