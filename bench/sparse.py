"""CSR products and casts: ndx's mx.nd.sparse against SciPy's CSR matrices (the NumPy
ecosystem's sparse reference) and NumPy's dense product, in one process.

    OPENBLAS_NUM_THREADS=1 python bench/sparse.py [--rounds 7] [--threads 1]

Each round times SciPy (and NumPy's dense matmul of the same matrix) then ndx, interleaved;
the table shows medians and SciPy time / ndx time (> 1: ndx is faster), and NumPy dense time
/ ndx time. Results are checked against SciPy's.
"""
import argparse
import statistics
import time

import numpy as onp
import scipy.sparse as sp

import ndx as mx
from ndx import npx


def matrix(rng, rows, cols, density):
    return sp.random(rows, cols, density=density, format="csr", dtype=onp.float32,
                     random_state=rng)


def cases(rng):
    a = matrix(rng, 4096, 8192, 0.01)       # a batch of sparse features (LibSVM-like)
    b = matrix(rng, 100000, 1000, 0.001)    # tall and very sparse
    w64 = rng.standard_normal((8192, 64)).astype(onp.float32)
    w1 = rng.standard_normal((8192, 1)).astype(onp.float32)
    g64 = rng.standard_normal((4096, 64)).astype(onp.float32)
    x256 = rng.standard_normal((1000, 256)).astype(onp.float32)
    dense_a = a.toarray()
    return [
        ("csr 4096x8192 1% @ (8192,64)", a, lambda m, w: m @ w, w64,
         lambda c, w: mx.nd.dot(c, w), dense_a),
        ("csr 4096x8192 1% @ (8192,1)", a, lambda m, w: m @ w, w1,
         lambda c, w: mx.nd.dot(c, w), dense_a),
        ("csr.T 4096x8192 1% @ (4096,64)", a, lambda m, g: m.T @ g, g64,
         lambda c, g: mx.nd.dot(c, g, transpose_a=True, forward_stype="default"), None),
        ("csr 100000x1000 0.1% @ (1000,256)", b, lambda m, x: m @ x, x256,
         lambda c, x: mx.nd.dot(c, x), None),
    ]


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def row(name, rounds, reference, ours, dense=None):
    """Times reference, dense (when given) and ours interleaved; prints one table row."""
    theirs, mine, dense_t = [], [], []
    for _ in range(rounds):
        theirs.append(timed(reference))
        if dense is not None:
            dense_t.append(timed(dense))
        mine.append(timed(ours))
    t, o = statistics.median(theirs), statistics.median(mine)
    d = f"{statistics.median(dense_t) / o:9.2f}" if dense_t else f"{'-':>9s}"
    print(f"{name:36s} {t * 1e3:9.3f} {o * 1e3:9.3f} {t / o:7.2f} {d}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    npx.set_num_threads(args.threads)
    rng = onp.random.default_rng(0)
    print(f"{'case':36s} {'scipy ms':>9s} {'ndx ms':>9s} {'sp/ndx':>7s} {'dense/ndx':>9s}")
    for name, m, ref, operand, ours, dense in cases(rng):
        c = mx.nd.sparse.csr_matrix(m)
        w = mx.nd.array(operand)
        onp.testing.assert_allclose(ours(c, w).asnumpy(), ref(m, operand), rtol=1e-4,
                                    atol=1e-4)
        row(name, args.rounds, lambda: ref(m, operand), lambda: ours(c, w).wait_to_read(),
            None if dense is None else lambda: dense @ operand)
    # storage casts
    x = matrix(rng, 4096, 8192, 0.01).toarray()
    nx = mx.nd.array(x)
    row("dense 4096x8192 -> csr", args.rounds, lambda: sp.csr_matrix(x),
        lambda: nx.tostype("csr")._data.wait_to_read())
    c, m = nx.tostype("csr"), sp.csr_matrix(x)
    row("csr 4096x8192 -> dense", args.rounds, m.toarray,
        lambda: c.tostype("default").wait_to_read())


if __name__ == "__main__":
    main()
