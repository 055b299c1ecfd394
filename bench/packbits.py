"""packbits / unpackbits: ndx against NumPy in one process.

    OPENBLAS_NUM_THREADS=1 python bench/packbits.py [--rounds 9] [--threads 1]

Bool lanes (a vector of bytes at a time), int32 elements, and packing along the first axis of
a matrix. Each round times NumPy then ndx (5 calls each); the table shows medians and NumPy
time / ndx time (> 1: ndx is faster). Results are checked against NumPy's.
"""
import argparse
import statistics
import time

import numpy as onp

from ndx import np, npx


def cases():
    rng = onp.random.default_rng(0)
    return {
        "bool 16M": (rng.random(1 << 24) < 0.5, {}),
        "bool 4096x1024 axis=0": (rng.random((4096, 1024)) < 0.5, {"axis": 0}),
        "bool 4096x1024 axis=-1": (rng.random((4096, 1024)) < 0.5, {"axis": -1}),
        "bool 4096x1001 axis=-1 little": (rng.random((4096, 1001)) < 0.5,
                                          {"axis": -1, "bitorder": "little"}),
        "int32 4M": (rng.integers(0, 2, 1 << 22).astype(onp.int32), {}),
    }


def timed(fn, calls=5):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def compare(theirs_fn, ours_fn, rounds):
    theirs_fn(), ours_fn()  # warm-up: first-touch page faults of each result
    theirs, ours = [], []
    for _ in range(rounds):
        theirs.append(timed(theirs_fn))
        ours.append(timed(ours_fn))
    return statistics.median(theirs), statistics.median(ours)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    npx.set_num_threads(args.threads)
    print(f"{'case':30s} {'op':10s} {'numpy ms':>9s} {'ndx ms':>9s} {'np/ndx':>7s}")
    for name, (x, kw) in cases().items():
        a = np.array(x)
        packed = onp.packbits(x, **kw)
        b = np.array(packed)
        if not onp.array_equal(np.packbits(a, **kw).asnumpy(), packed):
            raise AssertionError(f"{name}: ndx's packbits differs from NumPy's")
        if not onp.array_equal(np.unpackbits(b, **kw).asnumpy(), onp.unpackbits(packed, **kw)):
            raise AssertionError(f"{name}: ndx's unpackbits differs from NumPy's")
        rows = [("packbits", lambda: onp.packbits(x, **kw), lambda: np.packbits(a, **kw)),
                ("unpackbits", lambda: onp.unpackbits(packed, **kw),
                 lambda: np.unpackbits(b, **kw))]
        for op, theirs_fn, ours_fn in rows:
            t, o = compare(theirs_fn, ours_fn, args.rounds)
            print(f"{name:30s} {op:10s} {t * 1e3:9.3f} {o * 1e3:9.3f} {t / o:7.2f}")


if __name__ == "__main__":
    main()
