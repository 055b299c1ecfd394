"""Time of one training step (forward, backward, optimizer update) for a 3-layer MLP and, when
the convolution ops are available, a small CNN: ndx imperative, ndx hybridized, and PyTorch
eager on CPU when it is installed. Each round times `steps` steps of every implementation in
turn, so a noisy neighbour slows all alike; prints medians over the rounds and ratios.

    python bench/train_step.py [--batch 32] [--steps 200] [--repeat 5] [--threads 2]

--threads sets both libraries' kernel threads (npx.set_num_threads, torch.set_num_threads).
"""
import argparse
import statistics
import time

import numpy as onp

import ndx
from ndx import autograd, gluon, np, npx


def mlp():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(256, activation="relu"),
            gluon.nn.Dense(10))
    return net


def cnn():
    if not hasattr(gluon.nn, "Conv2D"):
        return None
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(16, 3, padding=1, activation="relu"), gluon.nn.MaxPool2D(2),
            gluon.nn.Conv2D(32, 3, padding=1, activation="relu"), gluon.nn.GlobalAvgPool2D(),
            gluon.nn.Dense(10))
    return net


def ndx_step(make, x, y, hybridize):
    ndx.random_seed(0)
    onp.random.seed(0)
    net = make()
    net.initialize(ndx.initializer.Xavier())
    if hybridize:
        net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])

    step()  # warm-up: deferred shapes, graph capture
    return step


def torch_step(kind, xn, yn, threads):
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    if kind == "mlp":
        net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(xn[0].size, 256),
                                  torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                  torch.nn.Linear(256, 10))
    else:
        net = torch.nn.Sequential(torch.nn.Conv2d(xn.shape[1], 16, 3, padding=1), torch.nn.ReLU(),
                                  torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1),
                                  torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                                  torch.nn.Flatten(), torch.nn.Linear(32, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.from_numpy(xn), torch.from_numpy(yn)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    step()
    return step


def time_interleaved(steps_by_name, steps, repeat):
    """{name: median seconds per step}, each round running every implementation in turn."""
    times = {name: [] for name in steps_by_name}
    for _ in range(repeat):
        for name, step in steps_by_name.items():
            t = time.perf_counter()
            for _ in range(steps):
                step()
            times[name].append((time.perf_counter() - t) / steps)
    return {name: statistics.median(v) for name, v in times.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    npx.set_num_threads(args.threads)
    rng = onp.random.default_rng(0)
    cases = [("mlp", mlp, rng.normal(size=(args.batch, 64)).astype(onp.float32))]
    if cnn() is not None:
        cases.append(("cnn", cnn, rng.normal(size=(args.batch, 1, 8, 8)).astype(onp.float32)))
    yn = rng.integers(0, 10, size=args.batch).astype(onp.int64)
    print(f"{'model':6s} {'ndx ms':>9s} {'hybrid ms':>10s} {'hybrid x':>9s} {'torch ms':>9s} "
          f"{'torch/hybrid':>13s}")
    for name, make, xn in cases:
        x, y = np.array(xn), np.array(yn)
        impls = {"imp": ndx_step(make, x, y, False), "hyb": ndx_step(make, x, y, True)}
        torch_fn = torch_step(name, xn, yn, args.threads)
        if torch_fn is not None:
            impls["torch"] = torch_fn
        t = time_interleaved(impls, args.steps, args.repeat)
        t_imp, t_hyb, t_torch = t["imp"], t["hyb"], t.get("torch")
        torch_cols = (f"{t_torch * 1e3:9.3f} {t_torch / t_hyb:13.2f}" if t_torch
                      else f"{'n/a':>9s} {'(no torch)':>13s}")
        print(f"{name:6s} {t_imp * 1e3:9.3f} {t_hyb * 1e3:10.3f} {t_imp / t_hyb:9.2f} {torch_cols}")
    print(f"(batch {args.batch}, {args.threads} threads each, median of {args.repeat} "
          f"interleaved rounds of {args.steps} steps; "
          f"npx ops: {len([n for n in dir(npx) if not n.startswith('_')])})")


if __name__ == "__main__":
    main()
