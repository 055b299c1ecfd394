"""INT8 inference kernels: ndx's quantized fully connected and convolution (oneDNN's INT8
primitives) against the same float32 layers in ndx and NumPy (fully connected only: NumPy has
no convolution), in one process.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/int8.py [--rounds 15]

Rounds are interleaved: each round times one call of every implementation in turn, each
after an untimed call of its own; the table shows medians. ndx runs with 1 and 2 threads.
ratio = float32 time / int8 time (> 1: INT8 is faster). The INT8 calls include the
requantization to int8 (calibrated range) and, for the first layer of a network, the
quantization of the float input is a separate op (quantize_v2), timed on its own row.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as onp  # noqa: E402

from ndx import _core, np, npx  # noqa: E402


def timed(fn):
    fn()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def quantized(x):
    r = float(onp.abs(x).max())
    return onp.rint(x * (127 / r)).astype(onp.int8), r


def fc_case(n, k, f):
    rng = onp.random.default_rng(0)
    x = rng.standard_normal((n, k)).astype(onp.float32)
    w = rng.standard_normal((f, k)).astype(onp.float32) * 0.05
    b = rng.standard_normal(f).astype(onp.float32)
    xq, xr = quantized(x)
    wq, wr = quantized(w)
    ins = (np.array(xq), np.array(wq), np.array(b), np.array([-xr]), np.array([xr]),
           np.array([-wr]), np.array([wr]), np.array([0.0]), np.array([1.0]))
    params = {"num_hidden": f, "min_calib_range": -20.0, "max_calib_range": 20.0}
    xd, wd, bd = np.array(x), np.array(w), np.array(b)
    return {
        "numpy f32": lambda: x @ w.T + b,
        "ndx f32": lambda: npx.fully_connected(xd, wd, bd, num_hidden=f).wait_to_read(),
        "ndx int8": lambda: _core._invoke("_contrib_quantized_fully_connected", ins, params,
                                          None)[0].wait_to_read(),
    }


def conv_case(n, c, hw, f, k):
    rng = onp.random.default_rng(0)
    x = rng.standard_normal((n, c, hw, hw)).astype(onp.float32)
    w = rng.standard_normal((f, c, k, k)).astype(onp.float32) * 0.05
    b = rng.standard_normal(f).astype(onp.float32)
    xq, xr = quantized(x)
    wq, wr = quantized(w)
    geom = {"kernel": (k, k), "pad": (k // 2, k // 2), "num_filter": f}
    ins = (np.array(xq), np.array(wq), np.array(b), np.array([-xr]), np.array([xr]),
           np.array([-wr]), np.array([wr]), np.array([0.0]), np.array([1.0]))
    params = dict(geom, min_calib_range=-20.0, max_calib_range=20.0)
    xd, wd, bd = np.array(x), np.array(w), np.array(b)
    return {
        "ndx f32": lambda: npx.convolution(xd, wd, bd, **geom).wait_to_read(),
        "ndx int8": lambda: _core._invoke("_contrib_quantized_conv", ins, params,
                                          None)[0].wait_to_read(),
        "quantize_v2 of x": lambda: _core._invoke("_contrib_quantize_v2", (xd,),
                                                  {"min_calib_range": -xr,
                                                   "max_calib_range": xr}, None)[0].wait_to_read(),
    }


CASES = {
    "fc 64x1024 -> 1024": lambda: fc_case(64, 1024, 1024),
    "fc 256x4096 -> 1024": lambda: fc_case(256, 4096, 1024),
    "conv 32x64x28x28, 64 3x3": lambda: conv_case(32, 64, 28, 64, 3),
    "conv 8x128x14x14, 256 3x3": lambda: conv_case(8, 128, 14, 256, 3),
    "conv 32x16x8x8, 32 3x3 (digits)": lambda: conv_case(32, 16, 8, 32, 3),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    print(f"{'case':34s} {'threads':>7s} {'impl':>17s} {'median ms':>10s} {'f32/int8':>9s}")
    for name, make in CASES.items():
        fns = make()
        for threads in (1, 2):
            npx.set_num_threads(threads)
            times = {k: [] for k in fns}
            for _ in range(args.rounds):
                for k, fn in fns.items():
                    times[k].append(timed(fn))
            med = {k: statistics.median(v) for k, v in times.items()}
            for k, v in med.items():
                ratio = ""
                if k == "ndx int8":
                    ratio = f"{med['ndx f32'] / v:9.2f}"
                print(f"{name:34s} {threads:7d} {k:>17s} {v * 1e3:10.3f} {ratio}")
    npx.set_num_threads(None)


if __name__ == "__main__":
    main()
