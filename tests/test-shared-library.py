#!/usr/bin/env python3
"""The shared library as a user's loader and build see it: it exports exactly the functions
include/bf16fp32.h declares (its version script, cmake/bf16fp32.map, keeps every internal symbol
local), names itself by its MAJOR.MINOR soname, and reports through bf16fp32_version() the
header's BF16FP32_VERSION, which python/pyproject.toml repeats. Exits 77 where binutils' nm or
readelf is missing."""
import ctypes
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
from checks import SKIP, Checks  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
library = os.environ.get('BF16FP32_LIBRARY', '')
if not (shutil.which('nm') and shutil.which('readelf')):
    print('test-shared-library: nm or readelf missing, skipped')
    sys.exit(SKIP)
with open(os.path.join(root, 'include', 'bf16fp32.h')) as f:
    header = f.read()
declared = set(re.findall(r'\b(bf16fp32_[a-z]\w*)\s*\(', header))
version = re.search(r'#define BF16FP32_VERSION "((\d+)\.(\d+)\.\d+)"', header).groups()
with open(os.path.join(root, 'python', 'pyproject.toml')) as f:
    python_version = re.search(r'^version = "(.*)"', f.read(), re.M).group(1)
lib = ctypes.CDLL(library)
lib.bf16fp32_version.restype = ctypes.c_char_p
loaded_version = lib.bf16fp32_version().decode()

symbols = subprocess.run(['nm', '-D', '--defined-only', library], capture_output=True, text=True,
                         check=True).stdout.split('\n')
exported = {line.split()[-1] for line in symbols if line.strip()}
soname = re.search(r'Library soname: \[(.*)\]',
                   subprocess.run(['readelf', '-d', library], capture_output=True, text=True,
                                  check=True).stdout)
c = Checks()
for what, ok in (
        (f'{len(declared)} functions declared in the header', len(declared) >= 15),
        (f'exported but not declared: {sorted(exported - declared)}', not exported - declared),
        (f'declared but not exported: {sorted(declared - exported)}', not declared - exported),
        (f'soname {soname.group(1) if soname else None}',
         soname is not None and soname.group(1) == 'libbf16fp32.so.%s.%s' % version[1:]),
        (f'bf16fp32_version() {loaded_version}, the header {version[0]}, python/pyproject.toml '
         f'{python_version}', loaded_version == version[0] == python_version)):
    c.expect(ok, what)
c.finish('test-shared-library')
