"""Time of one `Trainer.step` on the parameters of bench/train_step.py's MLP: the optimizer's
one multi-weight op call per step against the same rule weight by weight (its `step`: one
fused op per weight for SGD and Adam, the elementwise rule for AdamW). Rounds interleave the
two; prints medians and ratios.

    python bench/optimizer_step.py [--steps 1000] [--repeat 7]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as onp

import ndx
from ndx import autograd, gluon, np

sys.path.insert(0, str(Path(__file__).parent))
from train_step import mlp  # noqa: E402

CASES = [("sgd", {"momentum": 0.9}), ("sgd", {}), ("adam", {}), ("adamw", {})]


def trainer_for(name, kwargs, x, y, per_weight):
    ndx.random_seed(0)
    net = mlp()
    net.initialize(ndx.initializer.Xavier())
    trainer = gluon.Trainer(net.collect_params(), name, dict(kwargs, learning_rate=0.01))
    if per_weight:
        opt = trainer.optimizer
        opt.fused_step = opt.step  # the rule weight by weight
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
    loss.backward()
    trainer.step(x.shape[0])
    # The timed steps follow no backward: every gradient counts as fresh (the Trainer refuses
    # stale gradients, as MXNet's does, and would update nothing)
    trainer._fresh_indices = lambda arrays, ignore_stale_grad, multi: None
    return trainer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    rng = onp.random.default_rng(0)
    x = np.array(rng.normal(size=(32, 64)).astype(onp.float32))
    y = np.array(rng.integers(0, 10, size=32))
    print(f"{'optimizer':22s} {'per weight us':>14s} {'one call us':>12s} {'speedup':>8s}")
    for name, kwargs in CASES:
        trainers = {k: trainer_for(name, kwargs, x, y, k == "per") for k in ("per", "one")}
        times = {k: [] for k in trainers}
        for _ in range(args.repeat):
            for k, trainer in trainers.items():
                t = time.perf_counter()
                for _ in range(args.steps):
                    trainer.step(32)
                times[k].append((time.perf_counter() - t) / args.steps * 1e6)
        per, one = (statistics.median(times[k]) for k in ("per", "one"))
        label = name + ("" if not kwargs else " " + ",".join(f"{k}={v}" for k, v in kwargs.items()))
        print(f"{label:22s} {per:14.1f} {one:12.1f} {per / one:8.2f}")
    params = list(trainers["one"]._params)
    values = sum(p.data().size for p in params)
    print(f"(median of {args.repeat} interleaved rounds of {args.steps} steps; the MLP's "
          f"{len(params)} parameters, {values:,} float32 values)")


if __name__ == "__main__":
    main()
