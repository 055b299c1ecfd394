"""Neural-network op speed on the CPU: ndx against PyTorch (when installed) in one process.

    PYTHONPATH=python python bench/nn_ops.py [--rounds 15] [--threads 1,2] [--only conv]

Cases: convolution forward and forward+backward at the train_step CNN's shapes, at
32x16x32x32 with a 3x3 kernel, and at a ResNet-18 stage (64 channels, 56x56, 3x3, batch 8);
max and average pooling; layer_norm and softmax of 4096x1024. Each round times one call of
every implementation in turn, right after an untimed call of its own, so a noisy neighbour
slows all alike; the table shows medians. ratio = PyTorch time / ndx time (> 1: ndx is
faster). Both libraries get the same thread count (npx.set_num_threads,
torch.set_num_threads). NDX_DNNL=0 in the environment gives ndx's reference kernels.
"""
import argparse
import statistics
import time

import numpy as onp

from ndx import autograd, np, npx

try:
    import torch
    import torch.nn.functional as tf
except ImportError:  # optional, never a dependency
    torch = None

CONVS = {  # name: (batch, in channels, size, out channels, kernel, pad)
    "conv digits 1->16 8x8": (32, 1, 8, 16, 3, 1),
    "conv digits 16->32 4x4": (32, 16, 4, 32, 3, 1),
    "conv 32x16x32x32 ->32": (32, 16, 32, 32, 3, 1),
    "conv resnet 8x64x56x56": (8, 64, 56, 64, 3, 1),
}


def conv_cases(name, spec):
    n, c, s, f, k, pad = spec
    rng = onp.random.default_rng(0)
    xn = rng.standard_normal((n, c, s, s), dtype=onp.float32)
    wn = rng.standard_normal((f, c, k, k), dtype=onp.float32) * 0.1
    bn = rng.standard_normal(f, dtype=onp.float32)
    x, w, b = np.array(xn), np.array(wn), np.array(bn)

    def ndx_fwd():
        return npx.convolution(x, w, b, kernel=(k, k), pad=(pad, pad), num_filter=f)

    xg, wg, bg = x.copy(), w.copy(), b.copy()
    for a in (xg, wg, bg):
        a.attach_grad()

    def ndx_fwd_bwd():
        with autograd.record():
            y = npx.convolution(xg, wg, bg, kernel=(k, k), pad=(pad, pad), num_filter=f)
        y.backward()
        return wg.grad

    out = {f"{name} fwd": {"ndx": ndx_fwd}, f"{name} fwd+bwd": {"ndx": ndx_fwd_bwd}}
    if torch is not None:
        tx, tw, tb = torch.from_numpy(xn), torch.from_numpy(wn), torch.from_numpy(bn)
        txg, twg, tbg = (t.clone().requires_grad_() for t in (tx, tw, tb))

        def torch_fwd_bwd():
            for t in (txg, twg, tbg):
                t.grad = None
            tf.conv2d(txg, twg, tbg, padding=pad).backward(torch.ones(n, f, s, s))
            return twg.grad

        out[f"{name} fwd"]["torch"] = lambda: tf.conv2d(tx, tw, tb, padding=pad)
        out[f"{name} fwd+bwd"]["torch"] = torch_fwd_bwd
    return out


def other_cases():
    rng = onp.random.default_rng(1)
    pn = rng.standard_normal((32, 32, 56, 56), dtype=onp.float32)
    p = np.array(pn)
    rn = rng.standard_normal((4096, 1024), dtype=onp.float32)
    r = np.array(rn)
    g, be = np.ones(1024), np.zeros(1024)
    bg, bb, bm, bv = np.ones(32), np.zeros(32), np.zeros(32), np.ones(32)
    out = {
        "maxpool 2x2 32x32x56x56": {
            "ndx": lambda: npx.pooling(p, kernel=(2, 2), stride=(2, 2), pool_type="max")},
        "avgpool 3x3 s1 32x32x56x56": {
            "ndx": lambda: npx.pooling(p, kernel=(3, 3), pad=(1, 1), pool_type="avg")},
        "layer_norm 4096x1024": {"ndx": lambda: npx.layer_norm(r, g, be, axis=-1)},
        "softmax 4096x1024": {"ndx": lambda: npx.softmax(r, axis=-1)},
        "batch_norm train 32x32x56x56": {"ndx": _ndx_train(
            lambda: npx.batch_norm(p, bg, bb, bm, bv))},
    }
    head = np.array(rng.standard_normal(rn.shape, dtype=onp.float32))
    ph = np.array(rng.standard_normal((32, 32, 28, 28), dtype=onp.float32))
    grads = {
        "maxpool 2x2 32x32x56x56 fwd+bwd": (
            (p,), lambda a: npx.pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max"), ph),
        "layer_norm 4096x1024 fwd+bwd": (
            (r, g, be), lambda *a: npx.layer_norm(*a, axis=-1), head),
        "softmax 4096x1024 fwd+bwd": ((r,), lambda a: npx.softmax(a, axis=-1), head),
        "batch_norm 32x32x56x56 fwd+bwd": (
            (p, bg, bb), lambda *a: npx.batch_norm(*a, bm, bv), p),
    }
    for name, (args, f, hd) in grads.items():
        out[name] = {"ndx": _ndx_fwd_bwd(args, f, hd)}
    if torch is not None:
        tp, tr = torch.from_numpy(pn), torch.from_numpy(rn)
        tg, tbe = torch.ones(1024), torch.zeros(1024)
        out["maxpool 2x2 32x32x56x56"]["torch"] = lambda: tf.max_pool2d(tp, 2)
        out["avgpool 3x3 s1 32x32x56x56"]["torch"] = lambda: tf.avg_pool2d(tp, 3, 1, 1)
        out["layer_norm 4096x1024"]["torch"] = lambda: tf.layer_norm(tr, (1024,), tg, tbe)
        out["softmax 4096x1024"]["torch"] = lambda: torch.softmax(tr, -1)
        tbg, tbb, tbm, tbv = torch.ones(32), torch.zeros(32), torch.zeros(32), torch.ones(32)
        out["batch_norm train 32x32x56x56"]["torch"] = lambda: tf.batch_norm(
            tp, tbm, tbv, tbg, tbb, training=True)
        th, tph = torch.from_numpy(head.asnumpy()), torch.from_numpy(ph.asnumpy())
        tgrads = {
            "maxpool 2x2 32x32x56x56 fwd+bwd": ((tp,), lambda a: tf.max_pool2d(a, 2), tph),
            "layer_norm 4096x1024 fwd+bwd": (
                (tr, tg, tbe), lambda *a: tf.layer_norm(a[0], (1024,), a[1], a[2]), th),
            "softmax 4096x1024 fwd+bwd": ((tr,), lambda a: torch.softmax(a, -1), th),
            "batch_norm 32x32x56x56 fwd+bwd": (
                (tp, tbg, tbb),
                lambda *a: tf.batch_norm(a[0], tbm, tbv, a[1], a[2], training=True), tp),
        }
        for name, (args, f, hd) in tgrads.items():
            out[name]["torch"] = _torch_fwd_bwd(args, f, hd)
    return out


def _ndx_train(f):
    """f run in training mode (batch statistics) without recording."""
    def run():
        with autograd.train_mode():
            return f()
    return run


def _ndx_fwd_bwd(args, f, head):
    """A call that records f on copies of args (gradients attached) and runs its backward."""
    args = [a.copy() for a in args]
    for a in args:
        a.attach_grad()

    def run():
        with autograd.record():
            y = f(*args)
        y.backward(head)
        return args[0].grad
    return run


def _torch_fwd_bwd(args, f, head):
    args = [a.clone().requires_grad_() for a in args]

    def run():
        for a in args:
            a.grad = None
        f(*args).backward(head)
        return args[0].grad
    return run


def time_once(f):
    # The pause lets the other library's idle worker threads stop spinning (PyTorch's OpenMP
    # threads spin for a while after each parallel region), so they do not take a core from
    # this call; the untimed call then warms caches, allocators and this library's own pool.
    time.sleep(0.01)
    f()
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def measure(impls, rounds, threads):
    times = {k: [] for k in impls}
    npx.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    for _ in range(rounds):
        for k, f in impls.items():
            times[k].append(time_once(f))
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    cases = {}
    for name, spec in CONVS.items():
        cases.update(conv_cases(name, spec))
    cases.update(other_cases())
    if args.only:
        keys = [s.strip() for s in args.only.split(",")]
        cases = {k: v for k, v in cases.items() if any(s in k for s in keys)}
    threads = [int(t) for t in args.threads.split(",")]
    print(f"{'case':34s} {'thr':>3s} {'ndx ms':>9s} {'torch ms':>9s} {'torch/ndx':>9s}")
    for name, impls in cases.items():
        for t in threads:
            m = measure(impls, args.rounds, t)
            tt = m.get("torch")
            tcols = f"{tt * 1e3:9.3f} {tt / m['ndx']:9.2f}" if tt else f"{'n/a':>9s} {'':>9s}"
            print(f"{name:34s} {t:3d} {m['ndx'] * 1e3:9.3f} {tcols}", flush=True)
    npx.set_num_threads(None)


if __name__ == "__main__":
    main()
