#!/usr/bin/env python3
"""strata-bench-overhead's judgement of saved samples (--reanalyse): made-up
runs whose answer is known, against the verdict, the fastest-half ratio and
the A/A column.
- every preloaded run 10% slower, plain and plain again alike: "slower";
- preloaded 10% slower, plain again just as far from plain: "noise";
- half the runs of each configuration in a 3x slow mode, drawn unevenly
  (the median of all runs says 0.5x), the fast runs alike: "ok" on the
  fastest halves;
- a null call 20 ns slower: "slower" (the 15 ns budget), 5 ns: "ok".
Usage: check_bench_overhead.py BENCH_OVERHEAD_PY. Prints "ok ..." or
"FAILED ..." (exit 1)."""
import json
import os
import subprocess
import sys
import tempfile

driver = sys.argv[1]


def fail(why):
    print("FAILED", why)
    sys.exit(1)


def point(case, nbytes, **samples):
    base = samples.pop("base")
    configs = {"plain": base, "preloaded": base, "disabled": base, "minimal": base, "plain-again": base}
    configs.update(samples)
    return {"case": case, "bytes": nbytes, "samples": configs}


fast, slow = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98], [3.0] * 6
doc = {"tool": "strata-bench-overhead", "np": 2, "rounds": 6, "rank_args": [], "points": [
    point("vector", 64, base=fast, preloaded=[x * 1.1 for x in fast]),
    point("vector", 256, base=fast, preloaded=[x * 1.1 for x in fast], **{"plain-again": [x * 1.12 for x in fast]}),
    # plain: 2 slow runs of 6; preloaded: 4 of 6 (its median is in the slow mode)
    point("vector", 1024, base=fast, plain=fast[:4] + slow[:2], preloaded=fast[:2] + slow[:4]),
    point("null-send", 1, base=[0.010] * 6, preloaded=[0.030] * 6),
    point("null-recv", 1, base=[0.010] * 6, preloaded=[0.015] * 6),
]}
expected = {("vector", 64): "slower", ("vector", 256): "noise", ("vector", 1024): "ok",
            ("null-send", 1): "slower", ("null-recv", 1): "ok"}

with tempfile.TemporaryDirectory() as tmp:
    saved, again = os.path.join(tmp, "saved.json"), os.path.join(tmp, "again.json")
    with open(saved, "w") as f:
        json.dump(doc, f)
    r = subprocess.run([sys.executable, driver, "--reanalyse", saved, "--json", again], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"exit {r.returncode}\n{r.stdout}{r.stderr}")
    with open(again) as f:
        rows = {(p["case"], p["bytes"]): p for p in json.load(f)["points"]}
for key, verdict in expected.items():
    if key not in rows:
        fail(f"{key}: no row")
    if rows[key]["verdict"] != verdict:
        fail(f"{key}: verdict {rows[key]['verdict']}, expected {verdict}")
row = rows[("vector", 1024)]
if not (row["ratio"] < 0.6 and 0.97 <= row["ratio_fast"] <= 1.03):
    fail(f"vector 1024: ratio {row['ratio']:.3f} (all runs), {row['ratio_fast']:.3f} (fastest half)")
if abs(rows[("vector", 256)]["aa_ratio_fast"] - 1 / 1.12) > 0.01:
    fail(f"vector 256: A/A {rows[('vector', 256)]['aa_ratio_fast']:.3f}, expected {1 / 1.12:.3f}")
if "beyond the A/A spread: null-send 1 B" not in r.stdout or "vector 64 B" not in r.stdout:
    fail(f"summary line:\n{r.stdout}")
print(f"ok {len(expected)} verdicts, the fastest half and the A/A column as expected")
