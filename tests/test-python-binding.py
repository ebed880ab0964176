#!/usr/bin/env python3
"""The Python binding on host memory: every host backend against the fp64 oracle through DLPack
(odd sizes, row pitches, M = 1, K = 0, NaN/Inf, poisoned outputs, the strides producers give
size-1 dimensions or leave out), bad arrays and bad calls (each a clear exception, nothing
written), device arrays where no device is usable, the context's queries and options, tuning
on the host, threads, a fork, and what close() ends."""
import contextlib
import copy
import math
import os
import pathlib
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
import bf16fp32  # noqa: E402
from checks import Checks  # noqa: E402
from dlpack_buffer import POISON, Buffer, check_against_oracle, random_rows, rng  # noqa: E402

c = Checks()
r = rng()


def run_case(ctx, m, n, k, what, pads=(0, 0, 0), xdtype='bf16', x=None, w=None,
             strides=(None, None, None), **export):
    """One call on fresh operands (x, w given or random), out poisoned, padding included;
    strides (x's, w's, out's) and export (Buffer's drop, device) as the producer says them."""
    x = random_rows(m, k, r) if x is None else x
    w = random_rows(n, k, r) if w is None else w
    xb = Buffer(m, k, xdtype, pitch=k + pads[0], strides=strides[0], **export)
    wb = Buffer(n, k, 'bf16', pitch=k + pads[1], strides=strides[1], **export)
    ob = Buffer(m, n, 'f32', pitch=n + pads[2], strides=strides[2], **export)
    xb.set_rows(x)
    wb.set_rows(w)
    ob.fill_bits(POISON)
    returned = ctx.linear(xb, wb, ob)
    c.expect(returned is ob, f'{what}: linear returns out')
    c.expect(xb.stream is wb.stream is ob.stream is None,
             f'{what}: host arrays exported for no stream')
    c.expect(check_against_oracle(x, w, ob.rows_values(), what) == 0, f'{what}: oracle bound')
    written, untouched = ob.poison_state()
    c.expect(written, f'{what}: every element written')
    c.expect(untouched, f'{what}: nothing written outside out')


@contextlib.contextmanager
def tune_file_env_unset():
    """BF16FP32_TUNE_FILE unset inside the block (it would override the tune_file option)."""
    saved = os.environ.pop('BF16FP32_TUNE_FILE', None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ['BF16FP32_TUNE_FILE'] = saved


with bf16fp32.Context() as ctx:
    host = [b.name for b in ctx.backends() if b.where == bf16fp32.HOST and b.available]
    c.expect('cpu-ref' in host, f'cpu-ref available on the host: {host}')
    auto = ctx.select(5, 24, 40, bf16fp32.HOST)  # before any force_backend
    for backend in host + ['auto']:
        ctx.force_backend(backend)
        for m, n, k, pads in ((1, 19, 37, (0, 0, 0)), (7, 33, 100, (3, 5, 1)),
                              (13, 16, 64, (8, 8, 8)), (1, 1, 1, (0, 0, 0)),
                              (5, 3, 0, (0, 2, 1)), (3, 40, 129, (1, 7, 2))):
            run_case(ctx, m, n, k, f'{backend} {m}x{n}x{k} pads {pads}', pads)
        x, w = random_rows(4, 24, r), random_rows(6, 24, r)
        x[0][3], x[1][5], w[2][7], w[3][0] = math.nan, math.inf, -math.inf, math.inf
        x[2][0] = 0.0  # against w[3][0] = inf: 0 * inf is NaN
        run_case(ctx, 4, 6, 24, f'{backend} NaN/Inf', x=x, w=w)
        run_case(ctx, 3, 8, 16, f'{backend} uint16 bit patterns', xdtype='u16')
        if backend != 'auto':
            calls = {b.name: b.calls for b in ctx.backends()}
            c.expect(calls[backend] > 0, f'{backend} ran its calls: {calls}')
    ctx.force_backend(None)

    # M = 0 and N = 0: nothing done, nothing written.
    for m, n in ((0, 4), (3, 0)):
        ob = Buffer(m, n, 'f32')
        ob.fill_bits(POISON)
        ctx.linear(Buffer(m, 8, 'bf16'), Buffer(n, 8, 'bf16'), ob)
        c.expect(ob.untouched(), f'M = {m}, N = {n}: nothing written')

    # An array without elements may come with any strides (numpy exports (0, 0) for them).
    for m, n, k in ((0, 4, 8), (3, 0, 8), (3, 4, 0)):
        ob = Buffer(m, n, 'f32', strides=(0, 0) if m * n == 0 else None)
        ob.fill_bits(POISON)
        ctx.linear(Buffer(m, k, 'bf16', strides=(0, 0) if m * k == 0 else None),
                   Buffer(n, k, 'bf16', strides=(0, 0) if n * k == 0 else None), ob)
        done = ob.untouched() if m * n == 0 else ob.rows_values() == [[0.0] * n] * m
        c.expect(done, f'{m}x{n}x{k}, empty operands strided (0, 0): out as the sizes say')

    # A size-1 dimension's stride is never read, whatever the producer exports there (PyTorch
    # gives a transposed column [1,K] the strides (1, 1)); an export without strides (NULL, as
    # DLPack 0.x allows for a compact array) is row-major; DLPack's CUDA host (pinned) memory
    # is host memory.
    run_case(ctx, 1, 5, 16, 'one row, row stride 1', strides=((1, 1), None, (1, 1)))
    run_case(ctx, 3, 4, 1, 'K = 1, column stride 5', strides=((1, 5), (1, 5), None))
    run_case(ctx, 3, 4, 16, 'no strides exported', drop=('strides',))
    run_case(ctx, 3, 4, 16, 'on DLPack\'s CUDA host', device=(3, 0))

    # Bad arrays: the binding's exceptions, out untouched.
    def bad(what, exc, status=None, x=None, w=None, out=None, m=3, n=4, k=16):
        ob = out if out is not None else Buffer(m, n, 'f32')
        ob.fill_bits(POISON)
        c.raises(exc, lambda: ctx.linear(x if x is not None else Buffer(m, k, 'bf16'),
                                         w if w is not None else Buffer(n, k, 'bf16'), ob),
                 what, status)
        c.expect(ob.untouched(), f'{what}: out untouched')

    bad('x fp32', TypeError, x=Buffer(3, 16, 'f32'))
    bad('w fp32', TypeError, w=Buffer(4, 16, 'f32'))
    bad('out bf16', TypeError, out=Buffer(3, 4, 'bf16'))
    pairs = Buffer(3, 16, 'bf16')
    pairs.code = (pairs.code[0], 16, 2)  # vectors of two bf16
    bad('x bf16 of 2 lanes', TypeError, x=pairs)
    bad('x 1-D', ValueError, x=Buffer(3, 16, 'bf16', shape=(48,), strides=(1,)))
    bad('x 0-D', ValueError, x=Buffer(3, 16, 'bf16', shape=(), strides=()))
    bad('x 9-D', ValueError,
        x=Buffer(3, 16, 'bf16', shape=(1,) * 7 + (3, 16), strides=(0,) * 7 + (16, 1)))
    bad('K differs', ValueError, w=Buffer(4, 15, 'bf16'))
    bad('out shape', ValueError, out=Buffer(4, 3, 'f32'))
    bad('out a column too many', ValueError, out=Buffer(3, 5, 'f32'))
    bad('out a row short', ValueError, out=Buffer(2, 4, 'f32'))
    bad('x columns strided', ValueError, x=Buffer(16, 3, 'bf16', shape=(3, 16), strides=(1, 3)))
    bad('x columns stride 0', ValueError, x=Buffer(3, 16, 'bf16', strides=(16, 0)))
    bad('x columns stride -1', ValueError, x=Buffer(3, 16, 'bf16', strides=(16, -1)))
    bad('x shape NULL', ValueError, x=Buffer(3, 16, 'bf16', drop=('shape',)))
    bad('x not an array', TypeError, x=object())

    class DeviceOnly:  # says where it lives, exports nothing
        def __dlpack_device__(self):
            return (1, 0)

    bad('x without __dlpack__', TypeError, x=DeviceOnly())
    bad('x pitch short', bf16fp32.Error, 'BAD_LEADING_DIM',
        x=Buffer(3, 16, 'bf16', strides=(8, 1)))
    bad('out pitch negative', bf16fp32.Error, 'BAD_LEADING_DIM',
        out=Buffer(3, 4, 'f32', strides=(-4, 1)))
    bad('w misaligned', bf16fp32.Error, 'MISALIGNED', w=Buffer(4, 16, 'bf16', offset=1))
    bad('x NULL', bf16fp32.Error, 'NULL_POINTER', x=Buffer(3, 16, 'bf16', null=True))
    bad('x NULL with a byte offset', bf16fp32.Error, 'NULL_POINTER',
        x=Buffer(3, 16, 'bf16', null=True, offset=64))
    bad('negative size', bf16fp32.Error, 'BAD_SIZE',
        x=Buffer(3, 16, 'bf16', shape=(-3, 16)), out=Buffer(3, 4, 'f32', shape=(-3, 4)))

    class Device(Buffer):  # claims to live on a GPU: the call must not mix memories
        def __dlpack_device__(self):
            return (2, 0)

    bad('mixed devices', ValueError, w=Device(4, 16, 'bf16'))
    bad('x, w on CUDA device 0, out on 1', ValueError, x=Buffer(3, 16, 'bf16', device=(2, 0)),
        w=Buffer(4, 16, 'bf16', device=(2, 0)), out=Buffer(3, 4, 'f32', device=(2, 1)))
    bad('all on Vulkan', ValueError, x=Buffer(3, 16, 'bf16', device=(7, 0)),
        w=Buffer(4, 16, 'bf16', device=(7, 0)), out=Buffer(3, 4, 'f32', device=(7, 0)))

    # Where no CUDA device is usable, arrays on a CUDA device or in CUDA managed memory are
    # still device operands: NO_DEVICE from the library, each array exported for the call's
    # stream (None: DLPack's 1, the legacy default stream); the device is the default of
    # select, prewarm and tune, and a context for device 0 cannot be made.
    # gpu-python-binding.py calls on real device memory where one is usable.
    try:
        ctx.select(1, 256, 4096, bf16fp32.DEVICE)
        no_device = False
    except bf16fp32.Error as e:
        no_device = e.name == 'NO_DEVICE'
    if no_device:
        for kind, stream, exported in ((2, None, 1), (13, None, 1), (2, 5, 5), (13, 5, 5)):
            xb, wb, ob = (Buffer(rows, cols, t, device=(kind, 0))
                          for rows, cols, t in ((3, 16, 'bf16'), (4, 16, 'bf16'), (3, 4, 'f32')))
            c.raises(bf16fp32.Error, lambda: ctx.linear(xb, wb, ob, stream=stream),
                     f'DLPack device type {kind}, stream {stream}', 'NO_DEVICE')
            c.expect(xb.stream == wb.stream == ob.stream == exported,
                     f'DLPack device type {kind}: exported for stream {exported}, not '
                     f'{(xb.stream, wb.stream, ob.stream)}')
        with tempfile.TemporaryDirectory() as d:
            for what, call in (('select', lambda: ctx.select(1, 256, 4096)),
                               ('prewarm', lambda: ctx.prewarm(256, 4096, [1])),
                               ('tune', lambda: ctx.tune([(8, 16)], [1], f'{d}/t.tsv'))):
                c.raises(bf16fp32.Error, call, f'{what}: the device by default', 'NO_DEVICE')
        c.raises(bf16fp32.Error, lambda: bf16fp32.Context(device=0), 'device=0', 'NO_DEVICE')

    # DLPack 1.x producers: read-only x and w are read; a read-only out is refused.
    x, w = random_rows(3, 16, r), random_rows(4, 16, r)
    xb = Buffer(3, 16, 'bf16', versioned=True, read_only=True)
    wb = Buffer(4, 16, 'bf16', versioned=True, read_only=True)
    xb.set_rows(x)
    wb.set_rows(w)
    ob = Buffer(3, 4, 'f32', versioned=True)
    ob.fill_bits(POISON)
    ctx.linear(xb, wb, ob)
    c.expect(check_against_oracle(x, w, ob.rows_values(), 'DLPack 1.x') == 0,
             'DLPack 1.x, read-only x and w: oracle bound')
    bad('out read-only', ValueError, out=Buffer(3, 4, 'f32', versioned=True, read_only=True))
    bad('out exported as a copy', ValueError, out=Buffer(3, 4, 'f32', versioned=True, copied=True))

    # out over x's memory: OVERLAP from the library before anything runs, x as it was.
    xb = Buffer(3, 16, 'bf16')
    xb.set_rows(random_rows(3, 16, r))
    before = xb._raw()
    over = Buffer(3, 4, 'f32')
    over.address = xb.address + 8
    c.raises(bf16fp32.Error, lambda: ctx.linear(xb, Buffer(4, 16, 'bf16'), over), 'out over x',
             'OVERLAP')
    c.expect(xb._raw() == before, 'out over x: x as it was')

    # A context is one handle: no copies (two would destroy it twice), no pickles.
    c.raises(TypeError, lambda: copy.copy(ctx), 'copy of a context')
    c.raises(TypeError, lambda: pickle.dumps(ctx), 'pickle of a context')
    c.raises(bf16fp32.Error, lambda: ctx.force_backend('no-such-backend'), 'unknown backend',
             'UNKNOWN_BACKEND')
    err = c.raises(bf16fp32.Error, lambda: ctx.select(-1, 4, 4, bf16fp32.HOST), 'select M < 0',
                   'BAD_SIZE')
    c.expect(err is not None and err.detail != '', 'an Error carries the last-error detail')
    c.expect(err is not None and err.status == 2 and 'negative' in err.message and
             str(err) == f'BAD_SIZE: {err.message} ({err.detail})',
             'an Error carries the status (2) and its message')
    # An Error survives pickle and copy (a worker's, sent back to its pool) with its fields.
    if err is not None:
        for again in (pickle.loads(pickle.dumps(err)), copy.copy(err)):
            c.expect((again.status, again.name, again.message, again.detail, str(again)) ==
                     (err.status, err.name, err.message, err.detail, str(err)),
                     f'an Error copied: {again!r}')
    # Integers past their C types, names and paths with a NUL, malformed pairs: refused in
    # Python (ctypes wrapped them, cut them, or the pairs were flattened into other shapes).
    c.raises(OverflowError, lambda: ctx.select(2**64 + 5, 8, 8, bf16fp32.HOST), 'select M 2^64+5')
    c.raises(OverflowError, lambda: ctx.select(1, 8, 8, 2**32), 'select where 2^32')
    c.raises(OverflowError, lambda: ctx.prewarm(8, 8, [2**63], where=bf16fp32.HOST),
             'prewarm M 2^63')
    c.raises(TypeError, lambda: ctx.force_backend(b'cpu-ref'), 'force_backend bytes')
    c.raises(ValueError, lambda: ctx.force_backend('cpu-ref\0x'), 'force_backend with a NUL')
    c.raises(ValueError, lambda: bf16fp32.Context(algo='cpu-ref\0garbage'), 'algo with a NUL')
    c.raises(ValueError, lambda: bf16fp32.Context(tune_file='x.tsv\0junk'), 'tune_file with a NUL')
    c.raises(ValueError, lambda: ctx.tune([(8, 16, 1)], [1], os.devnull, where=bf16fp32.HOST),
             'tune, a triple for a pair')
    c.raises(ValueError, lambda: ctx.tune([(8,), (16, 24)], [1], os.devnull,
                                          where=bf16fp32.HOST), 'tune, pairs split unevenly')
    c.raises(OverflowError, lambda: ctx.tune([(2**64 + 8, 16)], [1], os.devnull,
                                             where=bf16fp32.HOST), 'tune, N past 64 bits')
    c.raises(OverflowError, lambda: ctx.tune_step([(256, 4096, 2)], [1], filler_kb=2**32 + 1),
             'tune_step, filler_kb past 32 bits')
    c.raises(OverflowError, lambda: ctx.tune_step([(256, 4096, 2**32 + 2)], [1]),
             'tune_step, calls past 32 bits')
    c.raises(ValueError, lambda: ctx.tune_step([(256, 4096)], [1]), 'tune_step, a pair for a triple')

    # Queries.
    c.expect(bf16fp32.version().count('.') == 2, f'version {bf16fp32.version()}')
    name, why = ctx.select(1, 256, 4096, bf16fp32.HOST)
    c.expect(name in host and why != '', f'select: {name} ({why})')
    described = ctx.describe()
    c.expect(all(b.name in described for b in ctx.backends()),
             f'describe names every backend: {described}')
    c.expect(ctx.quarantine() == [], 'nothing quarantined')
    ctx.prewarm(256, 4096, [1, 16], where=bf16fp32.HOST)
    c.raises(bf16fp32.Error, lambda: ctx.prewarm(1 - 2**32, 4096, [1], where=bf16fp32.HOST),
             'prewarm N = 1 - 2^32 (1 in 32 bits)', 'BAD_SIZE')
    # force_backend(None) gives the choice back: select says what it said before any forcing,
    # and the call runs there.
    ctx.force_backend('cpu-ref')
    ctx.force_backend(None)
    name = auto[0]
    c.expect(ctx.select(5, 24, 40, bf16fp32.HOST) == auto, f'force_backend(None): {auto} again')
    before = {b.name: b.calls for b in ctx.backends()}
    run_case(ctx, 5, 24, 40, 'after force_backend(None)')
    after = {b.name: b.calls for b in ctx.backends()}
    c.expect(after[name] > before[name], f'after force_backend(None): a call on {name}: {after}')
    c.expect(any(b.calls for b in ctx.backends()) and not any(b.failures for b in ctx.backends()),
             f'calls counted, no failures: {ctx.backends()}')
    ctx.reset()
    c.expect(all(b.calls == 0 for b in ctx.backends()), 'reset clears the counters')

    # Threads: the GIL is released in the calls; every thread's results checked.
    x, w = random_rows(5, 40, r), random_rows(24, 40, r)
    results = []

    def worker():
        for _ in range(10):
            xb, wb, ob = Buffer(5, 40, 'bf16'), Buffer(24, 40, 'bf16'), Buffer(5, 24, 'f32')
            xb.set_rows(x)
            wb.set_rows(w)
            ob.fill_bits(POISON)
            ctx.linear(xb, wb, ob)
            results.append(check_against_oracle(x, w, ob.rows_values(), 'thread'))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c.expect(len(results) == 40 and not any(results), f'threads: {len(results)} calls checked')

    # fork after calls, as a fork-started worker does: the child's calls and its close return
    # (the CPU pool's workers stayed in the parent, asleep by now).
    time.sleep(0.05)
    with warnings.catch_warnings():  # Python 3.12+ warns that this process has threads
        warnings.simplefilter('ignore', DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(30)  # a hang ends the child by SIGALRM, which the parent reports
            xb, wb, ob = Buffer(5, 40, 'bf16'), Buffer(24, 40, 'bf16'), Buffer(5, 24, 'f32')
            xb.set_rows(x)
            wb.set_rows(w)
            ob.fill_bits(POISON)
            ctx.linear(xb, wb, ob)
            bad = check_against_oracle(x, w, ob.rows_values(), 'fork child')
            ctx.close()
            code = 1 if bad else 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    c.expect(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
             f'fork: the child\'s call and close returned (wait status {status})')
c.raises(ValueError, lambda: ctx.select(1, 8, 8, bf16fp32.HOST), 'closed by its with block')

# Host tuning into a file: the (n, k) pairs and M buckets asked for, each an entry that select
# then names (an M past 32 bits reaching the library whole).
with tune_file_env_unset(), tempfile.TemporaryDirectory() as d, bf16fp32.Context() as tc:
    path = os.path.join(d, 'host.tsv')
    tc.tune([(24, 16), (8, 40)], [1, 3], path, where=bf16fp32.HOST)
    tc.tune([(24, 16)], [1], pathlib.Path(d) / 'as-path.tsv', where=bf16fp32.HOST)
    c.expect(os.path.isfile(os.path.join(d, 'as-path.tsv')), 'tune into a pathlib.Path')
    with open(path) as f:
        entries = {tuple(line.split('\t')[1:4]) for line in f if line.startswith('host\t')}
    c.expect(entries == {(n, k, m) for n, k in (('24', '16'), ('8', '40')) for m in '13'},
             f'tune: the entries asked for: {sorted(entries)}')
    with bf16fp32.Context(tune_file=path) as tc:
        why = tc.select(1, 24, 16, bf16fp32.HOST)[1]
        c.expect(why.startswith('tuned') and path in why, f'select M=1 N=24 K=16: {why}')
        why = tc.select(2**32 + 1, 8, 40, bf16fp32.HOST)[1]
        c.expect(why.startswith('tuned') and 'M=4294967297' in why, f'select M=2^32+1: {why}')

# A corrupt tuning file: the context refuses it (TUNE_FILE, naming the file) and its lines'
# warnings reach the log function; a context without it runs; tune_step's argument checks.
lines = []
with tempfile.NamedTemporaryFile('w', suffix='.tsv') as bad_file:
    bad_file.write('not a tuning file\n')
    bad_file.flush()
    with tune_file_env_unset():
        e = c.raises(bf16fp32.Error,
                     lambda: bf16fp32.Context(tune_file=bad_file.name, log_level=1,
                                              log=lambda level, line: lines.append((level, line))),
                     'a corrupt tuning file', 'TUNE_FILE')
        c.expect(e is not None and bad_file.name in str(e) and 'not a tune file' in str(e),
                 f'the refusal names the file and why: {e}')
        ctx = bf16fp32.Context(tune_file='')
c.expect(any(level == 1 and bad_file.name in line and 'malformed' in line for level, line in lines),
         f'the corrupt file\'s warning logged: {lines}')
with ctx:
    run_case(ctx, 2, 8, 16, 'with no tuning file')
    c.raises(bf16fp32.Error, lambda: ctx.tune_step([], [1]), 'tune_step, no GEMMs', 'BAD_SIZE')
    c.raises(bf16fp32.Error, lambda: ctx.tune_step([(256, 4096, 2)], [1], filler_kb=-1),
             'tune_step, negative filler', 'BAD_SIZE')
    c.raises(ValueError, lambda: ctx.tune_step([(256, 4096, 2)], [1], trigger='late'),
             'tune_step, unknown trigger')

# Options: integers that fit their C fields, a str backend name, a path, a callable log.
c.raises(TypeError, lambda: bf16fp32.Context(algo=5), 'algo not a str')
c.raises(TypeError, lambda: bf16fp32.Context(cpu_threads=1.5), 'cpu_threads not an integer')
c.raises(ValueError, lambda: bf16fp32.Context(log_level=2**32 + 1), 'log_level past a C int')
c.raises(ValueError, lambda: bf16fp32.Context(workspace_bytes=-1), 'workspace_bytes negative')
c.raises(TypeError, lambda: bf16fp32.Context(log=5), 'log not callable')
with bf16fp32.Context(cpu_threads=1, algo='cpu-ref') as oc:
    described = oc.describe()
    c.expect(re.search(r'\b1 thread\b', described) and 'algo: cpu-ref' in described,
             f'cpu_threads=1, algo=cpu-ref: {described}')
with tune_file_env_unset(), tempfile.TemporaryDirectory() as d:
    for path in (pathlib.Path(d) / 'none.tsv', os.fsencode(os.path.join(d, 'none.tsv'))):
        with bf16fp32.Context(tune_file=path) as pc:
            c.expect(f'tune file: {os.fsdecode(path)}' in pc.describe(),
                     f'tune_file as {type(path).__name__}')

# close() destroys the context: the CPU pool workers its calls started end with it.
tasks = '/proc/self/task'
before = len(os.listdir(tasks)) if os.path.isdir(tasks) else 0
closed = bf16fp32.Context(cpu_threads=2)
closed.linear(Buffer(64, 256, 'bf16'), Buffer(256, 256, 'bf16'), Buffer(64, 256, 'f32'))
closed.close()
deadline = time.monotonic() + 5  # a joined thread leaves the task list just after the join
while before and len(os.listdir(tasks)) > before and time.monotonic() < deadline:
    time.sleep(0.01)
c.expect(not before or len(os.listdir(tasks)) <= before,
         f'close ends the pool workers: {before} threads before, {len(os.listdir(tasks))} after')
c.raises(ValueError, lambda: closed.select(1, 8, 8, bf16fp32.HOST), 'closed context')
live = bf16fp32.Context()
os.environ['BF16FP32_ALGO'] = 'no-such-backend'
c.raises(bf16fp32.Error, bf16fp32.Context, 'bad BF16FP32_ALGO', 'BAD_ENV')
c.raises(bf16fp32.Error, live.reset, 'reset with a bad BF16FP32_ALGO', 'BAD_ENV')
del os.environ['BF16FP32_ALGO']
live.close()

# A BF16FP32_LIBRARY that is not a file: ImportError at import, which says so.
env = dict(os.environ, BF16FP32_LIBRARY=os.path.join(tempfile.gettempdir(), 'no-such-lib.so'))
run = subprocess.run([sys.executable, '-c', 'import bf16fp32'], env=env, capture_output=True,
                     text=True, timeout=60)
c.expect(run.returncode != 0 and 'ImportError' in run.stderr and 'is not a file' in run.stderr,
         f'BF16FP32_LIBRARY not a file: {run.stderr.strip()[-200:]}')
c.finish('test-python-binding')
