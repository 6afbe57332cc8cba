#!/usr/bin/env python3
"""strata-osu-compare: one OSU micro-benchmark, unchanged, under the preload
in two configurations of Strata, alternated, on the same machine.

Each configuration is a list of STRATA_* settings (NAME=VALUE, comma
separated); the benchmark runs --rounds times per configuration, the order
alternating, and the table gives per message size the median of the
rounds' average latencies (OSU's "Avg Latency(us)") of each and A / B (> 1:
B is faster). Writes the same as JSON (--json; "tool": "strata-osu-compare",
the command, host and UTC time first; strata-plot draws it).

  strata-osu-compare --osu DIR --preload libstrata_preload.so \\
      --a STRATA_COLL_EXCHANGE=library --b STRATA_COLL_EXCHANGE=nccl \\
      -- collective/blocking/osu_alltoall -d cuda -m 1:4194304
"""
import argparse
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import time


def settings(text):
    return [s for s in text.split(",") if s]


def run_once(args, config):
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    cmd = [args.mpirun, "-np", str(args.np)] + shlex.split(args.mpirun_args) + ["-x", "LD_PRELOAD=" + args.preload]
    for s in config:
        cmd += ["-x", s]
    cmd += [os.path.join(args.osu, args.benchmark[0])] + args.benchmark[1:]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if out.returncode != 0:
        sys.stderr.write(out.stdout[-2000:] + out.stderr[-2000:])
        raise SystemExit("strata-osu-compare: %s with %s failed (exit %d)" % (args.benchmark[0], config,
                                                                              out.returncode))
    points = {}
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].isdigit():
            try:
                points[int(fields[0])] = float(fields[1])
            except ValueError:
                pass
    return points


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--osu", required=True, help="the OSU build's c/mpi folder")
    ap.add_argument("--preload", required=True)
    ap.add_argument("--a", default="", help="configuration A: NAME=VALUE,...")
    ap.add_argument("--b", default="", help="configuration B: NAME=VALUE,...")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpirun-args", default="")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("benchmark", nargs="+", help="the benchmark (relative to --osu) and its options")
    args = ap.parse_args()
    configs = {"A": settings(args.a), "B": settings(args.b)}
    runs = {"A": [], "B": []}
    for r in range(args.rounds):
        for name in (("A", "B") if r % 2 == 0 else ("B", "A")):
            runs[name].append(run_once(args, configs[name]))
    sizes = sorted(set(runs["A"][0]) & set(runs["B"][0]))
    rows = []
    for size in sizes:
        a = statistics.median(p[size] for p in runs["A"] if size in p)
        b = statistics.median(p[size] for p in runs["B"] if size in p)
        rows.append({"bytes": size, "a_us": a, "b_us": b, "a_over_b": a / b if b > 0 else 0.0,
                     "samples": {"A": [p.get(size) for p in runs["A"]], "B": [p.get(size) for p in runs["B"]]}})
    name = os.path.basename(args.benchmark[0])
    # osu_bw, osu_bibw, osu_mbw_mr print MB/s (higher is better), kept under
    # the same keys; the table says which.
    bandwidth = any(tag in name for tag in ("_bw", "_bibw", "_mbw"))
    unit, ratio = ("MB/s", "B / A") if bandwidth else ("µs", "A / B")
    print("%s, %d ranks; A: %s; B: %s" % (name, args.np, args.a or "(defaults)", args.b or "(defaults)"))
    print("| bytes | A %s | B %s | %s (> 1: B is better) |" % (unit, unit, ratio))
    print("| ---: | ---: | ---: | ---: |")
    for row in rows:
        better = (1.0 / row["a_over_b"] if row["a_over_b"] > 0 else 0.0) if bandwidth else row["a_over_b"]
        print("| %d | %.2f | %.2f | %.2f |" % (row["bytes"], row["a_us"], row["b_us"], better))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "strata-osu-compare", "command": " ".join(map(shlex.quote, sys.argv)),
                       "host": socket.gethostname(),
                       "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "benchmark": args.benchmark, "np": args.np, "rounds": args.rounds, "a": configs["A"],
                       "b": configs["B"], "points": rows}, f, indent=1)


if __name__ == "__main__":
    main()
