"""Per-call overhead of small operations: ndx against NumPy in the same process.

    python bench/bench_overhead.py [--repeat 7] [--number 20000]

Prints the median time per call (µs) of each and the ratio ndx / NumPy, then the geometric
mean and the largest ratio. Medians over `repeat` runs of `number` calls, NumPy and ndx
interleaved run by run; the machines are shared and noisy, so compare ratios.
"""
import argparse
import math
import statistics
import timeit

import numpy as onp

from ndx import np as nnp

CASES = [
    ("zeros((3, 4))", "np.zeros((3, 4))"),
    ("ones((3, 4))", "np.ones((3, 4))"),
    ("full((3, 4), 2.0)", "np.full((3, 4), 2.0)"),
    ("asarray(numpy array)", "np.asarray(x)"),
    ("concatenate([a, b])", "np.concatenate([a, b])"),
    ("a[1:3]", "a[1:3]"),
    ("a + b (4 floats)", "a + b"),
    ("a * 2.0", "a * 2.0"),
    ("np.add(a, b)", "np.add(a, b)"),
    ("np.sum(m)", "np.sum(m)"),
    ("np.sum(m, axis=1)", "np.sum(m, axis=1)"),
    ("m[1]", "m[1]"),
    ("m[:, 1:3]", "m[:, 1:3]"),
    ("m.T", "m.T"),
    ("m.shape", "m.shape"),
    ("np.exp(a)", "np.exp(a)"),
    ("m @ m", "m @ m"),
    ("array([1., 2., 3.])", "np.array([1.0, 2.0, 3.0])"),
]


def setup_ns(np):
    return {
        "np": np,
        "a": np.array(onp.arange(4, dtype=onp.float32)),
        "b": np.array(onp.ones(4, dtype=onp.float32)),
        "m": np.array(onp.ones((4, 4), dtype=onp.float32)),
        "x": onp.ones((4, 4), dtype=onp.float32),
    }


def median_us(stmt, ns, repeat, number):
    times = timeit.repeat(stmt, globals=ns, repeat=repeat, number=number)
    return statistics.median(times) / number * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--number", type=int, default=20000)
    args = p.parse_args()
    ref, ours = setup_ns(onp), setup_ns(nnp)
    print(f"{'operation':24s} {'numpy µs':>9s} {'ndx µs':>9s} {'ndx/numpy':>10s}")
    ratios = []
    for name, stmt in CASES:
        t_ref, t_ndx = [], []
        for _ in range(args.repeat):  # interleaved, so both see the same machine load
            t_ref.append(median_us(stmt, ref, 1, args.number))
            t_ndx.append(median_us(stmt, ours, 1, args.number))
        t_ref, t_ndx = statistics.median(t_ref), statistics.median(t_ndx)
        ratios.append(t_ndx / t_ref)
        print(f"{name:24s} {t_ref:9.3f} {t_ndx:9.3f} {t_ndx / t_ref:10.2f}")
    geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
    print(f"{'median ratio':24s} {'':9s} {'':9s} {statistics.median(ratios):10.2f}")
    print(f"{'geomean ratio':24s} {'':9s} {'':9s} {geo:10.2f}")
    print(f"{'largest ratio':24s} {'':9s} {'':9s} {max(ratios):10.2f}")


if __name__ == "__main__":
    main()
