#!/usr/bin/env python3
# tune-vs-bench.py TUNE-OUTPUT BENCH-CSV: each smallm form `bf16fp32 tune` timed, set against the
# bench's cuBLAS at the same cell (bench cuBLAS us / form us; tune's own cuBLAS runs beside our
# kernels, in turns under PDL), the best six per cell, with the bench's smallm ratio and tune's
# time of the chooser's choice over the bench's smallm time (how far the two measures agree)
import csv, re, sys
bench = {}
for r in csv.DictReader(open(sys.argv[2])):
    if r['us_per_call']:
        bench[(int(r['n']), int(r['k']), int(r['m']), r['backend'])] = float(r['us_per_call'])
cur = None
cells = []
for line in open(sys.argv[1]):
    m = re.match(r'\[\s*\d+/\d+\]\s+\S+\s+(\d+)\s+(\d+)\s+(\d+)\s+(.*)', line)
    if m:
        cur = {'nkm': tuple(map(int, m.group(1, 2, 3))), 't': {}}
        cells.append(cur)
        for name, us in re.findall(r'(\S+)\s+([\d.]+) us', m.group(4)):
            cur['t'][name] = float(us)
        continue
    m = re.match(r'\s+(\S+)\s+([\d.]+) us\s*$', line)
    if m and cur:
        cur['t'][m.group(1)] = float(m.group(2))
for c in cells:
    n, k, mm = c['nkm']
    cb = bench.get((n, k, mm, 'cublas-baseline'))
    sm = bench.get((n, k, mm, 'smallm'))
    if not cb:
        continue
    t = c['t']
    items = sorted((v, name) for name, v in t.items() if name.startswith('smallm'))
    s = ' '.join('%s=%.2f' % (name.replace('smallm@', '@'), cb / v) for v, name in items[:6])
    drift = t['smallm'] / sm if sm and 'smallm' in t else 0
    print('%5d %5d %3d cuBLAS %6.2f bench-smallm %.2f (tune/bench %.3f)  %s' % (n, k, mm, cb, cb / sm if sm else 0, drift, s))
