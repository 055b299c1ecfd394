"""Kernel speed: ndx against NumPy (and PyTorch when installed) in one process.

    PYTHONPATH=python python bench/kernels.py [--rounds 15] [--only exp,sum]

Every case runs interleaved: each round times one call of every implementation in turn
(each right after an untimed call of its own, so all start from warm caches), so a noisy
neighbour slows all of them alike; the table shows medians over the rounds. ndx runs
with 1 and with 2 threads (npx.set_num_threads); ratio = NumPy time / ndx time (> 1: ndx is
faster). PyTorch, when importable, runs with torch.set_num_threads(1) in the torch column.
The last lines show that small arrays start no thread and how two Python threads running
np.exp overlap (the GIL is released inside kernels).

NumPy's BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1 unless set), so its matmul and
linalg rows compare one thread with one thread; ndx sets its own BLAS thread counts. With
NumPy's bundled OpenBLAS on 2 threads, its workers also kept spinning after each call and
took the cores from ndx's 2-thread GEMM timed right after it (1024^3: 22 ms instead of 11).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads its OpenBLAS

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as onp  # noqa: E402

import ndx  # noqa: E402
from ndx import np, npx  # noqa: E402

try:
    import torch
except ImportError:  # optional, never a dependency
    torch = None
try:
    import scipy.special as sps
except ImportError:
    sps = None

N = 16 * 1024 * 1024  # elements of the elementwise cases
ROWS, COLS = 4096, 1024  # the reduction cases


def numpy_softmax(x):
    e = onp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def numpy_log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - onp.log(onp.exp(x - m).sum(axis=-1, keepdims=True))


def ndx_cases(x, y, m, s, t):
    """ndx's side of every case over its own copies of the inputs: the 1- and 2-thread runs
    each get a set, so neither finds the other's data in the wrong core's cache."""
    a, b, am, as_, at = np.array(x), np.array(y), np.array(m), np.array(s), np.array(t)
    out = {
        "a+b": lambda: a + b, "a*2+1": lambda: a * 2 + 1, "a**2": lambda: a ** 2,
        "exp": lambda: np.exp(a),
        "log": lambda: np.log(b), "tanh": lambda: np.tanh(a), "sin": lambda: np.sin(a),
        "sigmoid": lambda: npx.sigmoid(a), "erf": lambda: npx.erf(a),
        "softmax": lambda: npx.softmax(as_), "log_softmax": lambda: npx.log_softmax(as_),
        "transpose copy": lambda: at.T.copy(), "cast f32->f16": lambda: a.astype("float16"),
        "arcsinh": lambda: np.arcsinh(a), "arctan2": lambda: np.arctan2(a, b),
        "logaddexp": lambda: np.logaddexp(a, b), "clip": lambda: np.clip(a, -1.0, 1.0),
    }
    a4, b4 = np.array(x[: N // 4]), np.array(y[: N // 4])
    o4 = np.empty_like(a4)
    out["add out= 4M"] = lambda: np.add(a4, b4, out=o4)
    for fn in ("sum", "mean", "max", "argmax"):
        for axis in (None, 0, -1):
            out[f"{fn}(axis={axis})"] = lambda fn=fn, axis=axis: getattr(np, fn)(am, axis=axis)
    for axis in (0, -1):
        out[f"std(axis={axis})"] = lambda axis=axis: np.std(am, axis=axis)
    out["sort(axis=-1)"] = lambda: np.sort(am, axis=-1)
    out["argsort(axis=-1)"] = lambda: np.argsort(am, axis=-1)
    out["unique"] = lambda: np.unique(am)
    for axis in (0, -1):
        out[f"cumsum(axis={axis})"] = lambda axis=axis: np.cumsum(am, axis=axis)
    out["median(axis=-1)"] = lambda: np.median(am, axis=-1)
    out.update(product_and_indexing_cases(np, x, m, s))
    out.update(integer_reduction_cases(np, m))
    out.update(linalg_and_random_cases(np))
    return out


def integer_reduction_cases(lib, m):
    """Reductions of integer and bool data (4096 x 1024 from the float cases' matrix): bool's
    all-False case reads the whole array, argmax of a bool with a True stops there."""
    i32 = lib.array((m * 1000).astype(onp.int32))
    i64 = lib.array((m * 1000).astype(onp.int64))
    none, some = lib.array(m > 3), lib.array(m > 2.9)  # m is in [-3, 3)
    return {
        "max int32(axis=None)": lambda: lib.max(i32),
        "max int32(axis=0)": lambda: lib.max(i32, axis=0),
        "argmax int32(axis=-1)": lambda: lib.argmax(i32, axis=-1),
        "argmax int64(axis=None)": lambda: lib.argmax(i64),
        "any bool (all False)": lambda: lib.any(none),
        "argmax bool(axis=-1)": lambda: lib.argmax(some, axis=-1),
        "count_nonzero int32": lambda: lib.count_nonzero(i32),
        "count_nonzero bool": lambda: lib.count_nonzero(some),
        "invert bool": lambda: ~some,
        "bool astype float32": lambda: some.astype("float32"),
        "int32 ** 2": lambda: i32 ** 2,
        "clip int32": lambda: lib.clip(i32, -1000, 1000),
    }


def product_and_indexing_cases(lib, x, m, s):
    """Issue 12's rows, written once for NumPy and ndx (lib is either module): float32 GEMMs
    (square, a dense layer's x @ W.T at batch 4096 and 32, a batch of small products), einsum
    as a GEMM and as batched attention scores, pad / tile of 4096 x 1024, and 16M-element
    gathers."""
    rng = onp.random.default_rng(1)
    a, b = (lib.array(rng.standard_normal((512, 512)).astype(onp.float32)) for _ in range(2))
    q, k = (lib.array(rng.standard_normal((8, 8, 128, 64)).astype(onp.float32))
            for _ in range(2))
    xa, ma, sa = lib.array(x), lib.array(m), lib.array(s)
    flat_idx = lib.array(rng.integers(0, N, N))
    row_idx = lib.array(rng.integers(0, s.shape[1], s.shape))
    mask = lib.array(x > 0)
    sq, sq2 = (lib.array(rng.standard_normal((1024, 1024)).astype(onp.float32)) for _ in range(2))
    act = lib.array(rng.standard_normal((4096, 1024)).astype(onp.float32))
    wt = lib.array(rng.standard_normal((256, 1024)).astype(onp.float32))
    bat = lib.array(rng.standard_normal((256, 64, 64)).astype(onp.float32))
    small = lib.array(rng.standard_normal((32, 256)).astype(onp.float32))
    w_small = lib.array(rng.standard_normal((256, 256)).astype(onp.float32))
    return {
        "matmul 1024^3": lambda: lib.matmul(sq, sq2),
        "matmul 4096x1024 @ W.T": lambda: lib.matmul(act, wt.T),
        "matmul 256 x 64^3": lambda: lib.matmul(bat, bat),
        "dot 32x256 @ W.T": lambda: lib.dot(small, w_small.T),
        "einsum GEMM": lambda: lib.einsum("ij,jk->ik", a, b),
        "einsum GEMM opt": lambda: lib.einsum("ij,jk->ik", a, b, optimize=True),
        "einsum attention": lambda: lib.einsum("bhqd,bhkd->bhqk", q, k),
        "einsum attn opt": lambda: lib.einsum("bhqd,bhkd->bhqk", q, k, optimize=True),
        "pad constant": lambda: lib.pad(ma, 16),
        "pad reflect": lambda: lib.pad(ma, 16, mode="reflect"),
        "tile 2x2": lambda: lib.tile(ma, (2, 2)),
        "take 16M": lambda: lib.take(xa, flat_idx),
        "take_along_axis": lambda: lib.take_along_axis(sa, row_idx, axis=1),
        "mask gather 16M": lambda: xa[mask],
    }


def linalg_and_random_cases(lib):
    """Issue 13's rows, written once for NumPy and ndx: LAPACK factorizations of 512 x 512
    float32 and 16M random samples (each library's default call: NumPy's legacy float64
    samplers, ndx's float32), plus NumPy's Generator drawing float32 normals."""
    rng = onp.random.default_rng(2)
    g = rng.standard_normal((512, 512)).astype(onp.float32)
    spd = (g @ g.T / 512 + onp.eye(512, dtype=onp.float32)).astype(onp.float32)
    a, p, rhs = lib.array(g + 8 * onp.eye(512, dtype=onp.float32)), lib.array(spd), lib.array(g)
    gen = onp.random.default_rng(3)
    return {
        "inv 512": lambda: lib.linalg.inv(a),
        "solve 512": lambda: lib.linalg.solve(a, rhs),
        "svd 512": lambda: lib.linalg.svd(a),
        "cholesky 512": lambda: lib.linalg.cholesky(p),
        "eigh 512": lambda: lib.linalg.eigh(p),
        "normal 16M": lambda: lib.random.normal(size=N),
        "uniform 16M": lambda: lib.random.uniform(size=N),
        "normal 16M f32": (lambda: gen.standard_normal(N, dtype=onp.float32)) if lib is onp
        else (lambda: lib.random.normal(size=N)),
        **fft_cases(lib),
    }


def fft_cases(lib):
    """np.fft rows: 2**20 points, 1024 x 1024 and 1000 x 1000 (rows), float32 in and complex64
    out for both libraries (NumPy 2's pocketfft keeps single precision; ndx runs its batched
    transform in float: radix 4 / 2 stages, and radix 5 / 2 for the 1000 x 1000 row)."""
    rng = onp.random.default_rng(4)
    r = rng.standard_normal(1 << 20).astype(onp.float32)
    z = (r + 1j * rng.standard_normal(1 << 20)).astype(onp.complex64)
    r2, z2 = r.reshape(1024, 1024), z.reshape(1024, 1024)
    z3 = onp.ascontiguousarray(z2[:1000, :1000])
    xr, xz, xr2, xz2, xz3 = (lib.array(v) for v in (r, z, r2, z2, z3))
    return {
        "rfft 2**20": lambda: lib.fft.rfft(xr),
        "fft 2**20": lambda: lib.fft.fft(xz),
        "rfft 1024x1024": lambda: lib.fft.rfft(xr2),
        "fft 1024x1024": lambda: lib.fft.fft(xz2),
        "fft2 1024x1024": lambda: lib.fft.fft2(xz2),
        "fft 1000x1000": lambda: lib.fft.fft(xz3),
    }


def cases():
    rng = onp.random.default_rng(0)
    x = rng.uniform(-3, 3, N).astype(onp.float32)
    y = rng.uniform(0.5, 3, N).astype(onp.float32)
    m = rng.uniform(-3, 3, (ROWS, COLS)).astype(onp.float32)
    s = rng.uniform(-3, 3, (N // 1024, 1024)).astype(onp.float32)
    t = rng.uniform(-3, 3, (4096, 4096)).astype(onp.float32)
    ours1, ours2 = ndx_cases(x, y, m, s, t), ndx_cases(x, y, m, s, t)
    refs = {
        "a+b": lambda: x + y, "a*2+1": lambda: x * 2 + 1, "a**2": lambda: x ** 2,
        "exp": lambda: onp.exp(x),
        "log": lambda: onp.log(y), "tanh": lambda: onp.tanh(x), "sin": lambda: onp.sin(x),
        "sigmoid": lambda: 1 / (1 + onp.exp(-x)),
        "erf": sps is not None and (lambda: sps.erf(x)),
        "softmax": lambda: numpy_softmax(s), "log_softmax": lambda: numpy_log_softmax(s),
        "transpose copy": lambda: onp.ascontiguousarray(t.T),
        "cast f32->f16": lambda: x.astype(onp.float16),
        "arcsinh": lambda: onp.arcsinh(x), "arctan2": lambda: onp.arctan2(x, y),
        "logaddexp": lambda: onp.logaddexp(x, y), "clip": lambda: onp.clip(x, -1.0, 1.0),
    }
    x4, y4 = x[: N // 4].copy(), y[: N // 4].copy()
    o4 = onp.empty_like(x4)
    refs["add out= 4M"] = lambda: onp.add(x4, y4, out=o4)
    theirs = {}
    if torch is not None:
        tx, ty, tm, ts, tt = (torch.from_numpy(v) for v in (x, y, m, s, t))
        theirs = {
            "a+b": lambda: tx + ty, "a*2+1": lambda: tx * 2 + 1, "a**2": lambda: tx ** 2,
            "exp": lambda: torch.exp(tx),
            "log": lambda: torch.log(ty), "tanh": lambda: torch.tanh(tx),
            "sin": lambda: torch.sin(tx), "sigmoid": lambda: torch.sigmoid(tx),
            "erf": lambda: torch.erf(tx), "softmax": lambda: torch.softmax(ts, -1),
            "log_softmax": lambda: torch.log_softmax(ts, -1),
            "transpose copy": lambda: tt.t().contiguous(), "cast f32->f16": lambda: tx.half(),
            "arcsinh": lambda: torch.asinh(tx), "arctan2": lambda: torch.atan2(tx, ty),
            "logaddexp": lambda: torch.logaddexp(tx, ty), "clip": lambda: torch.clamp(tx, -1, 1),
            "add out= 4M": lambda: torch.add(tx[: N // 4], ty[: N // 4], out=to4),
        }
        to4 = torch.empty(N // 4)
    for fn in ("sum", "mean", "max", "argmax"):
        for axis in (None, 0, -1):
            name = f"{fn}(axis={axis})"
            refs[name] = lambda fn=fn, axis=axis: getattr(onp, fn)(m, axis=axis)
            if torch is not None:
                tfn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax,
                       "argmax": torch.argmax}[fn]
                theirs[name] = (lambda tfn=tfn, axis=axis:
                                tfn(tm) if axis is None else tfn(tm, dim=axis))
    for axis in (0, -1):
        name = f"std(axis={axis})"
        refs[name] = lambda axis=axis: onp.std(m, axis=axis)
        if torch is not None:
            theirs[name] = lambda axis=axis: torch.std(tm, dim=axis, correction=0)
    refs["sort(axis=-1)"] = lambda: onp.sort(m, axis=-1)
    refs["argsort(axis=-1)"] = lambda: onp.argsort(m, axis=-1)  # NumPy's default (unstable)
    refs["unique"] = lambda: onp.unique(m)
    refs["median(axis=-1)"] = lambda: onp.median(m, axis=-1)
    refs.update(product_and_indexing_cases(onp, x, m, s))
    refs.update(integer_reduction_cases(onp, m))
    refs.update(linalg_and_random_cases(onp))
    for axis in (0, -1):
        refs[f"cumsum(axis={axis})"] = lambda axis=axis: onp.cumsum(m, axis=axis)
    if torch is not None:
        theirs["sort(axis=-1)"] = lambda: torch.sort(tm, dim=-1)
        theirs["argsort(axis=-1)"] = lambda: torch.argsort(tm, dim=-1)
        theirs["unique"] = lambda: torch.unique(tm)
        theirs["median(axis=-1)"] = lambda: torch.quantile(tm, 0.5, dim=-1)
        for axis in (0, -1):
            theirs[f"cumsum(axis={axis})"] = lambda axis=axis: torch.cumsum(tm, dim=axis)
    return [(name, refs[name], ours1[name], ours2[name], theirs.get(name)) for name in ours1]


def time_once(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def measure(case, rounds):
    _, ref, ours1, ours2, theirs = case
    impls = {"numpy": ref or None, "ndx1": ours1, "ndx2": ours2, "torch": theirs or None}
    times = {k: [] for k in impls if impls[k]}
    for k, f in impls.items():  # warm up: allocations, page faults, lazy imports
        if f:
            f()
    for _ in range(rounds):
        for k in times:
            if k.startswith("ndx"):
                npx.set_num_threads(int(k[-1]))
            impls[k]()  # untimed: every implementation starts from the same (warm) caches
            times[k].append(time_once(impls[k]))
    npx.set_num_threads(None)
    return {k: statistics.median(v) for k, v in times.items()}


def fmt(v):
    return f"{v * 1e3:9.3f}" if v else f"{'n/a':>9s}"


def ratio(a, b):
    return f"{a / b:7.2f}" if a and b else f"{'n/a':>7s}"


def small_arrays_start_no_thread():
    npx.set_num_threads(2)
    x = np.ones((32767,))
    before = ndx._core._threads_started()
    for _ in range(50):
        np.exp(x), x + x, np.sum(x), npx.softmax(x)
    after = ndx._core._threads_started()
    npx.set_num_threads(None)
    return after - before


def two_python_threads(rounds):
    """np.exp on 8M elements in two Python threads vs one after the other, ndx at 1 thread.
    The two threads are started once and woken per round (starting a thread costs ~0.4 ms on
    this VM, which would swamp a 2.5 ms call)."""
    npx.set_num_threads(1)
    x = np.array(onp.random.default_rng(1).uniform(-3, 3, 8 * 1024 * 1024).astype(onp.float32))

    def work():
        np.exp(x)

    go = [threading.Event(), threading.Event()]
    done = [threading.Event(), threading.Event()]

    def loop(k):
        while True:
            go[k].wait()
            go[k].clear()
            work()
            done[k].set()

    for k in range(2):
        threading.Thread(target=loop, args=(k,), daemon=True).start()

    def both():
        for k in range(2):
            go[k].set()
        for k in range(2):
            done[k].wait()
            done[k].clear()

    work()
    both()
    seq, par = [], []
    for _ in range(rounds):
        seq.append(time_once(lambda: (work(), work())))
        par.append(time_once(both))
    npx.set_num_threads(None)
    return statistics.median(seq), statistics.median(par)


def main():
    if torch is not None:
        torch.set_num_threads(1)  # once: switching it costs milliseconds
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--only", default="",
                   help="comma-separated case names; 'gil' runs the two-thread case alone")
    args = p.parse_args()
    only = [s for s in args.only.split(",") if s]
    print(f"ndx SIMD target: {ndx._core._simd_target()}, default threads: "
          f"{npx.get_num_threads()}; NumPy {onp.__version__} (OPENBLAS_NUM_THREADS="
          f"{os.environ['OPENBLAS_NUM_THREADS']})"
          + (f"; PyTorch {torch.__version__}" if torch else "; PyTorch not installed"))
    print(f"{'case':18s} {'numpy ms':>9s} {'ndx1 ms':>9s} {'np/ndx1':>7s} {'ndx2 ms':>9s} "
          f"{'np/ndx2':>7s} {'2t gain':>7s} {'torch ms':>9s} {'torch/ndx1':>10s}")
    r1 = []
    for case in cases() if only != ["gil"] else []:
        if only and case[0] not in only:
            continue
        t = measure(case, args.rounds)
        n, a, b, c = t.get("numpy"), t.get("ndx1"), t.get("ndx2"), t.get("torch")
        if n:
            r1.append(n / a)
        print(f"{case[0]:18s} {fmt(n)} {fmt(a)} {ratio(n, a)} {fmt(b)} {ratio(n, b)} "
              f"{ratio(a, b)} {fmt(c)} {ratio(c, a):>10s}", flush=True)
    if r1:
        print(f"geomean NumPy/ndx (1 thread): {math.exp(statistics.fmean(map(math.log, r1))):.2f}")
    if not only:
        print(f"threads started by 50 rounds of ops on 32767-element arrays: "
              f"{small_arrays_start_no_thread()}")
    if not only or only == ["gil"]:
        seq, par = two_python_threads(args.rounds)
        print(f"np.exp(8M) x2, ndx at 1 thread: one after the other {seq * 1e3:.2f} ms, "
              f"two Python threads {par * 1e3:.2f} ms, speedup {seq / par:.2f}")


if __name__ == "__main__":
    main()
