#!/usr/bin/env python3
"""Runs the code blocks of docs/*.md (and the README) that are marked as
runnable, against a build tree, and checks that every tool's --help is
among them. A block is runnable when the line before its opening fence (blank
lines between allowed) is an HTML comment

    <!-- runnable -->
    <!-- runnable timeout=120 requires=strata-bench-pingpong,mpirun -->

(invisible on GitHub). The block runs as one bash script (`set -eo pipefail`:
any failing command fails it) with its timeout in seconds (default 60), in a
scratch folder where `build` and `build-bench` name the build tree and the
repository's top-level folders are linked, with every tool's folder and a
`python3` that has matplotlib first in PATH. `requires=` names tools (or
commands on PATH) without which the block is skipped, as GPU-only tools are
in a CPU build. docs/testing.md, "Commands in the docs".

Usage: run_docs_commands.py --source DIR --build DIR [--python PY]
           [--tools name=path,...] [--help-of name,...] [FILE.md ...]
Without files: README.md and docs/*.md of --source. Prints one line per
block ("ok", "FAILED", "skipped") and exits 1 when a block failed or a tool
of --help-of has no runnable block running its --help.
"""
import argparse
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MARK = re.compile(r"^<!--\s*runnable\b(?P<options>[^>]*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<fence>```+|~~~+)")
DEFAULT_TIMEOUT = 60


class Block:
    def __init__(self, path, line, text, timeout, requires):
        self.path, self.line, self.text, self.timeout, self.requires = path, line, text, timeout, requires

    def where(self, root):
        try:
            return f"{self.path.relative_to(root)}:{self.line}"
        except ValueError:
            return f"{self.path}:{self.line}"


def parse_options(text, path, line):
    timeout, requires = DEFAULT_TIMEOUT, []
    for item in text.split():
        key, _, value = item.partition("=")
        if key == "timeout" and value.isdigit() and int(value) > 0:
            timeout = int(value)
        elif key == "requires" and value:
            requires = [v for v in value.split(",") if v]
        else:
            raise SystemExit(f"{path}:{line}: unknown runnable option {item!r} (timeout=N, requires=a,b)")
    return timeout, requires


def blocks_of(path):
    """The runnable blocks of one markdown file."""
    lines = path.read_text().splitlines()
    found = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        if not m:
            i += 1
            continue
        timeout, requires = parse_options(m.group("options"), path, i + 1)
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = FENCE.match(lines[j]) if j < len(lines) else None
        if not fence:
            raise SystemExit(f"{path}:{i + 1}: <!-- runnable --> is not followed by a fenced code block")
        end = j + 1
        while end < len(lines) and not lines[end].startswith(fence.group("fence")):
            end += 1
        if end == len(lines):
            raise SystemExit(f"{path}:{j + 1}: the block never closes")
        found.append(Block(path, j + 1, "\n".join(lines[j + 1:end]) + "\n", timeout, requires))
        i = end + 1
    return found


def scratch_folder(source, build, tools, python):
    """A folder to run in: build trees and source folders linked, a PATH with
    the tools and a python3 with matplotlib first."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="strata-docs."))
    for name in ("build", "build-bench"):
        (work / name).symlink_to(build)
    for entry in source.iterdir():
        if not entry.name.startswith(".") and not (work / entry.name).exists() and not entry.name.startswith("build"):
            (work / entry.name).symlink_to(entry)
    shims = work / ".bin"
    shims.mkdir()
    if python:
        (shims / "python3").symlink_to(python)
    path = [str(shims)] + sorted({str(pathlib.Path(p).parent) for p in tools.values()}) + [os.environ.get("PATH", "")]
    return work, os.pathsep.join(path)


def have(name, tools, path):
    return name in tools or shutil.which(name, path=path) is not None


def run_block(block, work, path):
    env = dict(os.environ, PATH=path, HOME=str(work), STRATA_CACHE_DIR=str(work / ".cache"))
    started = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", "set -eo pipefail\n" + block.text], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True,
                            errors="replace")
    try:
        output, _ = proc.communicate(timeout=block.timeout)
        return proc.returncode, output, time.monotonic() - started
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return None, output, time.monotonic() - started


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, type=pathlib.Path)
    ap.add_argument("--build", required=True, type=pathlib.Path)
    ap.add_argument("--python", help="a python3 with matplotlib, first in the blocks' PATH")
    ap.add_argument("--tools", default="", help="name=path,... of the built tools")
    ap.add_argument("--help-of", default="", help="tools whose --help a runnable block must run (those built)")
    ap.add_argument("files", nargs="*", type=pathlib.Path)
    args = ap.parse_args(argv)
    source, build = args.source.resolve(), args.build.resolve()
    tools = {name: str(pathlib.Path(p).resolve())
             for name, p in (item.split("=", 1) for item in args.tools.split(",") if "=" in item)}
    files = [f.resolve() for f in args.files] or [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    blocks = [b for f in files for b in blocks_of(f)]
    work, path = scratch_folder(source, build, tools, args.python)
    failed = ran = 0
    try:
        for block in blocks:
            missing = [r for r in block.requires if not have(r, tools, path)]
            if missing:
                print(f"skipped {block.where(source)}: {', '.join(missing)} not here")
                continue
            rc, output, seconds = run_block(block, work, path)
            ran += 1
            if rc == 0:
                print(f"ok {block.where(source)} ({seconds:.1f} s)")
                continue
            failed += 1
            why = f"timed out after {block.timeout} s" if rc is None else f"exit {rc}"
            print(f"FAILED {block.where(source)}: {why}\n--- the block:\n{block.text}--- its output (end):")
            print("\n".join(output.splitlines()[-30:]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Every built tool's --help, in some runnable block.
    text = "\n".join(b.text for b in blocks)
    for name in [n for n in args.help_of.split(",") if n and n in tools]:
        if not re.search(rf"(^|[\s/]){re.escape(name)} --help\b", text, re.M):
            failed += 1
            print(f"FAILED no runnable block runs `{name} --help`")
    print(f"{ran} blocks run, {failed} failures, {len(blocks) - ran} skipped, in {len(files)} files")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
