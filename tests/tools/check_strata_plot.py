#!/usr/bin/env python3
"""strata-plot against small result files (tests/tools/fixtures): each chart
is written, is a PNG of a plausible size, and the plot step is not a no-op
(two inputs give two different images); a file of another tool exits 1 and
a usage error 2. Usage: check_strata_plot.py STRATA_PLOT FIXTURES_DIR.
Prints "ok ..." or the failure; exits 77 (skipped) without matplotlib."""
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("skipped: matplotlib is missing (python3-matplotlib)")
    sys.exit(77)

plot, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
PNG = b"\x89PNG\r\n\x1a\n"


def run(*args):
    return subprocess.run([sys.executable, plot, *map(str, args)], capture_output=True, text=True)


def main():
    digests = set()
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        for name in ("bench-coll.json", "bench-pack.json"):
            out = work / (name + ".png")
            r = run(fixtures / name, "-o", out)
            if r.returncode != 0:
                return f"{name}: exit {r.returncode}: {r.stderr}"
            data = out.read_bytes() if out.exists() else b""
            if not data.startswith(PNG) or len(data) < 10_000:
                return f"{name}: not a chart ({len(data)} bytes)"
            digests.add(hashlib.sha256(data).hexdigest())
        if len(digests) != 2:
            return "two different results gave the same image"
        other = work / "other.json"
        other.write_text(json.dumps({"tool": "strata-topo"}))
        r = run(other)
        if r.returncode != 1 or "not a result of" not in r.stderr:
            return f"another tool's JSON: exit {r.returncode}, {r.stderr!r}"
        r = run("--no-such-option")
        if r.returncode != 2:
            return f"usage error: exit {r.returncode}"
    return None


failure = main()
if failure:
    print("FAILED", failure)
    sys.exit(1)
print("ok two charts written and checked")
