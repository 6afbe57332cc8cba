#!/usr/bin/env python3
"""strata-measure's device collectives and the cost model's fit (tools/measure/
coll_measure.cpp), end to end: runs the MPI command given after `--` (two
ranks of strata-measure --quick --no-transfer --out FILE, on the device
stand-in of a CPU build) and checks the model file it wrote: the "links" ->
"device" entry of the one level the samples were taken on, with figures the
model reads (collectives/model/link_file.cpp), and every collective's samples.
With --collectives-only the file exists before the run and its other
sections must be kept. Exit 77 (skipped) on a build whose ranks have no GPU."""
import json
import math
import subprocess
import sys

COLLECTIVES = {"allreduce", "reduce_scatter", "allgather", "broadcast", "reduce"}


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def figures_ok(entry, required):
    return all(isinstance(entry.get(k), (int, float)) and math.isfinite(entry[k]) for k in required) and \
        entry["gbps"] > 0 and entry["alpha_us"] >= 0 and entry["call_us"] >= 0


def main():
    out, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    update = "--collectives-only" in command
    if update:
        with open(out, "w") as f:
            json.dump({"kept": [1, 2]}, f)
    run = subprocess.run(command, capture_output=True, text=True, timeout=240)
    if run.returncode != 0 and "need a GPU on every rank" not in run.stderr:
        fail("strata-measure exited %d:\n%s" % (run.returncode, run.stderr[-3000:]))
    if "no device figures" in run.stderr or "need a GPU on every rank" in run.stderr:
        print("skip: no GPU on every rank (build with a GPU backend and no GPU)")
        sys.exit(77)
    doc = json.load(open(out))
    if update and doc.get("kept") != [1, 2]:
        fail("the model file's other sections were not kept: %s" % sorted(doc))
    coll = doc.get("collectives")
    if not coll:
        fail("no \"collectives\" section:\n" + run.stderr[-2000:])
    level = coll["level"]
    links = doc.get("links", {}).get("device", {})
    if list(links) != [level]:
        fail("links.device has %s, the samples were taken on level %r" % (sorted(links), level))
    entry = links[level]
    if not figures_ok(entry, ("gbps", "alpha_us", "call_us")):
        fail("bad figures for %s: %s" % (level, entry))
    if "small" in entry and not figures_ok(entry["small"], ("gbps", "alpha_us", "call_us")):
        fail("bad small-message regime: %s" % entry["small"])
    seen = {}
    for s in coll["samples"]:
        if not (s["us"] > 0 and math.isfinite(s["us"]) and s["bytes"] > 0):
            fail("bad sample %s" % s)
        seen.setdefault(s["collective"], set()).add(s["bytes"])
    if set(seen) != COLLECTIVES or any(len(sizes) < 2 for sizes in seen.values()):
        fail("samples per collective: %s" % {c: sorted(v) for c, v in seen.items()})
    for key in ("max_error_from_1MiB", "max_error_below_1MiB"):
        if not (coll[key] >= 0 and math.isfinite(coll[key])):
            fail("%s = %s" % (key, coll[key]))
    if "level %s: bulk" % level not in run.stderr:
        fail("the fit was not printed:\n" + run.stderr[-2000:])
    print("ok level %s, %d samples, %.4g GB/s" % (level, len(coll["samples"]), entry["gbps"]))


main()
