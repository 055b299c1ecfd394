"""ndx.distributed, the dist_sync kvstore, the launcher and the sharding samplers (issue 17).

The multi-process tests start real workers (tests/python/dist_worker.py) through
`python -m ndx.distributed.launch` on this machine (Open MPI, shared memory and loopback),
each bounded by a subprocess timeout, and check what the workers computed against NumPy and
against one process training on the concatenated batches.
"""
import os
import signal
import subprocess
import sys
import time

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np
from ndx import distributed as dist
from ndx.distributed import launch

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "dist_worker.py")
sys.path.insert(0, HERE)
import dist_worker  # noqa: E402


def run_launcher(*args, timeout=120, env=None):
    """(exit status, combined output, seconds) of the launcher."""
    cmd = [sys.executable, "-m", "ndx.distributed.launch", *args]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start


# ---- one process: no launcher, rank 0 of 1 ----

def test_one_process_is_rank_0_of_1():
    assert not dist.is_launched()
    assert dist.init() == (0, 1)
    assert (dist.rank(), dist.world_size()) == (0, 1)
    a = np.arange(4.0)
    dist.allreduce(a)  # the sum over one worker: unchanged
    assert onp.array_equal(a.asnumpy(), onp.arange(4.0))
    dist.broadcast([a], root=0)
    dist.barrier()
    kv = ndx.kv.create("dist_sync")
    assert (kv.rank, kv.num_workers, kv.type) == (0, 1, "dist_sync")
    kv.init("w", np.ones(3))
    kv.push("w", np.full(3, 2.0))
    out = np.zeros(3)
    kv.pull("w", out=out)
    assert onp.array_equal(out.asnumpy(), [2.0, 2.0, 2.0])
    g = np.array([1.0, 2.0])
    kv.pushpull("g", g)
    assert onp.array_equal(g.asnumpy(), [1.0, 2.0])


def test_errors_are_typed(monkeypatch):
    dist.init()
    with pytest.raises(TypeError, match="ndx array"):
        dist.allreduce([onp.ones(2)])
    with pytest.raises(TypeError, match="expects an ndx array or a list"):
        dist.allreduce(3)
    with pytest.raises(IndexError, match=r"root must be a rank in \[0, 1\)"):
        dist.broadcast(np.ones(2), root=1)
    with pytest.raises(TypeError, match="root must be an int"):
        dist.broadcast(np.ones(2), root=0.5)
    with pytest.raises(ValueError, match="timeout must be a finite number"):
        dist.allreduce_async(np.ones(2)).wait(timeout=-1)
    monkeypatch.setenv("NDX_DIST_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="NDX_DIST_TIMEOUT must be a number"):
        dist.default_timeout()
    monkeypatch.setenv("NDX_DIST_TIMEOUT", "0")
    with pytest.raises(ValueError, match="NDX_DIST_TIMEOUT.*> 0"):
        dist.default_timeout()
    monkeypatch.setattr(dist._state, "initialized", False)
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "two")
    with pytest.raises(ValueError, match="OMPI_COMM_WORLD_SIZE must be an int"):
        dist.world_size()
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "2")
    with pytest.raises(ValueError, match=r"OMPI_COMM_WORLD_RANK must be in \[0, 2\)"):
        dist.rank()


def test_store_types_without_a_backend_raise():
    with pytest.raises(NotImplementedError, match="no parameter servers"):
        ndx.kv.create("dist_async")
    if ndx.num_gpus() == 0:
        with pytest.raises(dist.DistributedError, match="'nccl' reduces GPU arrays and this "
                                                        "process sees no GPU"):
            ndx.kv.create("nccl")
    with pytest.raises(NotImplementedError, match="dist_sync"):
        ndx.kv.create("horovod")
    with pytest.raises(ValueError, match="unknown store type"):
        ndx.kv.create("dist_fast")


# ---- autograd's gradient hook, which the Trainer overlaps the allreduce with ----

def test_grad_hook_reports_each_gradient_last_layer_first():
    from ndx import _core
    w1, w2, b2 = np.ones((3, 2)), np.ones((2, 1)), np.zeros(1)
    unwatched = np.ones(3)
    for a in (w1, w2, b2, unwatched):
        a.attach_grad()
    events = []
    _core._autograd_set_grad_hook([w1, w2, b2], lambda i, e: events.append((i, e)))
    try:
        x = np.ones((4, 3))
        with autograd.record():
            y = (np.tanh(np.dot(x * unwatched, w1)) @ w2 + b2).sum()
        y.backward()
    finally:
        _core._autograd_set_grad_hook(None, None)
    # Each watched gradient: before-write (0), then written (1); the backward pass's end (2)
    # once. w1 is used first in the forward pass, so its gradient is written last.
    assert events[-1] == (-1, 2)
    pairs = events[:-1]
    assert [e for _, e in pairs] == [0, 1] * 3
    order = [i for i, e in pairs if e == 1]
    assert sorted(order) == [0, 1, 2] and order[-1] == 0
    # the gradients are the plain ones (the hook only watches)
    h = onp.tanh(onp.ones((4, 3)) @ onp.ones((3, 2)))
    onp.testing.assert_allclose(w2.grad.asnumpy(), h.sum(0)[:, None], rtol=1e-6)


def test_an_exception_in_the_grad_hook_ends_backward():
    from ndx import _core
    w = np.ones(3)
    w.attach_grad()

    def hook(i, e):
        raise KeyError("hook says no")

    _core._autograd_set_grad_hook([w], hook)
    try:
        with autograd.record():
            y = (w * 2).sum()
        with pytest.raises(KeyError, match="hook says no"):
            y.backward()
    finally:
        _core._autograd_set_grad_hook(None, None)
    with pytest.raises(ValueError, match="no gradient buffer"):
        _core._autograd_set_grad_hook([np.ones(2)], hook)


# ---- samplers that shard a data set ----

def test_split_sampler_parts():
    parts = [list(gluon.data.SplitSampler(10, 3, k)) for k in range(3)]
    assert parts == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]  # 10 // 3 each; the 10th in none
    shuffled = list(gluon.data.SplitSampler(10, 3, 1, shuffle=True))
    assert sorted(shuffled) == [3, 4, 5]
    with pytest.raises(ValueError, match="part_index must be < num_parts"):
        gluon.data.SplitSampler(10, 2, 2)
    with pytest.raises(ValueError, match="num_parts must be >= 1"):
        gluon.data.SplitSampler(10, 0, 0)


@pytest.mark.parametrize("length,parts,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False),
                                                   (2, 4, False), (0, 2, False)])
def test_distributed_sampler_shards_one_permutation(length, parts, drop_last):
    samplers = [gluon.data.DistributedSampler(length, parts, k, seed=5, drop_last=drop_last)
                for k in range(parts)]
    for epoch in range(2):
        shards = [list(s) for s in samplers]
        per = length // parts if drop_last else -(-length // parts)
        assert all(len(s) == per for s in shards)  # the same count on every worker
        assert all(len(sh) == per for sh in shards)
        order = onp.random.RandomState(5 + epoch).permutation(length)
        # Worker k takes every parts-th index from k of the epoch's order, padded by
        # repeating the order's start when the length does not divide.
        padded = onp.resize(order, per * parts) if length else order
        for k, sh in enumerate(shards):
            assert sh == padded[k::parts].tolist()
        if not drop_last:
            assert set().union(*shards) == set(range(length))


def test_distributed_sampler_epochs_and_errors():
    s = gluon.data.DistributedSampler(20, 2, 0, seed=1)
    first, second = list(s), list(s)
    assert first != second  # a new order each epoch
    s.set_epoch(0)
    assert list(s) == first
    assert list(gluon.data.DistributedSampler(6, 2, 1, shuffle=False)) == [1, 3, 5]
    with pytest.raises(ValueError, match="part_index must be < num_parts"):
        gluon.data.DistributedSampler(10, 2, 5)
    with pytest.raises(TypeError, match="num_parts must be an int"):
        gluon.data.DistributedSampler(10, 2.0, 0)
    # Without arguments: this process's rank and world size (0 of 1 here).
    assert list(gluon.data.DistributedSampler(4, shuffle=False)) == [0, 1, 2, 3]


# ---- the launcher's argument checks (before anything starts) ----

@pytest.mark.parametrize("args,message", [
    (["-n", "0", WORKER], "must be >= 1, got 0"),
    (["-n", "two", WORKER], "expected an int"),
    (["-n", "2", "--timeout", "-3", WORKER], "must be a finite number > 0"),
    (["-n", "2", "--hosts", "no-such-host.invalid", WORKER], "does not resolve"),
    (["-n", "2", "--hosts", "localhost:0", WORKER], "slots must be an int >= 1"),
    (["-n", "2", "--hosts", "localhost,", WORKER], "empty host name"),
    (["-n", "3", "--hosts", "localhost:1", WORKER], "1 slots for -n 3 workers"),
    (["-n", "2", "/no/such/script.py"], "is not a file"),
])
def test_launcher_rejects_bad_arguments(args, message):
    rc, out, _ = run_launcher(*args, timeout=60)
    assert rc == 2
    assert message in out


def test_launcher_dry_run_names_mpirun_and_the_environment():
    rc, out, _ = run_launcher("-n", "3", "--timeout", "7", "--threads", "2", "--dry-run",
                              WORKER, "train", "x", timeout=60)
    assert rc == 0
    words = out.split()
    assert words[0].endswith("mpirun") and words[words.index("-n") + 1] == "3"
    for name in ("NDX_DIST_TIMEOUT", "NDX_NUM_THREADS", "NDX_DIST_REPORT_DIR"):
        assert name in words
    assert words[-3:] == [WORKER, "train", "x"]


# ---- several processes ----

@pytest.mark.parametrize("nproc", [2, 3])
def test_collectives_every_dtype(tmp_path, nproc):
    # A 1 KB bucket: the small arrays share buckets and the 40x50 ones go in place.
    rc, out, _ = run_launcher("-n", str(nproc), WORKER, "collectives", str(tmp_path),
                              env={"NDX_DIST_BUCKET_MB": "0.001"})
    assert rc == 0, out
    assert sorted(os.listdir(tmp_path)) == [f"ok{r}" for r in range(nproc)]


def train_one_process(n_workers):
    """What the workers' training must equal: one process, the same steps on the workers'
    concatenated batches, starting from rank 0's weights."""
    ndx.random_seed(100)
    net = dist_worker.build_net()
    net.initialize()
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = dist_worker.batches(n_workers, 6, 4)
    for s in range(6):
        with autograd.record():
            loss = loss_fn(net(np.array(x[s])), np.array(y[s]))
        loss.backward()
        trainer.step(x.shape[1])
    return {k: p.data().asnumpy() for k, p in net.collect_params().items()}


# update_on_kvstore; hybridized; NDX_DIST_OVERLAP (gradients summed during backward, in
# buckets of NDX_DIST_BUCKET_MB: 0.0002 MB makes one bucket per parameter or two)
TRAIN_CASES = [(2, "1", "1", "0", "4"), (3, "0", "1", "0", "4"), (2, "0", "0", "1", "0.0002"),
               (3, "0", "1", "1", "4")]


@pytest.mark.parametrize("nproc,update_on_kvstore,hybridize,overlap,bucket_mb", TRAIN_CASES)
def test_training_matches_one_process_on_the_concatenated_batches(
        tmp_path, nproc, update_on_kvstore, hybridize, overlap, bucket_mb):
    rc, out, _ = run_launcher("-n", str(nproc), WORKER, "train", str(tmp_path),
                              update_on_kvstore, hybridize,
                              env={"NDX_DIST_OVERLAP": overlap, "NDX_DIST_BUCKET_MB": bucket_mb})
    assert rc == 0, out
    for r in range(nproc):
        assert (tmp_path / f"overlap{r}").read_text() == str(overlap == "1")
    ranks = [dict(onp.load(tmp_path / f"rank{r}.npz")) for r in range(nproc)]
    initial = [dict(onp.load(tmp_path / f"initial{r}.npz")) for r in range(nproc)]
    for r in range(1, nproc):  # rank 0's start, and bit-identical parameters after 6 steps
        for k in ranks[0]:
            assert initial[r][k].tobytes() == initial[0][k].tobytes(), k
            assert ranks[r][k].tobytes() == ranks[0][k].tobytes(), k
    reference = train_one_process(nproc)
    assert set(reference) == set(ranks[0])
    for k, v in reference.items():
        onp.testing.assert_allclose(ranks[0][k], v, rtol=1e-5, atol=1e-6, err_msg=k)
        assert not onp.allclose(v, initial[0][k])  # (training moved them)


def test_row_sparse_weights_over_dist_sync_match_one_lazy_sgd_on_the_whole_batch(tmp_path):
    """contrib.nn.SparseEmbedding over dist_sync on 2 workers: the row_sparse gradients are
    summed over the workers and SGD updates the rows either worker looked up, as NumPy's
    SGD (MXNet's documented rule) on the concatenated batches does."""
    rc, out, _ = run_launcher("-n", "2", WORKER, "sparse", str(tmp_path))
    assert rc == 0, out
    got = [onp.load(tmp_path / f"sparse{r}.npy") for r in range(2)]
    assert got[0].tobytes() == got[1].tobytes()
    ids, c, w0 = dist_worker.sparse_batches(2)
    w, mom = w0.astype(onp.float64), onp.zeros(w0.shape)
    for s in range(ids.shape[0]):
        g = onp.zeros(w.shape)
        onp.add.at(g, ids[s].ravel(), c[s].reshape(-1, w.shape[1]))
        rows = onp.unique(ids[s])
        mom[rows] = 0.5 * mom[rows] - 0.3 * g[rows] / ids.shape[1]
        w[rows] += mom[rows]
    onp.testing.assert_allclose(got[0], w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(got[0][12:], w0[12:])  # never looked up
    for r in range(2):  # rows 1 (a zero sum) and 2 decay; row 2 takes its gradient too
        onp.testing.assert_allclose(onp.load(tmp_path / f"union{r}.npy"),
                                    [[1, 1], [0.5, 0.5], [-0.5, -0.5]], rtol=1e-6)


@pytest.mark.parametrize("update_on_kvstore", ["1", "0"])
def test_module_dist_sync_matches_one_process_on_the_concatenated_batches(
        tmp_path, update_on_kvstore):
    """mx.mod.Module(...).init_optimizer(kvstore='dist_sync'): rank 0's initial parameters
    everywhere, rescale_grad 1 / (batch x workers), so 2 workers equal one process on the
    concatenated batches (whose Module has no KVStore)."""
    rc, out, _ = run_launcher("-n", "2", WORKER, "module", str(tmp_path), update_on_kvstore)
    assert rc == 0, out
    ranks = [dict(onp.load(tmp_path / f"rank{r}.npz")) for r in range(2)]
    initial = [dict(onp.load(tmp_path / f"initial{r}.npz")) for r in range(2)]
    for k in ranks[0]:
        assert initial[1][k].tobytes() == initial[0][k].tobytes(), k
        assert ranks[1][k].tobytes() == ranks[0][k].tobytes(), k
    mod = ndx.mod.Module(dist_worker.module_symbol())
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    mod.init_params(arg_params={k: np.array(v) for k, v in initial[0].items()})
    mod.init_optimizer(optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    x, y = dist_worker.batches(2, 4, 4)
    dist_worker.module_steps(mod, x, y, slice(None))
    for k, v in mod.get_params()[0].items():
        onp.testing.assert_allclose(ranks[0][k], v.asnumpy(), rtol=1e-5, atol=1e-6,
                                    err_msg=k)
        assert not onp.allclose(v.asnumpy(), initial[0][k])


def test_a_killed_worker_stops_the_job(tmp_path):
    rc, out, seconds = run_launcher("-n", "2", "--timeout", "30", WORKER, "kill", str(tmp_path))
    assert rc != 0
    assert "rank 1 failed: killed by SIGKILL (9)" in out
    assert seconds < 25  # mpirun stops the other at once; no timeout needed


def test_a_hung_worker_times_out_the_others(tmp_path):
    rc, out, seconds = run_launcher("-n", "2", "--timeout", "2", WORKER, "hang", str(tmp_path))
    assert rc == 1
    assert "rank 0 failed: DistributedTimeoutError" in out
    assert "did not complete within 2 s" in out
    assert seconds < 25  # 2 s of timeout, then mpirun stops the hung worker


def test_an_exception_in_a_worker_is_reported(tmp_path):
    rc, out, seconds = run_launcher("-n", "2", "--timeout", "40", WORKER, "raise",
                                    str(tmp_path))
    assert rc == 1
    assert "rank 1 failed: ValueError: worker 1 found a bad batch" in out
    assert seconds < 30  # rank 0 is stopped by mpirun, not by its 40 s timeout


def test_the_launcher_exits_with_the_workers_status(tmp_path):
    rc, out, _ = run_launcher("-n", "2", WORKER, "exit3", str(tmp_path))
    assert rc == 3, out


def test_sigterm_to_the_launcher_stops_every_worker(tmp_path):
    cmd = [sys.executable, "-m", "ndx.distributed.launch", "-n", "2", WORKER, "sleep",
           str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready{r}").exists() for r in range(2)):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        pids = [int((tmp_path / f"pid{r}").read_text()) for r in range(2)]
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc != 0
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in pids)  # the workers are gone


def alive(pid):
    """Whether a process runs (a zombie waiting to be reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_launcher_module_parses_hosts_with_slots():
    assert launch._hosts("localhost:2,127.0.0.1", 4) == [("localhost", 2), ("127.0.0.1", 2)]
    assert launch._hosts("localhost", 3) == [("localhost", 3)]


# ---- NCCL, for GPU arrays (run where a GPU is; one GPU: a world of one still runs NCCL) ----

NO_GPU = f"no GPU: {ndx.device.gpu_unavailable_reason()}" if ndx.num_gpus() == 0 else ""
NCCL_DTYPES = [d for d in dist_worker.DTYPES if d not in ("int16", "uint16")]


@pytest.mark.skipif(ndx.num_gpus() == 0, reason=NO_GPU or "a GPU is present")
def test_nccl_runs_on_one_gpu():
    dist.init()
    host = [dist_worker.values(d, (3, 4), 0) for d in NCCL_DTYPES]
    arrays = [np.array(h, dtype=d).to_device(ndx.gpu(0)) for h, d in zip(host, NCCL_DTYPES)]
    dist.allreduce(arrays)  # the sum over one worker: the arrays, through NCCL
    for a, h, d in zip(arrays, host, NCCL_DTYPES):
        dist_worker.check(f"nccl {d}", a.to_device(ndx.cpu()), h)
    with pytest.raises(NotImplementedError, match="no NCCL sum"):
        dist.allreduce(np.ones(2, dtype="int16").to_device(ndx.gpu(0)))
    with pytest.raises(ValueError, match="all be on the CPU or all on one GPU"):
        dist.allreduce([np.ones(2), np.ones(2).to_device(ndx.gpu(0))])
    kv = ndx.kv.create("nccl")
    g = np.full(3, 2.0).to_device(ndx.gpu(0))
    kv.pushpull("g", g)
    assert onp.array_equal(g.to_device(ndx.cpu()).asnumpy(), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="reduces GPU arrays"):
        kv.pushpull("c", np.ones(2))


@pytest.mark.skipif(ndx.num_gpus() < 2, reason=NO_GPU or "fewer than 2 GPUs")
def test_nccl_collectives_across_gpu_workers(tmp_path):
    rc, out, _ = run_launcher("-n", "2", WORKER, "nccl", str(tmp_path))
    assert rc == 0, out
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1"]
