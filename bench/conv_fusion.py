"""Convolution epilogue fusion (`_FusedConvolution`) in hybridized inference: each network's
forward with fusion on against the same hybridized network with it off, in one process.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/conv_fusion.py [--rounds 9] [--batch 64]

Rounds are interleaved (fused, then unfused, each after an untimed call of its own); the table
shows medians for 1 and 2 threads (npx.set_num_threads). ratio = unfused time / fused time
(> 1: fusion is faster). The networks get non-trivial BatchNorm statistics. The last column
is the largest difference between the two outputs over the output's range.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as onp  # noqa: E402
from int8_models import NETS as MODEL_NETS  # noqa: E402  (bench/ is the script's directory)
from int8_models import float_net  # noqa: E402

from ndx import _core, npx  # noqa: E402
from ndx.gluon import nn  # noqa: E402


def small_cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(32, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Conv2D(64, 3, padding=1), nn.BatchNorm(),
            nn.Activation("relu"), nn.AvgPool2D(2), nn.Flatten(), nn.Dense(10))
    return net


# int8_models' networks, its CNN with a BatchNorm after both convolutions.
NETS = {"CNN 3x32x32 (conv+bn+relu x2)": (small_cnn, (3, 32, 32)),
        **{k: v for k, v in MODEL_NETS.items() if not k.startswith("CNN")}}


def timed(net, x, fusion):
    prev = npx.set_fusion(fusion)
    try:
        net(x).wait_to_read()
        t = time.perf_counter()
        out = net(x)
        out.wait_to_read()
        return time.perf_counter() - t, out.asnumpy(), _core._graph_stats(net._last_graph[0])
    finally:
        npx.set_fusion(prev)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    rng = onp.random.default_rng(0)
    nets = {name: float_net(make, shape, args.batch, rng) for name, (make, shape) in NETS.items()}
    print(f"batch {args.batch}, {args.rounds} interleaved rounds, medians")
    print(f"{'network':32s} {'thr':>3s} {'kernels':>9s} {'fused ms':>9s} {'unfused ms':>10s} "
          f"{'ratio':>6s} {'max diff':>9s}")
    for threads in (int(t) for t in args.threads.split(",")):
        npx.set_num_threads(threads)
        for name, (net, x) in nets.items():
            fused, plain = [], []
            for _ in range(args.rounds):
                tf, yf, st = timed(net, x, True)
                tp, yp, st_off = timed(net, x, False)
                fused.append(tf)
                plain.append(tp)
            f, p = statistics.median(fused), statistics.median(plain)
            diff = onp.abs(yf - yp).max() / max(onp.abs(yp).max(), 1e-30)
            kernels = f"{st['kernels']}/{st_off['kernels']}"
            print(f"{name:32s} {threads:3d} {kernels:>9s} {f * 1e3:9.2f} {p * 1e3:10.2f} "
                  f"{p / f:6.2f} {diff:9.1e}")


if __name__ == "__main__":
    main()
