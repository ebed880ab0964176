#!/usr/bin/env python3
"""The shared library exports exactly the functions include/bf16fp32.h declares (its version
script, cmake/bf16fp32.map, keeps every internal symbol local) and names itself by its
MAJOR.MINOR soname. Exits 77 where binutils' nm or readelf is missing."""
import os
import re
import shutil
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
library = os.environ.get('BF16FP32_LIBRARY', '')
if not (shutil.which('nm') and shutil.which('readelf')):
    print('test-exports: nm or readelf missing, skipped')
    sys.exit(77)
with open(os.path.join(root, 'include', 'bf16fp32.h')) as f:
    header = f.read()
declared = set(re.findall(r'\b(bf16fp32_[a-z]\w*)\s*\(', header))
with open(os.path.join(root, 'CMakeLists.txt')) as f:
    version = re.search(r'project\(bf16fp32 VERSION (\d+)\.(\d+)', f.read()).groups()

symbols = subprocess.run(['nm', '-D', '--defined-only', library], capture_output=True, text=True,
                         check=True).stdout.split('\n')
exported = {line.split()[-1] for line in symbols if line.strip()}
soname = re.search(r'Library soname: \[(.*)\]',
                   subprocess.run(['readelf', '-d', library], capture_output=True, text=True,
                                  check=True).stdout)
failed = 0
for what, ok in (
        (f'{len(declared)} functions declared in the header', len(declared) >= 15),
        (f'exported but not declared: {sorted(exported - declared)}', not exported - declared),
        (f'declared but not exported: {sorted(declared - exported)}', not declared - exported),
        (f'soname {soname.group(1) if soname else None}',
         soname is not None and soname.group(1) == 'libbf16fp32.so.%s.%s' % version)):
    print(f'{"ok" if ok else "FAIL"}: {what}')
    failed += not ok
print(f'test-exports: {"FAILED" if failed else "passed"}')
sys.exit(1 if failed else 0)
