#!/usr/bin/env python3
"""README.md's C example, as printed there: compiled against include/ and the shared library
(BF16FP32_LIBRARY) with the warnings the build uses, run, and its output checked, so that the
example cannot drift from the API. Exits 77 where no C compiler is found."""
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, 'common'))
from checks import c_compiler  # noqa: E402

root = os.path.dirname(here)
library = os.environ.get('BF16FP32_LIBRARY', '')
compiler = c_compiler('test-readme-example')
if not os.path.isfile(library):
    print(f'test-readme-example: BF16FP32_LIBRARY={library!r} is not the shared library')
    sys.exit(1)

with open(os.path.join(root, 'README.md')) as f:
    blocks = re.findall(r'```c\n(.*?)```', f.read(), re.S)
if len(blocks) != 1:
    print(f'test-readme-example: expected one C example in README.md, found {len(blocks)}')
    sys.exit(1)

with tempfile.TemporaryDirectory() as tmp:
    source, program = os.path.join(tmp, 'example.c'), os.path.join(tmp, 'example')
    with open(source, 'w') as f:
        f.write(blocks[0])
    build = subprocess.run([compiler, '-std=c11', '-Wall', '-Wextra', '-Werror',
                            '-I' + os.path.join(root, 'include'), source, library,
                            '-Wl,-rpath,' + os.path.dirname(library), '-o', program],
                           capture_output=True, text=True)
    if build.returncode != 0:
        print('test-readme-example: the example does not compile:\n' + build.stderr)
        sys.exit(1)
    run = subprocess.run([program], capture_output=True, text=True, timeout=300)
    print(f'example printed: {run.stdout.strip()!r} (exit {run.returncode})')
    ok = run.returncode == 0 and re.fullmatch(r'OK via cpu-\S+ \(.+\)\n', run.stdout) is not None
    print('test-readme-example: ' + ('passed' if ok else 'FAILED'))
    sys.exit(0 if ok else 1)
