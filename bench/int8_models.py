"""Whole networks in INT8 (mx.contrib.quantization.quantize_net) against the same hybridized
float32 networks, in one process.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/int8_models.py [--rounds 25] [--batch 64]

Each network gets non-trivial BatchNorm statistics, is calibrated (naive) on 4 batches of
random data, and is timed on one batch: rounds are interleaved (float32, then INT8, each after
an untimed call of its own) and the table shows medians, for 1 and 2 threads
(npx.set_num_threads). ratio = float32 time / INT8 time (> 1: INT8 is faster). The last
column is the largest difference between the two outputs over the float output's range.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as onp  # noqa: E402

import ndx as mx  # noqa: E402
from ndx import np, npx  # noqa: E402
from ndx.contrib.quantization import quantize_net  # noqa: E402
from ndx.gluon import nn  # noqa: E402
from ndx.gluon.model_zoo import vision  # noqa: E402


def small_cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(32, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Conv2D(64, 3, padding=1), nn.Activation("relu"),
            nn.AvgPool2D(2), nn.Flatten(), nn.Dense(10))
    return net


NETS = {
    "CNN 3x32x32 (32 / 64 channels)": (small_cnn, (3, 32, 32)),
    "resnet18_v1 3x32x32": (lambda: vision.resnet18_v1(classes=10), (3, 32, 32)),
    "resnet18_v2 3x32x32": (lambda: vision.resnet18_v2(classes=10), (3, 32, 32)),
    "mobilenet1.0 3x64x64": (lambda: vision.mobilenet1_0(classes=10), (3, 64, 64)),
}


def set_bn_statistics(net, rng):
    """BatchNorm running statistics like a trained network's (not 0 and 1)."""
    for name, p in net.collect_params().items():
        if name.endswith("running_mean"):
            p.set_data(np.array(rng.normal(0, 0.1, p.shape).astype(onp.float32)))
        elif name.endswith("running_var"):
            p.set_data(np.array(rng.uniform(0.5, 1.5, p.shape).astype(onp.float32)))


def float_net(make, shape, batch, rng):
    """A hybridized network with trained-like BatchNorm statistics, and a batch for it."""
    net = make()
    net.initialize(mx.init.Xavier())
    x = np.array(rng.uniform(0, 1, (batch,) + shape).astype(onp.float32))
    net(x)
    set_bn_statistics(net, rng)
    net.hybridize()
    return net, x


def prepared(make, shape, batch, rng):
    net, x = float_net(make, shape, batch, rng)
    calib = [np.array(rng.uniform(0, 1, (batch,) + shape).astype(onp.float32))
             for _ in range(4)]
    qnet = quantize_net(net, calib_mode="naive", calib_data=calib)
    return net, qnet, x


def timed(fn):
    fn()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    rng = onp.random.default_rng(0)
    print(f"{'network':32s} {'threads':>7s} {'float32 ms':>10s} {'INT8 ms':>8s} {'ratio':>6s} "
          f"{'max diff':>8s}")
    for name, (make, shape) in NETS.items():
        net, qnet, x = prepared(make, shape, args.batch, rng)
        ref, got = net(x).asnumpy(), qnet(x).asnumpy()
        diff = float(onp.abs(ref - got).max() / (ref.max() - ref.min()))
        for threads in (1, 2):
            npx.set_num_threads(threads)
            runs = {"f": [], "q": []}
            for _ in range(args.rounds):
                runs["f"].append(timed(lambda: net(x).wait_to_read()))
                runs["q"].append(timed(lambda: qnet(x).wait_to_read()))
            f, q = statistics.median(runs["f"]), statistics.median(runs["q"])
            print(f"{name:32s} {threads:7d} {f * 1e3:10.2f} {q * 1e3:8.2f} {f / q:6.2f} "
                  f"{diff:8.4f}")
    npx.set_num_threads(None)


if __name__ == "__main__":
    main()
