#!/usr/bin/env python3
"""strata-plot against small result files (tests/tools/fixtures): each kind
of result gives a chart that is written, is a PNG of a plausible size, and
differs from every other chart (the plot step is not a no-op); a ping-pong
without the plain run has no ratio panel (a shorter image); several OSU
files make one chart, a bandwidth one (osu_bw) its own, not with a
latency one. A malformed file of each kind, a file that is not
JSON, a file of another tool and a mix of tools exit 1; usage errors 2.
Usage: check_strata_plot.py STRATA_PLOT FIXTURES_DIR.
Prints "ok ..." or the failure; exits 77 (skipped) without matplotlib."""
import hashlib
import json
import pathlib
import struct
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
# fixture: the list (rows or points) a malformed copy loses its numbers in
FIXTURES = {
    "bench-coll.json": "rows",
    "bench-pack.json": "points",
    "bench-pack-device.json": "points",
    "bench-pingpong.json": "rows",
    "bench-fused.json": "rows",
    "halo-compare.json": "rows",
    "osu-compare.json": "points",
    "bench-overhead.json": "points",
}


def run(*args):
    return subprocess.run([sys.executable, plot, *map(str, args)], capture_output=True, text=True)


def png_size(data):
    """(width, height) from the PNG's IHDR chunk."""
    return struct.unpack(">II", data[16:24])


def chart(source, out):
    """Renders `source` (a path or several) into `out`; the PNG's bytes, or
    raises with what went wrong."""
    sources = source if isinstance(source, list) else [source]
    r = run(*sources, "-o", out)
    if r.returncode != 0:
        raise AssertionError(f"{[s.name for s in sources]}: exit {r.returncode}: {r.stderr}")
    data = out.read_bytes() if out.exists() else b""
    if not data.startswith(PNG) or len(data) < 10_000:
        raise AssertionError(f"{[s.name for s in sources]}: not a chart ({len(data)} bytes)")
    return data


def expect_exit(code, text, *args):
    r = run(*args)
    if r.returncode != code or text not in r.stderr:
        raise AssertionError(f"{args}: expected exit {code} and {text!r}, got {r.returncode}: {r.stderr!r}")


def malformed(doc, key):
    """The same document with every number of its rows or points replaced
    by a string (the shape a broken writer or a hand edit leaves)."""
    bad = json.loads(json.dumps(doc))
    for item in bad[key]:
        for k, v in list(item.items()):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                item[k] = "n/a"
    return bad


def main():
    digests = {}
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        for name, key in FIXTURES.items():
            data = chart(fixtures / name, work / (name + ".png"))
            digest = hashlib.sha256(data).hexdigest()
            if digest in digests:
                raise AssertionError(f"{name} and {digests[digest]} gave the same image")
            digests[digest] = name
            doc = json.loads((fixtures / name).read_text())
            bad = work / ("bad-" + name)
            bad.write_text(json.dumps(malformed(doc, key)))
            expect_exit(1, "cannot plot", bad)
            empty = work / ("empty-" + name)
            empty.write_text(json.dumps(dict(doc, **{key: []})))
            expect_exit(1, "cannot plot", empty)

        # Without the plain (staged) run there is no peer: two panels, not three.
        pingpong = json.loads((fixtures / "bench-pingpong.json").read_text())
        alone = work / "pingpong-strata-only.json"
        alone.write_text(json.dumps(dict(pingpong, rows=[r for r in pingpong["rows"] if r["staging"] != "app"])))
        with_peer = png_size((work / "bench-pingpong.json.png").read_bytes())
        without = png_size(chart(alone, work / "alone.png"))
        if not without[1] < with_peer[1]:
            raise AssertionError(f"ping-pong without a peer: {without} is not shorter than {with_peer}")

        # Two OSU benchmarks, one chart, unlike the one of the first alone.
        two = chart([fixtures / "osu-compare.json", fixtures / "osu-compare-gather.json"], work / "osu-two.png")
        if hashlib.sha256(two).hexdigest() in digests:
            raise AssertionError("two OSU files drew the same chart as one")

        # A bandwidth benchmark (MB/s, higher is better) draws its own
        # chart; with a latency one on the same chart it is refused.
        osu = json.loads((fixtures / "osu-compare.json").read_text())
        bw = work / "osu-bw.json"
        bw.write_text(json.dumps(dict(osu, benchmark=["pt2pt/standard/osu_bw", "-d", "cuda"])))
        if hashlib.sha256(chart(bw, work / "osu-bw.png")).hexdigest() in digests:
            raise AssertionError("osu_bw drew the chart of a latency benchmark")
        expect_exit(1, "latency and bandwidth", fixtures / "osu-compare.json", bw, "-o", work / "osu-mixed.png")

        # --csv: the rows as a table, a column per key, the values as in the JSON.
        import csv
        table = work / "coll.csv"
        if run(fixtures / "bench-coll.json", "-o", work / "coll-csv.png", "--csv", table).returncode != 0:
            raise AssertionError("--csv: the chart and the table were not written")
        coll = json.loads((fixtures / "bench-coll.json").read_text())["rows"]
        with open(table, newline="") as f:
            written = list(csv.DictReader(f))
        if len(written) != len(coll):
            raise AssertionError(f"--csv: {len(written)} rows, the JSON has {len(coll)}")
        for got, want in zip(written, coll):
            for key, value in want.items():
                text = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
                if got.get(key) != text:
                    raise AssertionError(f"--csv: {key} is {got.get(key)!r}, the JSON says {text!r}")

        other = work / "other.json"
        other.write_text(json.dumps({"tool": "strata-topo"}))
        expect_exit(1, "not a result of", other)
        broken = work / "broken.json"
        broken.write_text('{"tool": "strata-bench-pack", "points": [')
        expect_exit(1, "broken.json", broken)
        expect_exit(1, "the first file's is of", fixtures / "bench-pack.json", fixtures / "bench-coll.json", "-o",
                    work / "mixed.png")
        expect_exit(1, "one file at a time", fixtures / "bench-coll.json", fixtures / "bench-coll.json", "-o",
                    work / "coll-twice.png")
        expect_exit(2, "name it with -o", fixtures / "osu-compare.json", fixtures / "osu-compare-gather.json")
        expect_exit(2, "", "--no-such-option")
    return len(digests)


try:
    charts = main()
except AssertionError as e:
    print("FAILED", e)
    sys.exit(1)
print(f"ok {charts} kinds of chart written and checked, malformed files refused")
