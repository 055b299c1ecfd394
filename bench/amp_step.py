"""Training-step time and accuracy of mixed precision (ndx.amp) against float32, for the MLP
and CNN of bench/train_step.py: float32, AMP float16 and AMP bfloat16 (each with dynamic loss
scaling through amp.init_trainer / scale_loss). AMP is process-wide, so each round switches it
on and off around its own timing loop; the rounds interleave the three modes, and the medians
and ratios to float32 are printed. The accuracy columns train each mode from the same start on
a synthetic 10-class problem and report the final loss.

    python bench/amp_step.py [--batch 32] [--steps 100] [--repeat 5] [--threads 1]
"""
import argparse
import statistics
import time

import numpy as onp
from train_step import cnn, mlp  # the same networks as bench/train_step.py

import ndx
from ndx import amp, autograd, gluon, np, npx

MODES = ("float32", "float16", "bfloat16")


def use(mode):
    amp._reset()
    if mode != "float32":
        amp.init(mode)


def make_step(make, x, y, mode):
    use(mode)
    ndx.random_seed(0)
    net = make()
    net.initialize(ndx.initializer.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9})
    if mode != "float32":
        amp.init_trainer(trainer)

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y).mean()
            if mode == "float32":
                loss.backward()
            else:
                with amp.scale_loss(loss, trainer) as scaled:
                    autograd.backward(scaled)
        trainer.step(1)
        return loss

    step()  # warm-up: deferred shapes
    return step


def data(kind, batch):
    rng = onp.random.default_rng(0)
    shape = (batch, 64) if kind == "mlp" else (batch, 3, 16, 16)
    x = rng.normal(size=shape).astype(onp.float32)
    w = rng.normal(size=(int(onp.prod(shape[1:])), 10))
    y = (x.reshape(batch, -1) @ w).argmax(1)
    return np.array(x), np.array(y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    npx.set_num_threads(args.threads)
    print(f"batch {args.batch}, {args.steps} steps x {args.repeat} rounds, "
          f"{args.threads} thread(s)")
    print(f"{'model':6} {'mode':9} {'ms/step':>8} {'vs fp32':>8} {'loss after':>11}")
    for kind, make in (("mlp", mlp), ("cnn", cnn)):
        x, y = data(kind, args.batch)
        steps = {m: make_step(make, x, y, m) for m in MODES}
        times = {m: [] for m in MODES}
        last = {}
        for _ in range(args.repeat):
            for m in MODES:
                use(m)
                t = time.perf_counter()
                for _ in range(args.steps):
                    loss = steps[m]()
                last[m] = float(loss)
                times[m].append((time.perf_counter() - t) / args.steps * 1e3)
        base = statistics.median(times["float32"])
        for m in MODES:
            med = statistics.median(times[m])
            print(f"{kind:6} {m:9} {med:8.3f} {base / med:8.2f} {last[m]:11.4f}")
    amp._reset()


if __name__ == "__main__":
    main()
