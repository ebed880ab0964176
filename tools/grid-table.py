#!/usr/bin/env python3
# grid-table.py CSV BACKEND: a bench CSV as a table of cuBLAS / BACKEND, one row per (N, K) and
# one column per M, with the geometric mean, lowest and highest below and the cells not ok after
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
be = sys.argv[2]
cells = {}
for r in rows:
    if r['backend'] != be or r['status'] != 'ok' or not r['vs_baseline']:
        continue
    cells[(int(r['n']), int(r['k']), int(r['m']))] = float(r['vs_baseline'])
bad = [r for r in rows if r['status'] != 'ok']
ms = sorted({m for _, _, m in cells})
nk = sorted({(n, k) for n, k, _ in cells}, key=lambda t: (t[1], t[0]))
print('    N     K ' + ''.join('%7d' % m for m in ms))
for n, k in nk:
    print('%5d %5d ' % (n, k) + ''.join(('%7.3f' % cells[(n, k, m)]) if (n, k, m) in cells else '      -' for m in ms))
v = list(cells.values())
if v:
    print('geo %.3f min %.3f max %.3f n=%d' % (math.exp(sum(map(math.log, v)) / len(v)), min(v), max(v), len(v)))
for r in bad:
    print('NOT OK', r['shape'], r['m'], r['backend'], r['status'], r['note'])
