#!/usr/bin/env python3
"""`cmake --install` of this build into a fresh prefix, then used from outside the tree as a user
would: find_package(bf16fp32) with the shared and the static target (tests/install-consumer),
pkg-config's flags with the system compiler, and the installed command-line program. Exits 77
where no C compiler is found."""
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, 'common'))
from checks import Checks, c_compiler  # noqa: E402

build, cmake = os.environ.get('BF16FP32_BUILD_DIR', ''), os.environ.get('BF16FP32_CMAKE', 'cmake')
compiler = c_compiler('test-install')
c = Checks()


def step(what, args, env=None, expect=None):
    """Runs args and expects it to succeed (and print `expect`); shows its output if not."""
    run = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    ok = run.returncode == 0 and (expect is None or expect in run.stdout)
    c.expect(ok, what + ('' if ok else f'\n{run.stdout}\n{run.stderr}'))
    return ok


with tempfile.TemporaryDirectory() as tmp:
    prefix, consumer = os.path.join(tmp, 'prefix'), os.path.join(tmp, 'consumer')
    if not step('install', [cmake, '--install', build, '--prefix', prefix]):
        c.finish('test-install')
    libdir = next(os.path.join(prefix, d) for d in ('lib', 'lib64', 'lib/x86_64-linux-gnu')
                  if os.path.isfile(os.path.join(prefix, d, 'libbf16fp32.so')))
    if step('configure a consumer with find_package',
            [cmake, '-S', os.path.join(here, 'install-consumer'), '-B', consumer,
             '-DCMAKE_PREFIX_PATH=' + prefix, '-DCMAKE_C_COMPILER=' + compiler]) and \
            step('build it', [cmake, '--build', consumer]):
        step('bf16fp32::bf16fp32 (shared) computes', [os.path.join(consumer, 'use-shared')],
             expect='OK 11 17')
        step('bf16fp32::bf16fp32_static computes', [os.path.join(consumer, 'use-static')],
             expect='OK 11 17')
    if shutil.which('pkg-config'):
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, 'pkgconfig'))
        flags = subprocess.run(['pkg-config', '--cflags', '--libs', 'bf16fp32'], env=env,
                               capture_output=True, text=True).stdout.split()
        program = os.path.join(tmp, 'use-pkg-config')
        if step('compile with pkg-config\'s flags',
                [compiler, '-std=c11', '-Wall', '-Wextra', '-Werror',
                 os.path.join(here, 'install-consumer', 'main.c'), *flags,
                 '-Wl,-rpath,' + libdir, '-o', program]):
            step('it computes', [program], expect='OK 11 17')
    else:
        print('pkg-config is not installed: its file not checked')
    step('the installed command-line program', [os.path.join(prefix, 'bin', 'bf16fp32'), 'info'],
         expect='backends')
c.finish('test-install')
