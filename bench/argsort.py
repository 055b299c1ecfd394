"""argsort by the kind of keys: ndx against NumPy's default argsort in one process.

    OPENBLAS_NUM_THREADS=1 python bench/argsort.py [--rounds 7] [--threads 1]

Lanes of few distinct values (ordered by counting), int64 of a bounded range (one sort of
(offset, position)), full-range int64 and floats; each round times NumPy then ndx, and the
table shows medians and NumPy time / ndx time (> 1: ndx is faster). ndx's result is checked
against NumPy's stable argsort (NumPy's default kind leaves ties in any order).
"""
import argparse
import statistics
import time

import numpy as onp

from ndx import np, npx


def cases():
    rng = onp.random.default_rng(0)
    rows = (4096, 1024)
    return {
        "int64 [-3,3) 4096x1024": rng.integers(-3, 3, rows),
        "int64 [0,1000) 4096x1024": rng.integers(0, 1000, rows),
        "int64 full 4096x1024": rng.integers(-2**63, 2**63 - 1, rows, dtype=onp.int64),
        "int64 [0,1e6) 4M": rng.integers(0, 10**6, 1 << 22),
        "int64 [-3,3) 16x65536": rng.integers(-3, 3, (16, 65536)),
        "float64 4096x1024": rng.standard_normal(rows),
        "int32 [-3,3) 4096x1024": rng.integers(-3, 3, rows).astype(onp.int32),
        "int32 [-3,3) 16x65536": rng.integers(-3, 3, (16, 65536)).astype(onp.int32),
        "int32 full 4096x1024": rng.integers(-2**31, 2**31 - 1, rows).astype(onp.int32),
        "float32 4096x1024": rng.standard_normal(rows).astype(onp.float32),
        "uint8 4096x1024": rng.integers(0, 256, rows).astype(onp.uint8),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    npx.set_num_threads(args.threads)
    print(f"{'case':26s} {'numpy ms':>9s} {'ndx ms':>9s} {'np/ndx':>7s}")
    for name, x in cases().items():
        a = np.array(x)
        onp.argsort(x, axis=-1)  # warm-up: first-touch page faults of each result
        np.argsort(a, axis=-1)
        theirs, ours = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            onp.argsort(x, axis=-1)
            t1 = time.perf_counter()
            got = np.argsort(a, axis=-1)
            t2 = time.perf_counter()
            theirs.append(t1 - t0)
            ours.append(t2 - t1)
        if not onp.array_equal(got.asnumpy(), onp.argsort(x, axis=-1, kind="stable")):
            raise AssertionError(f"{name}: ndx's argsort is not NumPy's stable order")
        t, o = statistics.median(theirs), statistics.median(ours)
        print(f"{name:26s} {t * 1e3:9.2f} {o * 1e3:9.2f} {t / o:7.2f}")


if __name__ == "__main__":
    main()
