#!/usr/bin/env python3
"""smallm's targets (docs/h200-results.md) at the 81 DSV4 cells (9 shapes x M = 1, 2, 4, ...,
256) as a markdown table.

usage: tools/targets-table.py PLAIN.csv PDL.csv
  PLAIN.csv: `bf16fp32 bench --backends smallm,auto --m 1,2,4,8,16,32,64,128,256 --csv ...`
  PDL.csv:   the same with BF16FP32_PDL=1 in the environment
Each cell's target is the plain run's target_us column (bf16fp32__target_us of
src/measure-floor.h: 1.3 F at M <= 16, 1.5 F at M <= 64, and at every M cuBLAS / 1.5 at
N <= 512 or cuBLAS / 1.2 above, whichever is smaller); a cell is met when the better of
smallm's plain and PDL times is within it. The last line counts the cells met and names auto's
lowest ratio to cuBLAS in each run.
"""
import csv
import sys


def load(path):
    rows = {}
    reader = csv.DictReader(open(path))
    if 'target_us' not in (reader.fieldnames or []):
        sys.exit(f'{path}: no target_us column (a bench CSV from before it had one)')
    for r in reader:
        if r['mode'] == 'gpu' and r['us_per_call']:
            rows[(r['shape'], int(r['n']), int(r['k']), int(r['m']), r['backend'])] = r
    return rows


def main(plain_path, pdl_path):
    plain, pdl = load(plain_path), load(pdl_path)
    shapes = list(dict.fromkeys(k[:3] for k in plain))  # the suite's order
    cells = sorted({k[:4] for k in plain if k[3] <= 256 and k[:4] + ('smallm',) in pdl},
                   key=lambda c: (shapes.index(c[:3]), c[3]))
    print('| shape | N x K | M | F us | cuBLAS us | smallm us | smallm PDL us | target us | '
          'best / F | cuBLAS / best | met | cuBLAS/auto plain | cuBLAS/auto PDL |')
    print('|' + '---|' * 13)
    met, low_plain, low_pdl = 0, (float('inf'), None), (float('inf'), None)
    for c in cells:
        name, n, k, m = c
        floor = float(plain[c + ('smallm',)]['floor_us'])
        cublas = float(plain[c + ('cublas-baseline',)]['us_per_call'])
        sm_plain = float(plain[c + ('smallm',)]['us_per_call'])
        sm_pdl = float(pdl[c + ('smallm',)]['us_per_call'])
        auto_plain = float(plain[c + ('auto',)]['vs_baseline'])
        auto_pdl = float(pdl[c + ('auto',)]['vs_baseline'])
        best = min(sm_plain, sm_pdl)
        target = float(plain[c + ('smallm',)]['target_us'])
        ok = best <= target
        met += ok
        low_plain = min(low_plain, (auto_plain, c))
        low_pdl = min(low_pdl, (auto_pdl, c))
        print(f'| {name} | {n}x{k} | {m} | {floor:.2f} | {cublas:.2f} | {sm_plain:.2f} | '
              f'{sm_pdl:.2f} | {target:.2f} | {best / floor:.2f} | {cublas / best:.2f} | '
              f'{"yes" if ok else "no"} | {auto_plain:.3f} | {auto_pdl:.3f} |')
    print(f'\nMet: {met} of {len(cells)}. Lowest cuBLAS / auto plainly {low_plain[0]:.3f} '
          f'({low_plain[1][1]}x{low_plain[1][2]} M = {low_plain[1][3]}), under PDL '
          f'{low_pdl[0]:.3f} ({low_pdl[1][1]}x{low_pdl[1][2]} M = {low_pdl[1][3]}).')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
