#!/usr/bin/env python3
"""Strata's device pack next to PyTorch's strided copy, on the same points.

Runs `strata-bench-pack --device --json FILE` (Strata's kernels, the
device-to-device copy rate, the 32-byte-sector bound and the path without
Strata), then, in this process, times PyTorch's strided copy of the same
layouts -- torch.as_strided(pool, sizes, strides, offset).contiguous() on a
uint8 tensor -- the same way (device events around back-to-back calls after
warm-up, median of samples, the same rotation of source slots), and prints
one markdown table with the ratios and a summary against the targets.

    python3 bench/pack/bench_pack_device.py [--bench PATH] [--out FILE]
        [--json-out FILE] [--no-torch] [--latency] [-- bench options...]

Options it does not know go to strata-bench-pack (e.g. --quick, --sizes,
--blocks, --types, --strides). See docs/bench-pack.md.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def find_bench():
    env = os.environ.get("STRATA_BENCH_PACK")
    if env:
        return env
    found = sorted(glob.glob(os.path.join(ROOT, "build*", "bench", "pack", "strata-bench-pack")),
                   key=os.path.getmtime, reverse=True)
    return found[0] if found else None


def quantile(values, q):
    v = sorted(values)
    if not v:
        return 0.0
    x = q * (len(v) - 1)
    i = int(x)
    f = x - i
    return v[i] * (1 - f) + v[i + 1] * f if i + 1 < len(v) else v[i]


class Timing:
    def __init__(self, quick):
        self.min_total_ms = 2.0 if quick else 30.0
        self.max_point_ms = 100.0 if quick else 2000.0
        self.min_samples = 3 if quick else 7
        self.max_samples = 201
        self.min_sample_us = 50.0 if quick else 200.0


def time_calls(torch, fn, slots, timing):
    """Median ns per call of fn(slot), like strata-bench-pack's timed()."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    state = {"next": 0}

    def call():
        fn(state["next"])
        state["next"] = (state["next"] + 1) % slots

    for _ in range(3):
        call()
    start.record()
    call()
    stop.record()
    stop.synchronize()
    one_us = max(1e-3, start.elapsed_time(stop) * 1e3)
    reps = int(min(20000, max(1, -(-timing.min_sample_us // one_us))))
    samples = []
    total_ms = 0.0
    t0 = time.perf_counter()
    while True:
        start.record()
        for _ in range(reps):
            call()
        stop.record()
        stop.synchronize()
        ms = start.elapsed_time(stop)
        samples.append(ms * 1e6 / reps)
        total_ms += ms
        elapsed_ms = (time.perf_counter() - t0) * 1e3
        n = len(samples)
        if n >= timing.min_samples and total_ms >= timing.min_total_ms:
            break
        if n >= timing.max_samples or (n >= 3 and elapsed_ms >= timing.max_point_ms):
            break
    return statistics.median(samples)


def torch_shape(point):
    """sizes/strides (outermost first) of the canonical block, for as_strided."""
    dims = point["dims"]
    sizes = [d[0] for d in reversed(dims)] + [point["block"]]
    strides = [d[1] for d in reversed(dims)] + [1]
    return sizes, strides


def measure_torch(data, timing, latency):
    import torch

    if not torch.cuda.is_available():
        print("PyTorch sees no GPU: no PyTorch column", file=sys.stderr)
        return
    points = data["points"]
    # Every slot of every point, and the latency layouts (<= 64 KiB of
    # blocks >= 1 B at stride <= 1 KiB: at most 64 MiB of span).
    pool_bytes = max([p["slots"] * p["slot_src_bytes"] for p in points] + [64 << 20])
    # Random non-zero bytes, as on Strata's side.
    pool = torch.randint(1, 256, (pool_bytes,), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    for i, p in enumerate(points):
        sizes, strides = torch_shape(p)
        off = p["offset"] - p["lowest_byte"]
        slots = p["slots"]
        views = [pool.as_strided(sizes, strides, k * p["slot_src_bytes"] + off) for k in range(slots)]
        if views[0].numel() != p["packed_bytes"]:
            raise SystemExit("PyTorch view of %s has %d bytes, want %d" % (p, views[0].numel(), p["packed_bytes"]))
        p["torch_ns"] = time_calls(torch, lambda k: views[k].contiguous(), slots, timing)
        # The unpack's peer: a copy of packed bytes into the strided view
        # (views of a layout whose blocks do not overlap; the output slots
        # of strata-bench-pack's rotation as the packed sources).
        packed = torch.randint(1, 256, (slots, p["slot_out_bytes"]), dtype=torch.uint8, device="cuda")
        sources = [packed[k, :p["packed_bytes"]].view(sizes) for k in range(slots)]
        p["torch_unpack_ns"] = time_calls(torch, lambda k: views[k].copy_(sources[k]), slots, timing)
        print("[%d/%d] %-8s %4d B s %5d x %10d B  PyTorch %9.1f us, unpack %9.1f us" %
              (i + 1, len(points), p["type"], p["block"], p["stride"], p["packed_bytes"], p["torch_ns"] * 1e-3,
               p["torch_unpack_ns"] * 1e-3), file=sys.stderr)
        del views, sources, packed
    for p in data.get("latency", []) if latency else []:
        sizes, strides = torch_shape(p)
        view = pool.as_strided(sizes, strides, p["offset"] - p["lowest_byte"])
        ns = []
        for i in range(520):
            t0 = time.perf_counter_ns()
            view.contiguous()
            torch.cuda.synchronize()
            if i >= 20:
                ns.append(time.perf_counter_ns() - t0)
        p["torch_ns"] = statistics.median(ns)
        p["torch_p90_ns"] = quantile(ns, 0.9)


def gbps(nbytes, ns):
    return nbytes / ns if ns and ns > 0 else 0.0


def fmt_bytes(n):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def ratio_text(x):
    return ("%.0fx" % x) if x >= 10 else ("%.2fx" % x)


def report(data, have_torch, latency):
    copy = data["copy_gbps"]
    out = []
    out.append("- device: %s (%d SMs), %s" % (data["device"], data["sm_count"], data["date"]))
    out.append("- command: `%s`" % data["command"])
    out.append("- device-to-device copy: %.1f GB/s of copied data (%s); `%% same-size copy`: a contiguous copy "
               "of the packed size, timed like the pack (same slots), over the pack's time" %
               (copy, fmt_bytes(data["copy_bytes"])))
    out.append("- sector bound = copy * b / min(32 * ceil(b/32), max(b, stride)) GB/s of packed data "
               "(= copy * b / (32 * ceil(b/32)) at stride >= 32 * ceil(b/32))")
    out.append("- PyTorch: `torch.as_strided(pool, sizes, strides, offset).contiguous()` on uint8, the same "
               "rotation of source slots, device events around back-to-back calls, median of samples; "
               "PyTorch unpack: `view.copy_(packed)` into the same strided views, timed the same way")
    out.append("- host path: the source span copied to pinned host memory, the library's MPI_Pack, "
               "the packed bytes copied back (host clock, synchronous)")
    out.append("")
    head = ["type", "block B", "stride B", "packed", "ours GB/s"]
    if have_torch:
        head += ["PyTorch GB/s", "ours/PyTorch"]
    head += ["% sector bound", "% copy", "% same-size copy"]
    if have_torch:
        head += ["PyTorch % bound"]
    head += ["unpack GB/s"]
    if have_torch:
        head += ["PyTorch unpack GB/s", "unpack ours/PyTorch"]
    head += ["host path GB/s", "ours/host path"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(" --- " if i < 4 else " ---: " for i in range(len(head))) + "|")
    for p in data["points"]:
        b, s, n = p["block"], p["stride"], p["packed_bytes"]
        ours = gbps(n, p["pack_ns"])
        bound = p["sector_bound_gbps"]
        row = [p["type"], str(b), "%d%s" % (s, " (2b)" if s == 2 * b else ""), fmt_bytes(n), "%.1f" % ours]
        if have_torch:
            t = gbps(n, p.get("torch_ns"))
            row += ["%.1f" % t, ratio_text(p["torch_ns"] / p["pack_ns"]) if p.get("torch_ns") else "-"]
        same = p.get("same_copy_ns")
        row += ["%.0f%%" % (100 * ours / bound), "%.0f%%" % (100 * ours / copy),
                "%.0f%%" % (100 * same / p["pack_ns"]) if same else "-"]
        if have_torch:
            row += ["%.0f%%" % (100 * gbps(n, p.get("torch_ns")) / bound)]
        host = p.get("host_path_ns")
        row += ["%.1f" % gbps(n, p["unpack_ns"])]
        if have_torch:
            tu = p.get("torch_unpack_ns")
            row += ["%.1f" % gbps(n, tu) if tu else "-", ratio_text(tu / p["unpack_ns"]) if tu else "-"]
        row += ["%.2f" % gbps(n, host) if host else "-", ratio_text(host / p["pack_ns"]) if host else "-"]
        out.append("| " + " | ".join(row) + " |")

    out.append("")
    out.append("### Summary")
    out.append("")
    if have_torch:
        tgt = [p for p in data["points"] if 8 <= p["block"] <= 256 and p["packed_bytes"] >= (4 << 20)
               and p.get("torch_ns")]
        if tgt:
            r = sorted(p["torch_ns"] / p["pack_ns"] for p in tgt)
            worst = min(tgt, key=lambda p: p["torch_ns"] / p["pack_ns"])
            out.append("- 8-256 B blocks at >= 4 MiB (%d points): ours/PyTorch min %.2fx (%s %d B s %d x %s), "
                       "median %.2fx (target >= 2x: %s)" %
                       (len(r), r[0], worst["type"], worst["block"], worst["stride"],
                        fmt_bytes(worst["packed_bytes"]), r[len(r) // 2], "met" if r[0] >= 2 else "NOT met"))
        ubelow = [p for p in data["points"] if p.get("torch_unpack_ns") and p["torch_unpack_ns"] < p["unpack_ns"]]
        out.append("- unpack points where PyTorch's copy into the strided view is faster: %d%s" % (
            len(ubelow), (": " + "; ".join("%s %d B s %d x %s (%.2fx)" % (
                p["type"], p["block"], p["stride"], fmt_bytes(p["packed_bytes"]), p["torch_unpack_ns"] / p["unpack_ns"])
                for p in ubelow)) if ubelow else ""))
        below = [p for p in data["points"] if p.get("torch_ns") and p["torch_ns"] < p["pack_ns"]]
        out.append("- points where PyTorch is faster: %d%s" % (
            len(below), (": " + "; ".join("%s %d B s %d x %s (%.2fx)" % (
                p["type"], p["block"], p["stride"], fmt_bytes(p["packed_bytes"]), p["torch_ns"] / p["pack_ns"])
                for p in below)) if below else ""))
    big = [p for p in data["points"] if p["block"] >= 128 and p["packed_bytes"] >= (16 << 20)]
    if big:
        share = min(gbps(p["packed_bytes"], p["pack_ns"]) / copy for p in big)
        same = [p["same_copy_ns"] / p["pack_ns"] for p in big if p.get("same_copy_ns")]
        out.append("- blocks >= 128 B at >= 16 MiB (%d points): >= %.0f%% of the copy rate (target >= 80%%: %s)%s" %
                   (len(big), 100 * share, "met" if share >= 0.8 else "NOT met",
                    ", >= %.0f%% of a copy of the same size" % (100 * min(same)) if same else ""))
    for s in data.get("skipped", []):
        out.append("- skipped: %s" % s)

    if latency and data.get("latency"):
        out.append("")
        out.append("### Latency: blocking pack (launch + synchronize), host clock, median of 500")
        out.append("")
        lh = ["type", "block B", "stride B", "packed", "ours pack µs", "ours p90 µs", "ours unpack µs"]
        if have_torch:
            lh += ["PyTorch µs", "PyTorch p90 µs"]
        out.append("| " + " | ".join(lh) + " |")
        out.append("|" + "|".join(" --- " if i < 4 else " ---: " for i in range(len(lh))) + "|")
        worst = 0.0
        for p in data["latency"]:
            worst = max(worst, p["pack_ns"] * 1e-3, p["unpack_ns"] * 1e-3)
            row = [p["type"], str(p["block"]), str(p["stride"]), fmt_bytes(p["packed_bytes"]),
                   "%.2f" % (p["pack_ns"] * 1e-3), "%.2f" % (p["pack_p90_ns"] * 1e-3),
                   "%.2f" % (p["unpack_ns"] * 1e-3)]
            if have_torch:
                row += ["%.2f" % (p.get("torch_ns", 0) * 1e-3), "%.2f" % (p.get("torch_p90_ns", 0) * 1e-3)]
            out.append("| " + " | ".join(row) + " |")
        out.append("")
        out.append("- worst median %.2f µs (target <= 8 µs for <= 64 KiB: %s)" % (worst, "met" if worst <= 8 else
                                                                                "NOT met"))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", help="strata-bench-pack (default: $STRATA_BENCH_PACK or the newest build*/)")
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--json-out", help="write the merged measurements here")
    ap.add_argument("--no-torch", action="store_true", help="no PyTorch column")
    ap.add_argument("--latency", action="store_true", help="also the blocking-latency points")
    args, rest = ap.parse_known_args()
    if rest and rest[0] == "--":
        rest = rest[1:]
    bench = args.bench or find_bench()
    if not bench or not os.path.exists(bench):
        raise SystemExit("strata-bench-pack not found: build it (docs/bench-pack.md) or pass --bench")
    quick = "--quick" in rest
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "device.json")
        cmd = [bench, "--device", "--json", path] + (["--latency"] if args.latency else []) + rest
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        print("running: %s" % " ".join(cmd), file=sys.stderr)
        # Its table goes to stderr here: the merged one below is the result.
        rc = subprocess.run(cmd, env=env, stdout=sys.stderr).returncode
        if rc != 0:
            raise SystemExit("strata-bench-pack exited with %d" % rc)
        if not os.path.exists(path):
            print("strata-bench-pack wrote no results (no GPU?): nothing to compare")
            return 0
        with open(path) as f:
            data = json.load(f)
    have_torch = False
    if not args.no_torch:
        try:
            measure_torch(data, Timing(quick), args.latency)
            have_torch = any("torch_ns" in p for p in data["points"])
        except ImportError:
            print("no PyTorch here: no PyTorch column", file=sys.stderr)
    text = report(data, have_torch, args.latency)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(data, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
