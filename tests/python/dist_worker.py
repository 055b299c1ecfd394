"""The worker side of test_distributed.py: run by each process the launcher starts.

    python -m ndx.distributed.launch -n N dist_worker.py MODE OUTDIR

Modes: collectives (checks allreduce and broadcast against NumPy for every dtype and exits
non-zero on a mismatch), nccl (the same on GPU arrays), train (writes this rank's parameters
after a few steps), module (the same with MXNet 1.x's Module), and the failure modes kill,
hang, raise, exit3, sleep.
"""
import os
import signal
import sys
import time

import numpy as onp

import ndx
from ndx import autograd, gluon, np
from ndx import distributed as dist

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def values(dtype, shape, r):
    """Rank r's array: small integers (exact in every dtype) that differ by rank."""
    n = int(onp.prod(shape))
    base = (onp.arange(n).reshape(shape) % 5 + 2 * r + 1)
    if dtype == "bool":
        return (base + r) % 3 == 0
    if dtype.startswith("complex"):
        return (base + 1j * (r - base)).astype(dtype)
    return base.astype("float32" if dtype == "bfloat16" else dtype)


def to_ndx(a, dtype):
    return np.array(a, dtype=dtype)


def check(name, got, want):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    got = got.astype(want.dtype) if got.dtype != want.dtype else got
    if got.shape != want.shape or not onp.array_equal(got, want):
        raise AssertionError(f"rank {dist.rank()}: {name}: got {got!r}, want {want!r}")


def collectives(out):
    r, n = dist.init()
    shapes = [(), (0,), (3,), (2, 3), (40, 50)]
    arrays, expected = [], []
    for dtype in DTYPES:
        for shape in shapes:
            arrays.append(to_ndx(values(dtype, shape, r), dtype))
            parts = [values(dtype, shape, k) for k in range(n)]
            if dtype == "bool":
                want = onp.logical_or.reduce(parts) if parts else parts[0]
            else:
                want = sum(parts[1:], parts[0])
            expected.append((f"allreduce {dtype} {shape}", want))
    # A strided view: reduced through a contiguous copy, written back into the view.
    base = np.zeros((4, 6), dtype="float32")
    view = base[:, ::2]
    view[...] = np.array(values("float32", (4, 3), r))
    arrays.append(view)
    expected.append(("allreduce strided view",
                     sum(values("float32", (4, 3), k) for k in range(n))))
    dist.allreduce(arrays)  # one call: small arrays share buckets, big ones go in place
    for a, (name, want) in zip(arrays, expected):
        check(name, a, want)
    if not (base.asnumpy()[:, 1::2] == 0).all():
        raise AssertionError("allreduce wrote outside the strided view")
    # A list of contiguous CPU arrays only: the one-call path (_dist.allreduce_now), which
    # a Trainer's step takes.
    dtypes = ("float32", "int32", "float64", "bool", "float16")
    arrays = [to_ndx(values(dtype, (5, 2), r), dtype) for dtype in dtypes]
    dist.allreduce(arrays)
    for a, dtype in zip(arrays, dtypes):
        parts = [values(dtype, (5, 2), k) for k in range(n)]
        want = (onp.logical_or.reduce(parts) if dtype == "bool" else sum(parts[1:], parts[0]))
        check(f"list allreduce {dtype}", a, want)
    # One array at a time too (each its own call), and in a list of one.
    for dtype in ("float32", "int64", "float16"):
        a = to_ndx(values(dtype, (7,), r), dtype)
        dist.allreduce(a)
        check(f"single allreduce {dtype}",
              a, sum(values(dtype, (7,), k) for k in range(n)))
    root = n - 1
    arrays = [to_ndx(values(dtype, shape, r), dtype) for dtype in DTYPES for shape in shapes]
    dist.broadcast(arrays, root=root)
    for a, (dtype, shape) in zip(arrays, [(d, s) for d in DTYPES for s in shapes]):
        check(f"broadcast {dtype} {shape}", a, values(dtype, shape, root).astype(
            "float32" if dtype == "bfloat16" else dtype))
    dist.barrier()
    with open(os.path.join(out, f"ok{r}"), "w") as f:
        f.write("ok")


def nccl(out):
    """Each worker on its GPU (gpu(local rank)): allreduce and broadcast through NCCL."""
    r, n = dist.init()
    gpu = ndx.gpu(dist.local_rank())
    dtypes = [d for d in DTYPES if d not in ("int16", "uint16")]
    arrays = [np.array(values(d, (5, 6), r), dtype=d).to_device(gpu) for d in dtypes]
    dist.allreduce(arrays)
    for a, d in zip(arrays, dtypes):
        parts = [values(d, (5, 6), k) for k in range(n)]
        want = onp.logical_or.reduce(parts) if d == "bool" else sum(parts[1:], parts[0])
        check(f"nccl allreduce {d}", a.to_device(ndx.cpu()), want)
    b = np.full(4, float(r)).to_device(gpu)
    dist.broadcast(b, root=n - 1)
    check("nccl broadcast", b.to_device(ndx.cpu()), onp.full(4, float(n - 1)))
    with open(os.path.join(out, f"ok{r}"), "w") as f:
        f.write("ok")


def build_net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="tanh"), gluon.nn.Dense(3))
    return net


def batches(n_workers, steps, per_worker):
    rng = onp.random.RandomState(7)
    x = rng.randn(steps, n_workers * per_worker, 5).astype("float32")
    y = rng.randint(0, 3, (steps, n_workers * per_worker))
    return x, y


def train(out, update_on_kvstore, hybridize):
    r, n = dist.init()
    ndx.random_seed(100 + r)  # different initial weights: the Trainer must broadcast rank 0's
    net = build_net()
    net.initialize()
    if hybridize == "1":
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05},
                            kvstore="dist_sync",
                            update_on_kvstore={"1": True, "0": False}[update_on_kvstore])
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    per = 4
    x, y = batches(n, 6, per)
    initial = None
    for s in range(6):
        xb, yb = np.array(x[s, r * per:(r + 1) * per]), np.array(y[s, r * per:(r + 1) * per])
        with autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        if initial is None:  # the deferred weights exist now, broadcast from rank 0
            initial = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
        trainer.step(per * n)
    params = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    onp.savez(os.path.join(out, f"rank{r}.npz"), **params)
    onp.savez(os.path.join(out, f"initial{r}.npz"), **initial)
    with open(os.path.join(out, f"overlap{r}"), "w") as f:  # whether backward summed them
        f.write(str(trainer._overlap is not None))


SPARSE_VOCAB, SPARSE_DIM, SPARSE_STEPS, SPARSE_PER = 30, 3, 4, 3


def sparse_batches(n_workers):
    """Ids (rows 0..11 of a 30-row table) and the loss weights c of sum(emb(ids) * c)."""
    rng = onp.random.RandomState(3)
    ids = rng.randint(0, 12, (SPARSE_STEPS, n_workers * SPARSE_PER, 2))
    c = rng.randn(SPARSE_STEPS, n_workers * SPARSE_PER, 2, SPARSE_DIM).astype("float32")
    w0 = rng.randn(SPARSE_VOCAB, SPARSE_DIM).astype("float32")
    return ids, c, w0


def sparse_train(out):
    """contrib.nn.SparseEmbedding (a row_sparse weight) over dist_sync: lazy SGD."""
    r, n = dist.init()
    ids, c, w0 = sparse_batches(n)
    net = gluon.contrib.nn.SparseEmbedding(SPARSE_VOCAB, SPARSE_DIM)
    net.initialize()
    net.weight.set_data(np.array(w0 if r == 0 else w0 * 0))  # rank 0's value must win
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.3, "momentum": 0.5, "lazy_update": True},
                            kvstore="dist_sync")
    mine = slice(r * SPARSE_PER, (r + 1) * SPARSE_PER)
    for s in range(SPARSE_STEPS):
        with autograd.record():
            loss = (net(np.array(ids[s, mine])) * np.array(c[s, mine])).sum()
        loss.backward()
        trainer.step(SPARSE_PER * n)
    onp.save(os.path.join(out, f"sparse{r}.npy"), net.weight._reduce().asnumpy())
    # a pushed row whose gradients sum to zero is still updated (MXNet's union of rows):
    # rank 0 pushes row 1 (zeros), rank 1 row 2 (ones); weight decay reaches row 1 too
    kv = ndx.kv.create("dist_sync")
    kv.set_optimizer(ndx.optimizer.SGD(learning_rate=1.0, wd=0.5, lazy_update=True))
    kv.init("z", np.ones((3, 2)))
    row, value = (1, 0.0) if r == 0 else (2, 1.0)
    kv.push("z", ndx.nd.sparse.row_sparse_array(
        (ndx.nd.full((1, 2), value), ndx.nd.array([row], dtype="int64")), shape=(3, 2)))
    pulled = np.zeros((3, 2))
    kv.pull("z", out=pulled)
    onp.save(os.path.join(out, f"union{r}.npy"), pulled.asnumpy())


def module_symbol():
    data = ndx.sym.Variable("data")
    h = ndx.sym.Activation(ndx.sym.FullyConnected(data, name="fc1", num_hidden=8), "tanh")
    return ndx.sym.SoftmaxOutput(ndx.sym.FullyConnected(h, name="fc2", num_hidden=3),
                                 name="softmax")


def module_steps(mod, x, y, rows):
    for s in range(x.shape[0]):
        mod.forward_backward(ndx.io.DataBatch([np.array(x[s, rows])],
                                              [np.array(y[s, rows].astype("float32"))]))
        mod.update()


def module_train(out, update_on_kvstore):
    """MXNet 1.x's Module with kvstore='dist_sync': each rank trains on its part of the
    batches; the parameters start from rank 0's and stay equal."""
    os.environ["MXNET_UPDATE_ON_KVSTORE"] = update_on_kvstore
    r, n = dist.init()
    ndx.random_seed(100 + r)
    per = 4
    x, y = batches(n, 4, per)
    mod = ndx.mod.Module(module_symbol())
    mod.bind(data_shapes=[("data", (per, 5))], label_shapes=[("softmax_label", (per,))])
    mod.init_params(ndx.init.Xavier())
    mod.init_optimizer(kvstore="dist_sync", optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    initial = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    module_steps(mod, x, y, slice(r * per, (r + 1) * per))
    onp.savez(os.path.join(out, f"rank{r}.npz"),
              **{k: v.asnumpy() for k, v in mod.get_params()[0].items()})
    onp.savez(os.path.join(out, f"initial{r}.npz"), **initial)


def failure(mode, out):
    r, n = dist.init()
    a = np.ones(4)
    with open(os.path.join(out, f"pid{r}"), "w") as f:
        f.write(str(os.getpid()))
    for step in range(4):
        if step == 2 and r == 1:
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif mode == "hang":
                time.sleep(600)
            elif mode == "raise":
                raise ValueError("worker 1 found a bad batch")
        if mode == "sleep" and step == 2:
            with open(os.path.join(out, f"ready{r}"), "w") as f:
                f.write("ready")
            time.sleep(600)
        dist.allreduce(a)
    if mode == "exit3":
        sys.exit(3)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    if mode == "collectives":
        collectives(out)
    elif mode == "nccl":
        nccl(out)
    elif mode == "train":
        train(out, sys.argv[3], sys.argv[4])
    elif mode == "module":
        module_train(out, sys.argv[3])
    elif mode == "sparse":
        sparse_train(out)
    else:
        failure(mode, out)


if __name__ == "__main__":
    main()
