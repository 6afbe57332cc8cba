#!/usr/bin/env python3
"""strata-halo-compare --json: runs the compare script (the arguments after
this script's own) with --json into a scratch file and checks the document
against the table the same run printed: the tool and metadata, one row with
the setup, each mode's min <= median <= max, the ratio plain / preloaded
(as the table rounds it), verified, and the default label naming the
setup. Prints "ok ..." or "FAILED ..." (exit 1).
Usage: check_halo_compare_json.py COMPARE [compare arguments...]"""
import json
import os
import re
import subprocess
import sys
import tempfile


def fail(why):
    print("FAILED", why)
    sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "halo.json")
        run = subprocess.run(sys.argv[1:] + ["--json", path], capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"exit {run.returncode}:\n{run.stdout}{run.stderr}")
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"no JSON: {e}\n{run.stdout}{run.stderr}")
    for key in ("command", "host", "time_utc", "preload"):
        if not doc.get(key):
            fail(f"no {key}: {doc}")
    if doc.get("tool") != "strata-halo-compare" or len(doc.get("rows", [])) != 1:
        fail(f"tool or rows: {doc}")
    row = doc["rows"][0]
    for mode in ("plain", "preloaded"):
        low, mid, high = row[f"{mode}_min_us"], row[f"{mode}_us"], row[f"{mode}_max_us"]
        if not 0 < low <= mid <= high:
            fail(f"{mode}: min {low}, median {mid}, max {high}")
        line = re.search(rf"^\| {mode} \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9]+) \| (yes|no) \| ([0-9.]+) \|$",
                         run.stdout, re.M)
        if not line:
            fail(f"no {mode} line in the table:\n{run.stdout}")
        if [float(v) for v in line.groups()[:3]] != [mid, low, high] or int(line[4]) != row["bytes_per_exchange"]:
            fail(f"{mode}: the table says {line.groups()}, the JSON {row}")
        if mode == "preloaded" and float(line[6]) != row["ratio"]:
            fail(f"ratio: the table says {line[6]}, the JSON {row['ratio']}")
    if abs(row["ratio"] - row["plain_us"] / row["preloaded_us"]) > 0.006:
        fail(f"ratio {row['ratio']} is not plain / preloaded")
    if row["verified"] is not True:
        fail("not verified")
    expected = f"{row['ranks']} ranks, grid {'x'.join(map(str, row['grid']))}, radius {row['radius']}"
    if not row["label"].startswith(expected):
        fail(f"label {row['label']!r}, expected it to start with {expected!r}")
    print(f"ok one row: plain {row['plain_us']} us, preloaded {row['preloaded_us']} us, ratio {row['ratio']}")


main()
