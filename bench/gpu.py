"""GPU benchmarks (run on a machine with a CUDA GPU; see tools/gpu/device_run.sh).

Times are medians of CUDA-synchronized wall-clock loops. Bandwidth counts bytes each kernel
must read and write once; the ceiling is ndx's own device-to-device copy of the same size
(cudaMemcpyAsync), measured in the same run. PyTorch, when importable, runs the same ops in
the same process, interleaved.

    python bench/gpu.py [--size 268435456] [--json out.json]
"""
import argparse
import json
import statistics
import time

import numpy as onp

import ndx
from ndx import np, npx

try:
    import torch
except ImportError:  # the comparison columns stay empty
    torch = None

GPU = ndx.gpu(0)


def median_time(fn, sync, reps=15, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def ndx_sync():
    npx.synchronize(GPU)


def torch_sync():
    torch.cuda.synchronize()


def step_times(net, tnet, x, y, lr, steps):
    """Median times of one SGD step with softmax cross-entropy on (x, y): the ndx net (on the
    GPU, initialized) and the PyTorch net (None without PyTorch)."""
    from ndx import autograd, gluon
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    xd, yd = np.array(x, device=GPU), np.array(y, device=GPU)

    def step():
        with autograd.record():
            loss = loss_fn(net(xd), yd)
        loss.backward()
        trainer.step(len(x))
    t = median_time(step, ndx_sync, reps=steps)
    if tnet is None:
        return t, None
    opt = torch.optim.SGD(tnet.parameters(), lr=lr)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).long().cuda()
    lf = torch.nn.CrossEntropyLoss()

    def tstep():
        opt.zero_grad()
        lf(tnet(tx), ty).backward()
        opt.step()
    return t, median_time(tstep, torch_sync, reps=steps)


def train_step(row, batch=256, width=1024, steps=20):
    """One SGD step of a 784-width-width-10 MLP with softmax cross-entropy: ndx (imperative
    and hybridized) and PyTorch, per step."""
    from ndx import gluon
    rng = onp.random.default_rng(3)
    x = rng.normal(size=(batch, 784)).astype(onp.float32)
    y = rng.integers(0, 10, size=batch).astype(onp.float32)
    for hybrid in (False, True):
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(width, activation="relu"), gluon.nn.Dense(width, activation="relu"),
                gluon.nn.Dense(10))
        net.initialize(device=GPU)
        if hybrid:
            net.hybridize()
        tnet = None
        if torch:
            tnn = torch.nn
            tnet = tnn.Sequential(tnn.Linear(784, width), tnn.ReLU(), tnn.Linear(width, width),
                                  tnn.ReLU(), tnn.Linear(width, 10)).cuda()
        t, tt = step_times(net, tnet, x, y, 0.01, steps)
        row(f"MLP train step ({'hybridized' if hybrid else 'imperative'})", 0, t, tt)


def digits_cnn_step(row, batch=64, steps=30):
    """One SGD step of examples/train_digits.py's CNN (8x8 digits: conv 16, max-pool, conv 32,
    dense 64, dense 10) at its batch size, hybridized, against the same net in PyTorch: a
    small model, so per-op launch cost decides it."""
    from ndx import gluon
    rng = onp.random.default_rng(5)
    x = rng.normal(size=(batch, 1, 8, 8)).astype(onp.float32)
    y = rng.integers(0, 10, size=batch).astype(onp.float32)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(16, 3, padding=1, activation="relu"), gluon.nn.MaxPool2D(2),
            gluon.nn.Conv2D(32, 3, padding=1, activation="relu"), gluon.nn.Flatten(),
            gluon.nn.Dense(64, activation="relu"), gluon.nn.Dense(10))
    net.initialize(device=GPU)
    net.hybridize()
    tnet = None
    if torch:
        tnn = torch.nn
        tnet = tnn.Sequential(tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                              tnn.Conv2d(16, 32, 3, padding=1), tnn.ReLU(), tnn.Flatten(),
                              tnn.Linear(32 * 16, 64), tnn.ReLU(), tnn.Linear(64, 10)).cuda()
    t, tt = step_times(net, tnet, x, y, 0.05, steps)
    row("digits CNN train step (hybridized)", 0, t, tt)


def host_to_device(row, mb=64):
    """A host-to-device copy of `mb` MB from pageable and from page-locked memory, and the
    page-locked copy's cost to the host (the call returns before the transfer ends)."""
    h = onp.ones(mb << 18, onp.float32)
    pageable = np.array(h)
    pinned = pageable.pin_memory()
    nbytes = h.nbytes
    for name, src in (("pageable", pageable), ("pinned", pinned)):
        t = median_time(lambda src=src: src.to_device(GPU), ndx_sync, reps=10)
        tt = None
        if torch:
            th = torch.from_numpy(h)
            th = th.pin_memory() if name == "pinned" else th
            tt = median_time(lambda th=th: th.to("cuda", non_blocking=True), torch_sync, reps=10)
        row(f"copy host->gpu {mb} MB ({name})", nbytes, t, tt)
    calls = 20
    t = median_time(lambda: [pinned.to_device(GPU) for _ in range(calls)], lambda: None,
                    reps=5) / calls
    npx.synchronize(GPU)
    row(f"  pinned copy call, host time ({mb} MB)", 0, t, None)


def conv_layer(row, n=32, c=64, hw=56):
    """A ResNet-50 3x3 layer (n x 64 x 56 x 56, 64 filters, pad 1): forward, and forward +
    backward, against PyTorch (cuDNN)."""
    from ndx import autograd
    rng = onp.random.default_rng(4)
    x = rng.normal(size=(n, c, hw, hw)).astype(onp.float32)
    w = (rng.normal(size=(c, c, 3, 3)) * 0.05).astype(onp.float32)
    xd, wd = np.array(x, device=GPU), np.array(w, device=GPU)
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=c, no_bias=True)
    t = median_time(lambda: npx.convolution(xd, wd, **kw), ndx_sync, reps=10)
    tt = None
    if torch:  # float32 without TF32 on both sides (ndx's default; NDX_CUDA_ALLOW_TF32=1)
        torch.backends.cudnn.allow_tf32 = False
        tx, tw = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
        tt = median_time(lambda: torch.nn.functional.conv2d(tx, tw, padding=1), torch_sync,
                         reps=10)
    row(f"conv2d {n}x{c}x{hw}x{hw} 3x3 fwd", 0, t, tt)
    xd.attach_grad()
    wd.attach_grad()

    def fb():
        with autograd.record():
            y = npx.convolution(xd, wd, **kw)
        y.backward()
    t = median_time(fb, ndx_sync, reps=10)
    tt = None
    if torch:
        tx.requires_grad_(True)
        tw.requires_grad_(True)

        def tfb():
            torch.nn.functional.conv2d(tx, tw, padding=1).backward(
                torch.ones(n, c, hw, hw, device="cuda"))
        tt = median_time(tfb, torch_sync, reps=10)
    row(f"conv2d {n}x{c}x{hw}x{hw} 3x3 fwd+bwd", 0, t, tt)


def index_and_random(row, m, tm, a, ta, copy_bw):
    """argmax, dropout, normal draws and advanced-index gathers / scatters: the kernels that
    replaced host copies. Index arrays are read on the host (checked there, as pick's and
    embedding's are), so a gather's time includes that round trip."""
    side, n = m.shape[0], a.size
    for axis in (None, 1):
        t = median_time(lambda axis=axis: np.argmax(m, axis=axis), ndx_sync)
        tt = (median_time(lambda axis=axis: torch.argmax(tm, dim=axis), torch_sync)
              if torch else None)
        row(f"argmax axis={axis} of {side}x{side}", side * side * 4, t, tt, copy_bw)
    t = median_time(lambda: npx.dropout(a, p=0.5, mode="always"), ndx_sync)
    tt = (median_time(lambda: torch.nn.functional.dropout(ta, 0.5, training=True), torch_sync)
          if torch else None)
    row("dropout p=0.5 (x, mask, y)", 3 * n * 4, t, tt, copy_bw)
    t = median_time(lambda: np.random.normal(0, 1, size=(n,), device=GPU), ndx_sync)
    tt = (median_time(lambda: torch.randn(n, device="cuda"), torch_sync) if torch else None)
    row("normal draws (write)", n * 4, t, tt, copy_bw)
    flat = a[: 1 << 24]
    t = median_time(lambda: np.sort(flat), ndx_sync, reps=7)
    tt = median_time(lambda: torch.sort(ta[: 1 << 24]), torch_sync, reps=7) if torch else None
    row("sort 2^24 float32", 0, t, tt)
    rows2d = flat.reshape(4096, 4096)
    t = median_time(lambda: np.argsort(rows2d, axis=-1), ndx_sync, reps=7)
    tt = (median_time(lambda: torch.argsort(ta[: 1 << 24].reshape(4096, 4096), dim=-1,
                                            stable=True), torch_sync, reps=7)
          if torch else None)
    row("argsort axis=-1 of 4096x4096 (stable)", 0, t, tt)
    rows_, width = 1 << 20, 64
    table = np.array(onp.ones((rows_, width), onp.float32), device=GPU)
    hidx = onp.random.default_rng(3).integers(0, rows_, size=rows_)
    idx = np.array(hidx, device=GPU)
    ttable = torch.ones((rows_, width), device="cuda") if torch else None
    tidx = torch.from_numpy(hidx).cuda() if torch else None
    t = median_time(lambda: table[idx], ndx_sync)
    tt = median_time(lambda: ttable[tidx], torch_sync) if torch else None
    row(f"gather x[idx], {rows_}x{width} rows", 2 * rows_ * width * 4, t, tt, copy_bw)
    vals = table[idx]
    tvals = ttable[tidx] if torch else None

    def scatter():
        table[idx] = vals

    def tscatter():
        ttable[tidx] = tvals
    t = median_time(scatter, ndx_sync)
    tt = median_time(tscatter, torch_sync) if torch else None
    row(f"scatter x[idx] = v, {rows_}x{width}", 2 * rows_ * width * 4, t, tt, copy_bw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1 << 28)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    n = args.size
    rows = []

    def row(name, nbytes, t_ndx, t_torch=None, ceiling=None):
        r = {"case": name, "ndx_ms": t_ndx * 1e3,
             "ndx_GBps": nbytes / t_ndx / 1e9 if nbytes else None,
             "torch_ms": t_torch * 1e3 if t_torch else None}
        if ceiling and nbytes:
            r["of_copy_bw"] = nbytes / t_ndx / ceiling
        if t_torch:
            r["torch_over_ndx"] = t_torch / t_ndx
        rows.append(r)
        return r

    h = onp.random.default_rng(0).uniform(-1, 1, size=n).astype(onp.float32)
    a = np.array(h, device=GPU)
    b = np.array(h[::-1].copy(), device=GPU)
    ta = torch.from_numpy(h).cuda() if torch else None
    tb = torch.from_numpy(h[::-1].copy()).cuda() if torch else None
    del h

    t_copy = median_time(lambda: a.copy(), ndx_sync)
    copy_bw = 2 * n * 4 / t_copy
    t_tcopy = median_time(lambda: ta.clone(), torch_sync) if torch else None
    row("copy d2d (ceiling)", 2 * n * 4, t_copy, t_tcopy)
    cases = [
        ("add a+b", 3 * n * 4, lambda: a + b, (lambda: ta + tb) if torch else None),
        ("exp(a)", 2 * n * 4, lambda: np.exp(a), (lambda: torch.exp(ta)) if torch else None),
        ("a*2+1 (two kernels)", 4 * n * 4, lambda: a * 2 + 1,
         (lambda: ta * 2 + 1) if torch else None),
    ]
    for name, nbytes, f, tf in cases:
        t = median_time(f, ndx_sync)
        tt = median_time(tf, torch_sync) if tf else None
        row(name, nbytes, t, tt, copy_bw)

    side = int(n ** 0.5)
    m = a[: side * side].reshape(side, side)
    tm = ta[: side * side].reshape(side, side) if torch else None
    for name, axis in [("sum", None), ("sum", 0), ("sum", 1), ("max", None), ("max", 0),
                       ("max", 1)]:
        def f(name=name, axis=axis):
            return getattr(np, name)(m, axis=axis)
        if torch:
            tf = ((lambda: tm.sum()) if name == "sum" and axis is None else
                  (lambda axis=axis: tm.sum(dim=axis)) if name == "sum" else
                  (lambda: tm.max()) if axis is None else (lambda axis=axis: tm.amax(dim=axis)))
        t = median_time(f, ndx_sync)
        tt = median_time(tf, torch_sync) if torch else None
        row(f"{name} axis={axis} of {side}x{side}", side * side * 4, t, tt, copy_bw)

    s = np.array(onp.random.default_rng(1).normal(size=(8192, 8192)).astype(onp.float32),
                 device=GPU)
    ts = torch.from_numpy(s.asnumpy()).cuda() if torch else None
    t = median_time(lambda: npx.softmax(s, axis=-1), ndx_sync, reps=7)
    tt = median_time(lambda: torch.softmax(ts, dim=-1), torch_sync, reps=7) if torch else None
    row("softmax 8192x8192", 2 * 8192 * 8192 * 4, t, tt, copy_bw)

    index_and_random(row, m, tm, a, ta, copy_bw)

    for dtype in ("float32", "bfloat16"):
        k = 8192
        hm = onp.random.default_rng(2).normal(size=(k, k)).astype(onp.float32)
        ma = np.array(hm, device=GPU).astype(dtype)
        mb = np.array(hm.T.copy(), device=GPU).astype(dtype)
        t = median_time(lambda ma=ma, mb=mb: np.matmul(ma, mb), ndx_sync, reps=7)
        tt = None
        if torch:
            tdt = torch.float32 if dtype == "float32" else torch.bfloat16
            ta2 = torch.from_numpy(hm).cuda().to(tdt)
            tb2 = torch.from_numpy(hm.T.copy()).cuda().to(tdt)
            tt = median_time(lambda: torch.matmul(ta2, tb2), torch_sync, reps=7)
        r = row(f"matmul {k}^3 {dtype}", 0, t, tt)
        r["TFLOPs"] = 2 * k ** 3 / t / 1e12
        print(f"matmul {dtype}: {r['TFLOPs']:.1f} TFLOP/s (torch/cuBLAS time ratio "
              f"{r.get('torch_over_ndx', float('nan')):.3f})")

    train_step(row)
    digits_cnn_step(row)
    conv_layer(row)
    host_to_device(row)

    x1 = np.ones((1,), device=GPU)
    calls = 2000
    t = median_time(lambda: [x1 + x1 for _ in range(calls)], ndx_sync, reps=5) / calls
    t1 = torch.ones((1,), device="cuda") if torch else None
    tt = (median_time(lambda: [t1 + t1 for _ in range(calls)], torch_sync, reps=5) / calls
          if torch else None)
    row("tiny op x+x (1 elem), per call", 0, t, tt)

    print(f"device: {torch.cuda.get_device_name(0) if torch else 'gpu(0)'}; n = {n}")
    print(f"{'case':36s} {'ndx ms':>10s} {'GB/s':>8s} {'of copy':>8s} {'torch ms':>10s} "
          f"{'torch/ndx':>9s}")
    for r in rows:
        def fmt(v, spec):
            return format(v, spec) if v is not None else "-"
        print(f"{r['case']:36s} {fmt(r['ndx_ms'], '10.4f')} {fmt(r['ndx_GBps'], '8.1f')} "
              f"{fmt(r.get('of_copy_bw'), '8.2f')} {fmt(r['torch_ms'], '10.4f')} "
              f"{fmt(r.get('torch_over_ndx'), '9.2f')}")
    print("host fallbacks:", npx.gpu_host_fallbacks())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
