"""One training step of a large embedding table, four ways, against NumPy's hand-written
sparse step, in one process:

    OPENBLAS_NUM_THREADS=1 python bench/sparse_embedding.py [--rounds 7] [--steps 5]

A step is forward (look up `batch` ids in a vocab x dim float32 table), the loss
sum(rows * c), backward, and SGD with momentum. NumPy's step gathers the rows, sums the
gradient of each looked-up row (np.unique + np.add.at) and updates those rows and their
momentum (MXNet's lazy update). ndx's cases:

- dense: nn.Embedding, a dense gradient, every row updated (lazy_update=False);
- sparse_grad: nn.Embedding(sparse_grad=True), lazy_update=True (the gradient buffer is
  dense: its nonzero rows are found by a scan);
- row_sparse weight: contrib.nn.SparseEmbedding, lazy_update=True (the rows are pulled from
  the Trainer's store, the gradient is theirs alone, the store updates them).

Each round times `steps` steps (new ids each) of every case, interleaved; the table shows
the medians of a step and NumPy time / ndx time (> 1: ndx is faster). The weights of the
lazy cases are checked against NumPy's after the rounds.
"""
import argparse
import statistics
import time

import numpy as onp

import ndx as mx
from ndx import autograd, gluon, np

LR, MOMENTUM = 0.1, 0.9


class NumpyStep:
    def __init__(self, w0):
        self.w = w0.copy()
        self.mom = onp.zeros_like(w0)

    def __call__(self, ids, c):
        rows = self.w[ids]  # (the forward pass)
        _ = (rows * c).sum()
        uniq, where = onp.unique(ids, return_inverse=True)
        g = onp.zeros((uniq.size, self.w.shape[1]), onp.float32)
        onp.add.at(g, where.ravel(), c.reshape(-1, self.w.shape[1]))
        self.mom[uniq] = MOMENTUM * self.mom[uniq] - LR * (g / ids.size)
        self.w[uniq] += self.mom[uniq]

    def weights(self):
        return self.w


class NdxStep:
    def __init__(self, w0, kind):
        vocab, dim = w0.shape
        if kind == "row_sparse weight":
            self.net = gluon.contrib.nn.SparseEmbedding(vocab, dim)
        else:
            self.net = gluon.nn.Embedding(vocab, dim, sparse_grad=kind == "sparse_grad")
        self.net.initialize()
        self.net.weight.set_data(np.array(w0))
        self.trainer = gluon.Trainer(self.net.collect_params(), "sgd",
                                     {"learning_rate": LR, "momentum": MOMENTUM,
                                      "lazy_update": kind != "dense"})

    def __call__(self, ids, c):
        with autograd.record():
            loss = (self.net(ids) * c).sum()
        loss.backward()
        self.trainer.step(ids.size)

    def weights(self):
        return self.net.weight._reduce().asnumpy()


def timed(fn, batches):
    t0 = time.perf_counter()
    for ids, c in batches:
        fn(ids, c)
    return (time.perf_counter() - t0) / len(batches)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--vocab", type=int, default=200000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    mx.npx.set_num_threads(args.threads)
    rng = onp.random.default_rng(0)
    w0 = (rng.standard_normal((args.vocab, args.dim)) * 0.01).astype(onp.float32)
    reference = NumpyStep(w0)
    kinds = ["dense", "sparse_grad", "row_sparse weight"]
    steps = {k: NdxStep(w0, k) for k in kinds}
    times = {k: [] for k in ["numpy"] + kinds}
    rounds = []
    for _ in range(args.rounds + 1):  # (round 0 warms up and is not timed)
        batch = []
        for _ in range(args.steps):
            ids = rng.integers(0, args.vocab, size=(args.batch,))
            c = rng.standard_normal((args.batch, args.dim)).astype(onp.float32)
            batch.append((ids, c))
        rounds.append(batch)
    for r, batch in enumerate(rounds):
        t = timed(reference, batch)
        if r:
            times["numpy"].append(t)
        ndx_batch = [(np.array(ids), np.array(c)) for ids, c in batch]
        for k in kinds:
            t = timed(steps[k], ndx_batch)
            if r:
                times[k].append(t)
    base = statistics.median(times["numpy"])
    print(f"vocab {args.vocab} x dim {args.dim} float32, batch {args.batch} ids, "
          f"{args.threads} thread(s), medians of {args.rounds} rounds of {args.steps} steps")
    print(f"{'case':24s} {'ms/step':>9s} {'numpy/ndx':>10s}")
    print(f"{'numpy (lazy, by hand)':24s} {base * 1e3:9.3f} {'-':>10s}")
    for k in kinds:
        t = statistics.median(times[k])
        print(f"{k:24s} {t * 1e3:9.3f} {base / t:10.2f}")
    want = reference.weights()
    for k in ("sparse_grad", "row_sparse weight"):  # the lazy ones make NumPy's update
        onp.testing.assert_allclose(steps[k].weights(), want, rtol=1e-4, atol=1e-6,
                                    err_msg=k)


if __name__ == "__main__":
    main()
