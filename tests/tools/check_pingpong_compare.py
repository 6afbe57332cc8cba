#!/usr/bin/env python3
"""pingpong-compare.sh with a stand-in benchmark (fake_pingpong.sh: no GPU):
--osu prints, per block size, OSU columns whose latencies are the plain and
the auto run's, whose bandwidths are bytes / latency and whose ratio is
plain / auto; --json writes one strata-bench-pingpong document with every
run's rows (plain: staging app; each method: staging none) and the bench's
version and commit. The markdown table is still the default.
Usage: check_pingpong_compare.py COMPARE_SCRIPT FAKE_BENCH PRELOAD.
Prints "ok ..." or "FAILED ..." (exit 1)."""
import json
import os
import subprocess
import sys
import tempfile

script, bench, preload = sys.argv[1:4]


def fail(why):
    print("FAILED", why)
    sys.exit(1)


def run(*extra):
    r = subprocess.run(["bash", script, "--bench", bench, "--preload", preload, *extra], capture_output=True,
                       text=True)
    if r.returncode != 0:
        fail(f"{extra}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


def expected_us(staging, method, block, size):
    factor = 40 if staging == "app" else {"oneshot": 12, "staged": 16, "span": 30, "ipc": 5, "default": 6}.get(method, 10)
    return round(5 + factor * size / 65536 * (2 if block == 8 else 1), 3)


def main():
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "pp.json")
        osu = run("--osu", "--json", path)
        with open(path) as f:
            doc = json.load(f)
    sections = {}
    block = None
    for line in osu.splitlines():
        if line.startswith("# hvector of "):
            block = int(line.split()[3])
            sections[block] = []
        elif line.startswith("# Size"):
            if block is None or "Plain Latency (us)" not in line or not line.rstrip().endswith("Ratio"):
                fail(f"header: {line!r}")
        elif line and not line.startswith("#"):
            fields = line.split()
            if len(fields) != 6 or block is None:
                fail(f"not an OSU line: {line!r}")
            sections[block].append([int(fields[0])] + [float(v) for v in fields[1:]])
    if sorted(sections) != [8, 64]:
        fail(f"sections {sorted(sections)}:\n{osu}")
    for block, rows in sections.items():
        if [r[0] for r in rows] != [1024, 65536]:
            fail(f"sizes of block {block}: {[r[0] for r in rows]}")
        for size, plain, ours, plain_bw, ours_bw, ratio in rows:
            want = (expected_us("app", "", block, size), expected_us("none", "auto", block, size))
            if abs(plain - want[0]) > 0.006 or abs(ours - want[1]) > 0.006:
                fail(f"block {block}, {size} B: latencies {plain}, {ours}; the runs said {want}")
            # From the runs' times, not the printed (rounded) latencies.
            if abs(plain_bw - size / want[0]) > 0.006 or abs(ours_bw - size / want[1]) > 0.006:
                fail(f"block {block}, {size} B: bandwidths {plain_bw}, {ours_bw}")
            if abs(ratio - want[0] / want[1]) > 0.006:
                fail(f"block {block}, {size} B: ratio {ratio}, plain / ours {plain / ours:.3f}")
    if doc.get("tool") != "strata-bench-pingpong" or doc.get("version") != "9.8.7" or doc.get("git_commit") != "fake123":
        fail(f"metadata: { {k: v for k, v in doc.items() if k != 'rows'} }")
    configs = {}
    for row in doc.get("rows", []):
        configs.setdefault((row["staging"], row["method"]), []).append(row)
        if row["us"] != expected_us(row["staging"], row["method"], row["block"], row["bytes"]):
            fail(f"row {row}")
    want = {("app", "auto"), ("none", "oneshot"), ("none", "staged"), ("none", "span"), ("none", "auto")}
    if set(configs) != want or any(len(rows) != 4 for rows in configs.values()):
        fail(f"rows per configuration: { {k: len(v) for k, v in configs.items()} }")
    usage = subprocess.run(["bash", script, "--help"], capture_output=True, text=True)
    if usage.returncode != 0 or "--osu" not in usage.stdout or "--json FILE" not in usage.stdout:
        fail(f"--help: exit {usage.returncode}\n{usage.stdout}{usage.stderr}")
    table = run()
    if "| block B | bytes | plain, staged by hand" not in table or "# Size" in table or "ipc" in table:
        fail(f"default output:\n{table}")
    # --ipc: the device-direct run's time, the default run's (the runtime's
    # own choice), the peer copy floor and default / best (the stand-in's
    # ipc factor 5 is the best, the default's 6).
    rows = [line.split("|")[1:-1] for line in run("--ipc").splitlines() if line.startswith("| ")]
    if not rows or "strata ipc" not in rows[0][7] or "strata default" not in rows[0][8] or \
            "peer copy (µs)" not in rows[0][10] or "default / best" not in rows[0][13]:
        fail(f"--ipc header: {rows[:1]}")
    for cells in rows[2:]:
        block, size = int(cells[0]), int(cells[1])
        want_ipc = round(5 + 5 * size / 65536 * (2 if block == 8 else 1), 1)
        want_default = round(5 + 6 * size / 65536 * (2 if block == 8 else 1), 1)
        want_ratio = expected_us("none", "default", block, size) / expected_us("none", "ipc", block, size)
        if abs(float(cells[7]) - want_ipc) > 0.05 or abs(float(cells[8]) - want_default) > 0.05 or \
                abs(float(cells[10]) - (2 + size / 65536)) > 0.05 or abs(float(cells[13]) - want_ratio) > 0.01:
            fail(f"--ipc row {cells}: want ipc {want_ipc}, default {want_default}, default / best {want_ratio:.2f}")
    print(f"ok OSU columns of {len(sections)} block sizes and {len(doc['rows'])} JSON rows checked")


main()
