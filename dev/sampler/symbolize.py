#!/usr/bin/env python3
"""Profiles from dev/sampler/sampler.c's output.

  symbolize.py PREFIX.RANK [DIR ...] [--top N] [--under FUNCTION]

PREFIX.RANK.pcs and .maps0/.maps come from the sampler; each DIR is
searched for a library by its file name before the path the process
mapped (a build's libstrata_preload.so, say). Prints the self profile
(the innermost frame), the inclusive one (every function on the stack,
once per sample), and, for samples whose innermost frame lies outside
libstrata_preload.so, the innermost Strata frame that led there; writes
PREFIX.RANK.folded (one line per distinct stack, outermost first, and its
count: the input of flame-graph tools). --under keeps only the samples
with FUNCTION on their stack. Functions are named by addr2line (GNU
binutils); a library without symbols shows its nearest exported name.
"""
import argparse
import bisect
import collections
import os
import struct
import subprocess

DEPTH = 24  # sampler.c's kDepth


def read_samples(prefix):
    raw = open(prefix + '.pcs', 'rb').read()
    size = 8 * DEPTH
    records = [struct.unpack_from('<%dQ' % DEPTH, raw, i) for i in range(0, len(raw) - size + 1, size)]
    # A return address names the call site one byte back.
    return [tuple([r[0]] + [pc - 1 if pc else 0 for pc in r[1:]]) for r in records]


def read_maps(prefix):
    maps = {}
    for name in (prefix + '.maps0', prefix + '.maps'):
        if not os.path.exists(name):
            continue
        for line in open(name):
            p = line.split()
            if len(p) < 6 or 'x' not in p[1]:
                continue
            lo, hi = (int(x, 16) for x in p[0].split('-'))
            maps.setdefault(lo, (lo, hi, int(p[2], 16), p[5]))
    return sorted(maps.values())


def symbolizer(samples, maps, dirs):
    starts = [m[0] for m in maps]

    def where(pc):
        i = bisect.bisect_right(starts, pc) - 1
        if i >= 0 and maps[i][0] <= pc < maps[i][1]:
            return maps[i][3], pc - maps[i][0] + maps[i][2]
        return None, pc

    def local(path):
        for d in dirs:
            candidate = os.path.join(d, os.path.basename(path))
            if os.path.exists(candidate):
                return candidate
        return path if os.path.exists(path) else None

    located = {pc: where(pc) for r in samples for pc in r if pc}
    offsets = collections.defaultdict(set)
    for obj, off in located.values():
        offsets[obj].add(off)
    names = {}
    for obj, offs in offsets.items():
        base = os.path.basename(obj or '?')
        path = local(obj) if obj else None
        offs = sorted(offs)
        if not path:
            names.update({(obj, o): base + ' [?]' for o in offs})
            continue
        # File offsets are the addresses addr2line takes for libraries whose
        # executable segment is mapped at its file offset (GNU ld's layout).
        for s in range(0, len(offs), 2000):
            chunk = offs[s:s + 2000]
            out = subprocess.run(['addr2line', '-f', '-C', '-e', path] + [hex(o) for o in chunk],
                                 capture_output=True, text=True, check=False).stdout.splitlines()
            for i, o in enumerate(chunk):
                f = out[2 * i] if 2 * i < len(out) else '??'
                names[(obj, o)] = base + ' ' + (f if f != '??' else '[?]')
    return lambda pc: names[located[pc]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('prefix')
    ap.add_argument('dirs', nargs='*')
    ap.add_argument('--top', type=int, default=60)
    ap.add_argument('--under')
    a = ap.parse_args()
    samples = read_samples(a.prefix)
    name = symbolizer(samples, read_maps(a.prefix), a.dirs)
    stacks = [[name(pc) for pc in r if pc] for r in samples]
    if a.under:
        stacks = [s for s in stacks if any(a.under in f for f in s)]
    total = max(len(stacks), 1)

    def show(title, counter, limit):
        print('\n== ' + title)
        for k, v in counter.most_common(limit):
            print(f'{100 * v / total:6.2f}% {v:7d} {k[:170]}')

    print(f'{len(stacks)} samples' + (f' with {a.under} on the stack' if a.under else ''))
    show('self', collections.Counter(s[0] for s in stacks if s), a.top)
    inclusive = collections.Counter()
    for s in stacks:
        inclusive.update(set(s))
    show('inclusive', inclusive, 2 * a.top)
    callers = collections.Counter()
    for s in stacks:
        if not s or s[0].startswith('libstrata_preload.so'):
            continue
        inner = next((f for f in s[1:] if f.startswith('libstrata_preload.so')), None)
        if inner:
            callers[f'{s[0].split(" ")[0]:28s} <- {inner}'] += 1
    show('innermost frame outside Strata <- the innermost Strata frame', callers, a.top)
    folded = collections.Counter(';'.join(f.replace(';', ',') for f in reversed(s)) for s in stacks)
    with open(a.prefix + '.folded', 'w') as out:
        for k, v in folded.items():
            out.write(f'{k} {v}\n')


if __name__ == '__main__':
    main()
