"""Elementwise fusion in hybridized blocks: chains of 3 to 6 elementwise ops run fused (one
pass over memory, one kernel) against the same hybridized block with fusion off, and against
NumPy, in one process, interleaved. Prints medians and ratios (> 1: fused is faster).

    python bench/fusion.py [--rounds 7] [--sizes 1000,65536,4194304]
"""
import argparse
import statistics
import time

import numpy as onp

from ndx import _core, gluon, np, npx

# (name, ops in the chain, the chain on an ndx or NumPy namespace)
CHAINS = [
    ("a*2+1", 3, lambda m, x: x * 2 + 1 - x),
    ("tanh(a*2+1)*a-3", 5, lambda m, x: m.tanh(x * 2 + 1) * x - 3),
    ("exp(-a*a)*0.5+a-1", 6, lambda m, x: m.exp(-(x * x)) * 0.5 + x - 1),
    ("sigmoid-like", 4, lambda m, x: 1 / (1 + m.exp(-x))),
]


class Chain(gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(np, x)


def timed(fn, number):
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sizes", default="1000,65536,4194304")
    args = ap.parse_args()
    print(f"{'chain':<20}{'size':>9}{'fused us':>11}{'unfused us':>12}{'numpy us':>10}"
          f"{'unfused/fused':>15}{'numpy/fused':>13}{'kernels':>9}")
    for name, _, fn in CHAINS:
        for n in (int(s) for s in args.sizes.split(",")):
            xn = onp.random.default_rng(0).standard_normal(n).astype(onp.float32)
            x = np.array(xn)
            block = Chain(fn)
            block.hybridize()
            number = max(3, int(2e6 // max(n, 1000)))
            fused, unfused, ref = [], [], []
            for _ in range(args.rounds):
                npx.set_fusion(True)
                block(x).wait_to_read()
                fused.append(timed(lambda: block(x).wait_to_read(), number))
                kernels = _core._graph_stats(block._last_graph[0])["kernels"]
                npx.set_fusion(False)
                block(x).wait_to_read()
                unfused.append(timed(lambda: block(x).wait_to_read(), number))
                ref.append(timed(lambda: fn(onp, xn), number))
            npx.set_fusion(True)
            f, u, r = (statistics.median(v) * 1e6 for v in (fused, unfused, ref))
            print(f"{name:<20}{n:>9}{f:>11.1f}{u:>12.1f}{r:>10.1f}{u / f:>15.2f}{r / f:>13.2f}"
                  f"{kernels:>9}")


if __name__ == "__main__":
    main()
