#!/usr/bin/env python3
"""strata-bench-overhead: what libstrata_preload.so costs where it cannot help.

Runs strata-bench-overhead-rank (a plain MPI program) under mpirun in three
configurations - plain (the library alone), preloaded, and preloaded with
STRATA_DISABLE=1 - alternated for --rounds rounds (the order rotates each
round, so drift of the machine hits every configuration alike), and prints
per point the median one-way time (ping-pongs) or call time (allreduce) of
each, the nanoseconds the preload adds, and plain / preloaded (>= 1.0: the
preload is not slower). Writes the same as JSON (--json; "tool":
"strata-bench-overhead", the command, host and UTC time first; strata-plot
draws it).

  strata-bench-overhead [--np 2] [--rounds 3] [--json out.json] [--markdown out.md]
                        [--mpirun-args "..."] [-- rank-program options: pingpong vector allreduce ...]
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

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ("plain", "preloaded", "disabled")


def default_preload():
    path = os.path.join(HERE, "strata-bench-overhead.preload")
    if os.path.exists(path):
        with open(path) as f:
            return f.readline().strip()
    return ""


def run_once(args, config):
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    cmd = [args.mpirun, "-np", str(args.np)] + shlex.split(args.mpirun_args)
    if config != "plain":
        cmd += ["-x", "LD_PRELOAD=" + args.preload]
        cmd += ["-x", "STRATA_DISABLE=" + ("1" if config == "disabled" else "0")]
    cmd += [args.bench] + args.rank_args
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        raise SystemExit("strata-bench-overhead: the %s run failed (exit %d)" % (config, out.returncode))
    points = {}
    for line in out.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            p = json.loads(line)
            points[(p["case"], p["bytes"])] = p["us"]
    return points


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bench", default=os.path.join(HERE, "strata-bench-overhead-rank"))
    ap.add_argument("--preload", default=default_preload())
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpirun-args", default="", help="extra mpirun options, e.g. '--bind-to core'")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", help="write the table here too")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("rank_args", nargs="*", help="options of strata-bench-overhead-rank (after --)")
    args = ap.parse_args()
    if not os.path.exists(args.preload):
        raise SystemExit("strata-bench-overhead: no preload library (--preload PATH)")

    runs = {c: [] for c in CONFIGS}
    for r in range(args.rounds):
        order = CONFIGS[r % 3:] + CONFIGS[:r % 3]
        for config in order:
            sys.stderr.write("round %d/%d: %s\n" % (r + 1, args.rounds, config))
            runs[config].append(run_once(args, config))

    keys = sorted(set().union(*[set(p) for p in runs["plain"]]), key=lambda k: (k[0], k[1]))
    rows = []
    for key in keys:
        med = {c: statistics.median(p[key] for p in runs[c] if key in p) for c in CONFIGS}
        rows.append({
            "case": key[0], "bytes": key[1],
            "plain_us": med["plain"], "preloaded_us": med["preloaded"], "disabled_us": med["disabled"],
            "added_ns": (med["preloaded"] - med["plain"]) * 1e3,
            "added_disabled_ns": (med["disabled"] - med["plain"]) * 1e3,
            "ratio": med["plain"] / med["preloaded"] if med["preloaded"] > 0 else 0.0,
            "samples": {c: [p[key] for p in runs[c] if key in p] for c in CONFIGS},
        })

    lines = ["| case | bytes | plain µs | preloaded µs | disabled µs | added ns | added ns (disabled) | plain / preloaded |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        lines.append("| %s | %d | %.3f | %.3f | %.3f | %+.0f | %+.0f | %.3f |" % (
            row["case"], row["bytes"], row["plain_us"], row["preloaded_us"], row["disabled_us"], row["added_ns"],
            row["added_disabled_ns"], row["ratio"]))
    table = "\n".join(lines) + "\n"
    sys.stdout.write(table)
    worst = min(rows, key=lambda r: r["ratio"]) if rows else None
    if worst:
        sys.stdout.write("\nlowest plain / preloaded: %.3f (%s, %d bytes)\n" % (worst["ratio"], worst["case"],
                                                                               worst["bytes"]))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "strata-bench-overhead", "command": " ".join(map(shlex.quote, sys.argv)),
                       "host": socket.gethostname(),
                       "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "np": args.np, "rounds": args.rounds, "rank_args": args.rank_args, "points": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
