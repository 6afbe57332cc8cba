#!/usr/bin/env python3
"""strata-bench-overhead: what libstrata_preload.so costs where it cannot help.

Runs strata-bench-overhead-rank (a plain MPI program) under mpirun in four
configurations - plain (the library alone), preloaded, preloaded with
STRATA_DISABLE=1, and minimal (the control: a preloaded library that only
forwards each call, the floor of any LD_PRELOAD interposer; --minimal PATH,
left out where it was not built) - alternated for --rounds rounds (the order rotates each
round, so drift of the machine hits every configuration alike), and prints
per point the median one-way time (ping-pongs) or call time (allreduce) of
each, the nanoseconds the preload adds (and, past the control's, what
Strata's own code adds), and plain / preloaded (>= 1.0: the
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
ALL_CONFIGS = ("plain", "preloaded", "disabled", "minimal")


def path_file(name):
    path = os.path.join(HERE, name)
    if os.path.exists(path):
        with open(path) as f:
            return f.readline().strip()
    return ""


def default_preload():
    return path_file("strata-bench-overhead.preload")


def run_once(args, config):
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    cmd = [args.mpirun, "-np", str(args.np)] + shlex.split(args.mpirun_args)
    if config == "minimal":
        cmd += ["-x", "LD_PRELOAD=" + args.minimal]
    elif config != "plain":
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
    ap.add_argument("--minimal", default=path_file("strata-bench-overhead.minimal"),
                    help="the control library (forwarding only); empty: no minimal column")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpirun-args", default="", help="extra mpirun options, e.g. '--bind-to core'")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", help="write the table here too")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("rank_args", nargs="*", help="options of strata-bench-overhead-rank (after --)")
    args = ap.parse_args()
    if not os.path.exists(args.preload):
        raise SystemExit("strata-bench-overhead: no preload library (--preload PATH)")

    configs = ALL_CONFIGS if args.minimal and os.path.exists(args.minimal) else ALL_CONFIGS[:3]
    runs = {c: [] for c in configs}
    for r in range(args.rounds):
        k = r % len(configs)
        order = configs[k:] + configs[:k]
        for config in order:
            sys.stderr.write("round %d/%d: %s\n" % (r + 1, args.rounds, config))
            runs[config].append(run_once(args, config))

    keys = sorted(set().union(*[set(p) for p in runs["plain"]]), key=lambda k: (k[0], k[1]))
    rows = []
    for key in keys:
        med = {c: statistics.median(p[key] for p in runs[c] if key in p) for c in configs}
        row = {
            "case": key[0], "bytes": key[1],
            "plain_us": med["plain"], "preloaded_us": med["preloaded"], "disabled_us": med["disabled"],
            "added_ns": (med["preloaded"] - med["plain"]) * 1e3,
            "added_disabled_ns": (med["disabled"] - med["plain"]) * 1e3,
            "ratio": med["plain"] / med["preloaded"] if med["preloaded"] > 0 else 0.0,
            "samples": {c: [p[key] for p in runs[c] if key in p] for c in configs},
        }
        if "minimal" in med:
            row["minimal_us"] = med["minimal"]
            row["added_minimal_ns"] = (med["minimal"] - med["plain"]) * 1e3
            row["strata_own_ns"] = (med["preloaded"] - med["minimal"]) * 1e3
        rows.append(row)

    minimal = "minimal" in configs
    lines = ["| case | bytes | plain µs | preloaded µs | disabled µs |" + (" minimal µs |" if minimal else "") +
             " added ns | added ns (disabled) |" + (" added ns (minimal) | Strata's own ns |" if minimal else "") +
             " plain / preloaded |",
             "| --- | ---: | ---: | ---: | ---: |" + (" ---: |" if minimal else "") + " ---: | ---: |" +
             (" ---: | ---: |" if minimal else "") + " ---: |"]
    for row in rows:
        cells = ["%s" % row["case"], "%d" % row["bytes"], "%.3f" % row["plain_us"], "%.3f" % row["preloaded_us"],
                 "%.3f" % row["disabled_us"]]
        if minimal:
            cells.append("%.3f" % row["minimal_us"])
        cells += ["%+.0f" % row["added_ns"], "%+.0f" % row["added_disabled_ns"]]
        if minimal:
            cells += ["%+.0f" % row["added_minimal_ns"], "%+.0f" % row["strata_own_ns"]]
        cells.append("%.3f" % row["ratio"])
        lines.append("| " + " | ".join(cells) + " |")
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
