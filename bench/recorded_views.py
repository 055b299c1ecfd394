"""Shape ops (reshape, transpose, swapaxes, slicing, expand_dims) on arrays autograd records,
which give views as unrecorded ones do, in one process:

    OPENBLAS_NUM_THREADS=1 python bench/recorded_views.py [--rounds 7]

Part 1, per call (4 MB float32 input): NumPy's view, ndx's unrecorded view and ndx's recorded
view, with NumPy time / ndx recorded time.

Part 3 (after part 2), recorded gathers by index arrays, masks and np.take, forward + backward
(loss = sum), 4 MB float32 input, with NumPy's forward alone for scale.

Part 2, one forward + backward of multi-head attention's head split and merge (batch 32,
sequence 128, width 256, 8 heads; projections, scores, softmax, weighted sum) recorded by
autograd, two ways: as ndx runs it now (views), and with every shape op followed by a copy,
which is what recorded shape ops cost before they gave views (each ran its op's copy). Rounds
interleave the cases; the table shows medians.
"""
import argparse
import statistics
import time

import numpy as onp

from ndx import autograd, np, npx

R = onp.random.default_rng(0)


def timed(fn, number):
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number


def view_cases():
    a = R.standard_normal((1024, 1024)).astype(onp.float32)
    b = R.standard_normal((64, 128, 128)).astype(onp.float32)
    return {
        "reshape(-1)": (a, lambda x: x.reshape(-1)),
        ".T": (a, lambda x: x.T),
        "swapaxes(0, 2)": (b, lambda x: x.swapaxes(0, 2)),
        "x[:, :512]": (a, lambda x: x[:, :512]),
        "x[:, None]": (a, lambda x: x[:, None]),
    }


def part_one(rounds):
    rows = {}
    for name, (value, op) in view_cases().items():
        x = np.array(value)
        x.attach_grad()

        def recorded(x=x, op=op):
            with autograd.record():
                op(x)
        fns = {"numpy": lambda v=value, op=op: op(v), "ndx": lambda x=x, op=op: op(x),
               "ndx recorded": recorded}
        times = {k: [] for k in fns}
        for _ in range(rounds):
            for k, fn in fns.items():
                times[k].append(timed(fn, 200))
        rows[name] = {k: statistics.median(v) for k, v in times.items()}
    print("| shape op | NumPy (us) | ndx (us) | ndx recorded (us) | NumPy / ndx recorded |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, t in rows.items():
        print(f"| {name} | {t['numpy'] * 1e6:.2f} | {t['ndx'] * 1e6:.2f} | "
              f"{t['ndx recorded'] * 1e6:.2f} | {t['numpy'] / t['ndx recorded']:.2f} |")


def attention(x, w_qkv, w_out, heads, copy):
    keep = np.copy if copy else (lambda a: a)
    batch, seq, width = x.shape
    qkv = keep(np.matmul(x, w_qkv).reshape(batch, seq, 3, heads, width // heads))
    q, k, v = (keep(keep(qkv[:, :, i]).transpose(0, 2, 1, 3)) for i in range(3))
    scores = npx.softmax(np.matmul(q, keep(k.swapaxes(-1, -2))) / (width // heads) ** 0.5)
    merged = keep(keep(np.matmul(scores, v).transpose(0, 2, 1, 3)).reshape(batch, seq, width))
    return np.matmul(merged, w_out)


def part_two(rounds):
    width, heads = 256, 8
    x = np.array(R.standard_normal((32, 128, width)).astype(onp.float32))
    w_qkv = np.array(R.standard_normal((width, 3 * width)).astype(onp.float32) * 0.05)
    w_out = np.array(R.standard_normal((width, width)).astype(onp.float32) * 0.05)
    for p in (x, w_qkv, w_out):
        p.attach_grad()

    def step(copy):
        with autograd.record():
            loss = attention(x, w_qkv, w_out, heads, copy).sum()
        loss.backward()
        return x.grad.asnumpy()

    onp.testing.assert_allclose(step(True), step(False), rtol=1e-4, atol=1e-4)
    times = {"views": [], "copies": []}
    for _ in range(rounds):
        for k in times:
            times[k].append(timed(lambda k=k: step(k == "copies"), 3))
    v, c = (statistics.median(times[k]) for k in ("views", "copies"))
    print()
    print("| attention head split / merge, forward + backward | views (ms) | copies (ms) | "
          "copies / views |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| batch 32, seq 128, width 256, 8 heads | {v * 1e3:.1f} | {c * 1e3:.1f} | "
          f"{c / v:.2f} |")


def part_three(rounds):
    value = R.standard_normal((1024, 1024)).astype(onp.float32)
    x = np.array(value)
    x.attach_grad()
    mask, rows = value > 0, R.random(1024) > 0.5
    idx = R.integers(0, 1024, 512)
    cases = {"x[mask]": (mask, lambda a, k: a[k]), "x[row_mask]": (rows, lambda a, k: a[k]),
             "x[idx]": (idx, lambda a, k: a[k]), "x[:, idx]": (idx, lambda a, k: a[:, k]),
             "take(x, idx, axis=0)": (idx, lambda a, k: (np if isinstance(a, np.ndarray)
                                                         else onp).take(a, k, axis=0)),
             "take(x, idx, axis=1)": (idx, lambda a, k: (np if isinstance(a, np.ndarray)
                                                         else onp).take(a, k, axis=1))}
    print()
    print("| recorded gather, forward + backward | NumPy forward (ms) | ndx (ms) |")
    print("| --- | ---: | ---: |")
    for name, (key, op) in cases.items():
        nd_key = np.array(key)

        def step(op=op, nd_key=nd_key):
            with autograd.record():
                loss = op(x, nd_key).sum()
            loss.backward()
        fns = {"numpy": lambda op=op, key=key: op(value, key), "ndx": step}
        times = {k: [] for k in fns}
        for _ in range(rounds):
            for k, fn in fns.items():
                times[k].append(timed(fn, 5))
        n, t = (statistics.median(times[k]) for k in ("numpy", "ndx"))
        print(f"| {name} | {n * 1e3:.2f} | {t * 1e3:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    part_one(args.rounds)
    part_two(args.rounds)
    part_three(args.rounds)


if __name__ == "__main__":
    main()
