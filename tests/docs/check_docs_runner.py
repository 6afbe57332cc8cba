#!/usr/bin/env python3
"""run_docs_commands.py on tests/docs/fixtures: a marked block that passes
is reported ok; one that outlives its timeout and one whose middle command
fails are failures (exit 1); a block whose required tool is missing is
skipped; an unmarked block never runs; a tool whose --help no block runs is
a failure; a mark without a block is an error.
Usage: check_docs_runner.py RUNNER FIXTURES_DIR BUILD_DIR.
Prints "ok ..." or "FAILED ..." (exit 1)."""
import subprocess
import sys

runner, fixtures, build = sys.argv[1:4]


def fail(why, output=""):
    print("FAILED", why)
    print(output)
    sys.exit(1)


def runner_output(*files, tools):
    r = subprocess.run([sys.executable, runner, "--source", fixtures, "--build", build, "--tools", tools,
                        "--help-of", "fake-tool,another-tool", *files], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


rc, out = runner_output(f"{fixtures}/sample.md",
                        tools=f"fake-tool={fixtures}/fake-tool,another-tool=/bin/true")
expected = [
    ("ok sample.md:6 (", "the passing block"),
    ("FAILED sample.md:15: timed out after 2 s", "the block past its timeout"),
    ("FAILED sample.md:23: exit 1", "the block whose command fails"),
    ("skipped sample.md:32: no-such-tool-here not here", "the block that needs a missing tool"),
    ("FAILED no runnable block runs `another-tool --help`", "the tool without --help"),
    ("3 blocks run, 3 failures, 1 skipped", "the count"),
]
if rc != 1:
    fail(f"exit {rc}, expected 1", out)
for text, what in expected:
    if text not in out:
        fail(f"{what}: no {text!r}", out)
for text in ("never printed", "exit 4", "`fake-tool --help`"):
    if text in out:
        fail(f"{text!r} in the output", out)
rc, out = runner_output(f"{fixtures}/unclosed.md", tools="")
if rc != 1 or "is not followed by a fenced code block" not in out:
    fail(f"a mark without a block: exit {rc}", out)
print("ok the runner passes, fails, times out, skips and checks --help as documented")
