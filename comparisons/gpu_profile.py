"""Where a compiled step's time goes, facade against hand-written pure JAX, on one device (a GPU when JAX has one).

    XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text python comparisons/gpu_profile.py [--out DIR] [--calls N]

For W1, W2 and W4 of bench_compile.py (and W3 with --w3), per callable:
  sync/call    seconds per call with a sync after each call (what bench_compile.py reports for W2-W4)
  async/call   seconds per call over N calls then one sync (host dispatch and device work overlap)
  host/call    seconds the Python call takes to return (no sync): the host's share
then, for the facade's, how much of the host time is the jitted program's call (its dispatch) and how much the
facade's Python around it (steady-state check, write-back, result); and, from one ``jax.profiler`` trace of N
calls each (``--out``: written there as trace.json.gz), the device's kernels per call and their summed time.
``--python-only`` times the facade's Python alone, its program stubbed out (comparable across hosts and
commits), warm and right after a cache flush (what a call costs when a program has just run; on this 2-core
host, 2026-12-02: W2's 19 us warm, 33 us after a flush, and 106 us beside its real program, whose XLA threads
share the cores: most of the 8-17% bench_compile.py's W2 ratio shows); ``--buffers`` times a jitted call against its number of donated buffers and of scalar inputs (what each costs
the dispatch); ``--cprofile`` prints the facade W2 step's Python profile. With XLA_FLAGS' dump set, ``--hlo``
counts the instructions of each dumped optimized program's entry computation by opcode (fusions, custom calls,
copies: on a GPU each a kernel launch).

On a CPU the split is blurred: XLA runs the program on the same cores as the Python that follows its dispatch.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import cProfile
import glob
import gzip
import io
import json
import os
import pstats
import re
import shutil
import statistics
import time

import jax
import numpy as np

import functorch_lite as ft
import bench_compile as BC
import bench_training as BT
from _bench import sync


def _times(fn, n):
    s, a, h = [], [], []
    for _ in range(n):
        t0 = time.perf_counter()
        r = fn()
        t1 = time.perf_counter()
        sync(r)
        s.append(time.perf_counter() - t0)
        h.append(t1 - t0)
    t0 = time.perf_counter()
    for _ in range(n):
        r = fn()
    sync(r)
    a = (time.perf_counter() - t0) / n
    return statistics.median(s), a, statistics.median(h)


@contextlib.contextmanager
def _program_wrapped(cf, wrap):
    """The compiled function's last program (its flat one, else the plain one) replaced by ``wrap(program)``
    while the block runs."""
    entry = next(reversed(cf.cache.values()))
    saved = entry.donating, entry.jitted
    if entry.donating:
        entry.donating = (wrap(entry.donating[0]), entry.donating[1])
    else:
        entry.jitted = wrap(entry.jitted)
    try:
        yield
    finally:
        entry.donating, entry.jitted = saved


def _program_share(cf, n):
    """Median host seconds of the whole facade call and of the jitted program call inside it (the rest is the
    facade's Python: discovery, guard key, reading and writing back the slots)."""
    acc, tot = [], []

    def timed(inner):
        def call(*a):
            t0 = time.perf_counter()
            r = inner(*a)
            acc.append(time.perf_counter() - t0)
            return r
        return call
    with _program_wrapped(cf, timed):
        for _ in range(n):
            t0 = time.perf_counter()
            r = cf()
            tot.append(time.perf_counter() - t0)
            sync(r)
    return statistics.median(tot), statistics.median(acc)


def _python_only(cf, n):
    """Seconds per call of the facade's Python alone: the jitted program replaced by one that returns the outputs
    of a real call (nothing is donated then, so the slots keep the same arrays and every call is a steady one).
    Returns (warm, cold): warm is the best of 5 blocks of ``n`` calls; cold the median of ``n`` single calls each
    made right after 12 MB of NumPy writes flushed the CPU caches, as a program's run does between a training
    loop's calls (the objects and code the call goes through are then cache misses). Host-independent of the
    device, so it isolates what the facade adds."""
    got = []

    def grab(inner):
        def call(*a):
            got.append(inner(*a))
            return got[-1]
        return call
    with _program_wrapped(cf, grab):
        cf()
    outs = jax.block_until_ready(got[-1])
    best, cold = float("inf"), []
    with _program_wrapped(cf, lambda inner: lambda *a: outs):
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                cf()
            best = min(best, (time.perf_counter() - t0) / n)
        for _ in range(n):
            np.ones(3_000_000, np.float32).sum()
            t0 = time.perf_counter()
            cf()
            cold.append(time.perf_counter() - t0)
    return best, statistics.median(cold)


def _buffers(n_calls):
    """Host seconds of one jitted call against its number of donated input/output buffers (f32[256] each,
    ``x + 1``) and of scalar inputs it only reads: what each buffer costs the dispatch."""
    import jax.numpy as jnp
    for kind in ("donated", "scalars read"):
        for n in (4, 16, 32, 64):
            if kind == "donated":
                f = jax.jit(lambda *xs: [x + 1 for x in xs], donate_argnums=tuple(range(n)))
                xs = [jnp.zeros(256) for _ in range(n)]
            else:
                f = jax.jit(lambda v, *xs: v * sum(xs))
                xs = [jnp.zeros(256)] + [jnp.float32(1.0) for _ in range(n)]
            xs = list(jax.block_until_ready(f(*xs))) if kind == "donated" else xs
            h = []
            for _ in range(n_calls):
                t0 = time.perf_counter()
                r = f(*xs)
                h.append(time.perf_counter() - t0)
                jax.block_until_ready(r)
                if kind == "donated":
                    xs = r
            print(f"buffers {kind:12s} n={n:3d}: host {statistics.median(h) * 1e6:7.1f} us/call", flush=True)


def _trace(rows, n, out):
    """One profiler trace over ``n`` calls of every callable, each bracketed by a named TraceAnnotation; returns
    {name: (device events per call, device microseconds per call, top kernels)}."""
    d = "/tmp/gpu_profile_trace"
    shutil.rmtree(d, ignore_errors=True)
    with jax.profiler.trace(d, create_perfetto_trace=True):
        for name, fn in rows.items():
            with jax.profiler.TraceAnnotation(f"ROW {name}"):
                for _ in range(n):
                    sync(fn())
    path = glob.glob(f"{d}/plugins/profile/*/perfetto_trace.json.gz")[0]
    if out:
        shutil.copy(path, os.path.join(out, "trace.json.gz"))
    ev = json.load(gzip.open(path))["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    print("trace processes:", sorted(set(procs.values())))
    dev_pids = {p for p, nm in procs.items() if "device" in nm.lower() or "gpu" in nm.lower()}
    spans = [(e["ts"], e["ts"] + e["dur"], e["name"][4:]) for e in ev
             if e.get("ph") == "X" and e.get("name", "").startswith("ROW ")]
    res = {}
    for t0, t1, name in spans:
        k = [e for e in ev if e.get("ph") == "X" and e["pid"] in dev_pids and t0 <= e["ts"] <= t1]
        by = collections.Counter()
        for e in k:
            by[e["name"][:60]] += e["dur"]
        res[name] = (len(k) / n, sum(e["dur"] for e in k) / n, [(nm, round(us / n, 1)) for nm, us in by.most_common(8)])
    return res


def _hlo_counts(dump):
    """{module file: Counter of opcodes in its ENTRY computation} for the optimized programs XLA dumped."""
    out = {}
    for f in sorted(glob.glob(os.path.join(dump, "*after_optimizations.txt"))):
        txt = open(f).read()
        m = re.search(r"^ENTRY .*?\n}\n", txt, re.S | re.M)
        if not m:
            continue
        ops = collections.Counter()
        for line in m.group(0).splitlines()[1:]:
            mm = re.search(r"= \S+ (\S+?)\(", line) or re.search(r"= \([^=]*\) (\S+?)\(", line)
            if mm:
                ops[mm.group(1)] += 1
        out[os.path.basename(f)] = ops
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if ft.cuda.is_available() else "cpu")
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--out")
    ap.add_argument("--w3", action="store_true")
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--hlo")
    ap.add_argument("--buffers", action="store_true")
    ap.add_argument("--python-only", action="store_true")
    ap.add_argument("--no-trace", action="store_true")
    args = ap.parse_args()
    dev = args.device
    rng = np.random.default_rng(0)
    x0, y0, x4, p2 = BC.mlp_data(rng)
    rows = {"W1 facade": ft.compile(BC.w1(ft, dev)), "W1 jax": BC.w1_jax(),
            "W2 facade": ft.compile(BT.w2(ft, x0, y0, p2, dev)), "W2 jax": BT.w2_jax(x0, y0, p2),
            "W4 facade": ft.compile(BC.w4(ft, x4, p2, dev)), "W4 jax": BC.w4_jax(x4, p2)}
    if args.w3:
        idx0, tgt0 = rng.integers(0, BT.V, (BT.B, BT.T)), rng.integers(0, BT.V, (BT.B, BT.T))
        p3 = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in BT.SHAPES3]
        f3, names = BT.w3(ft, idx0, tgt0, p3, dev=dev)
        rows["W3 facade"], rows["W3 jax"] = ft.compile(f3), BT.w3_jax(idx0, tgt0, p3, names)
    for fn in rows.values():
        for _ in range(3):
            sync(fn())
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}, facade device {dev}")
    print(f"{'callable':12s} {'sync/call':>10s} {'async/call':>10s} {'host/call':>10s}  (microseconds, medians)")
    for name, fn in rows.items():
        s, a, h = _times(fn, args.calls)
        print(f"{name:12s} {s * 1e6:10.1f} {a * 1e6:10.1f} {h * 1e6:10.1f}", flush=True)
    for name, fn in rows.items():
        if "facade" in name:
            tot, prog = _program_share(fn, args.calls)
            print(f"{name:12s} host/call {tot * 1e6:7.1f} us, of which the program call {prog * 1e6:7.1f} us, the "
                  f"facade's Python {(tot - prog) * 1e6:7.1f} us", flush=True)
    if args.python_only:
        for name, fn in rows.items():
            if "facade" in name:
                warm, cold = _python_only(fn, 200)
                print(f"{name:12s} the facade's Python alone (program stubbed): {warm * 1e6:6.1f} us/call warm, "
                      f"{cold * 1e6:6.1f} us after a cache flush", flush=True)
    if args.buffers:
        _buffers(args.calls)
    try:
        if args.no_trace:
            raise RuntimeError("skipped (--no-trace)")
        tr = _trace(rows, min(args.calls, 20), args.out)
        print(f"\n{'callable':12s} {'dev ev/call':>11s} {'dev us/call':>11s}  top device events (us per call)")
        for name, (k, us, top) in tr.items():
            print(f"{name:12s} {k:11.1f} {us:11.1f}  {top}")
    except Exception as e:  # the profiler is a diagnosis, not a check
        print(f"profiler trace failed: {type(e).__name__}: {e}")
    if args.cprofile:
        fn = rows["W2 facade"]
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(200):
            fn()
        sync(fn())
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
        print(s.getvalue())
    if args.hlo:
        for f, ops in _hlo_counts(args.hlo).items():
            if re.search(r"jit_(flat|pure|update|f|step)\b", f) or "jit_flat" in f or "jit_update" in f:
                print(f"{f}: {sum(ops.values())} instructions; {dict(ops.most_common(12))}")


if __name__ == "__main__":
    main()
