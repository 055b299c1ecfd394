"""gluon.data against MXNet's documented behaviour, written out by hand: datasets and their
transforms, samplers, batchify functions, and the DataLoader with worker processes and
threads (the same batches as without workers)."""
import time

import numpy as onp
import pytest

import ndx
from ndx import gluon, np
from ndx.gluon import data as gdata


def _xy(n=10):
    x = onp.arange(n * 3, dtype="float32").reshape(n, 3)
    return x, onp.arange(n) % 3


def test_datasets_and_their_methods():
    x, y = _xy()
    ds = gdata.ArrayDataset(x, y)
    assert isinstance(ds, gdata.Dataset) and len(ds) == 10
    assert onp.array_equal(ds[2][0], x[2]) and ds[2][1] == y[2]
    simple = gdata.SimpleDataset([5, 6, 7])
    assert len(simple) == 3 and simple[1] == 6
    assert [simple.transform(lambda v: v * 10)[i] for i in range(3)] == [50, 60, 70]
    eager = simple.transform(lambda v: v + 1, lazy=False)
    assert [eager[i] for i in range(3)] == [6, 7, 8]
    first = ds.transform_first(lambda v: v.sum())
    assert first[1] == (x[1].sum(), y[1])
    both = ds.transform(lambda a, b: (a.max(), b + 100))
    assert both[4] == (x[4].max(), y[4] + 100)
    odd = gdata.SimpleDataset(list(range(7))).filter(lambda v: v % 2)
    assert [odd[i] for i in range(len(odd))] == [1, 3, 5]
    # shard: 10 samples in 3 parts are 4, 3, 3 long, contiguous, covering everything
    parts = [gdata.SimpleDataset(list(range(10))).shard(3, i) for i in range(3)]
    assert [[p[i] for i in range(len(p))] for p in parts] == [[0, 1, 2, 3], [4, 5, 6],
                                                               [7, 8, 9]]
    taken = gdata.SimpleDataset(list(range(5))).take(2)
    assert [taken[i] for i in range(len(taken))] == [0, 1]
    picked = gdata.SimpleDataset(list("abcdef")).sample(gdata.IntervalSampler(6, 2))
    assert "".join(picked[i] for i in range(len(picked))) == "acebdf"


def test_dataset_errors():
    with pytest.raises(ValueError, match="index must be < num_shards"):
        gdata.SimpleDataset([1, 2]).shard(2, 2)
    with pytest.raises(TypeError, match="num_shards must be an int"):
        gdata.SimpleDataset([1, 2]).shard(1.5, 0)
    with pytest.raises(TypeError, match="must be a gluon.data.Sampler"):
        gdata.SimpleDataset([1, 2]).sample([0, 1])
    with pytest.raises(NotImplementedError, match="__len__"):
        len(gdata.Dataset())


def test_samplers():
    assert list(gdata.SequentialSampler(4, start=2)) == [2, 3, 4, 5]
    ndx.random.seed(3)
    first = list(gdata.RandomSampler(8))
    ndx.random.seed(3)
    assert list(gdata.RandomSampler(8)) == first and sorted(first) == list(range(8))
    assert list(gdata.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    no_roll = gdata.IntervalSampler(7, 3, rollover=False)
    assert list(no_roll) == [0, 3, 6] and len(no_roll) == 3
    assert list(gdata.FilterSampler(lambda v: v > 1, [0, 5, 1, 7])) == [1, 3]
    keep = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "keep")
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6]] and len(keep) == 3
    assert list(gdata.BatchSampler(gdata.SequentialSampler(7), 3, "discard")) == \
        [[0, 1, 2], [3, 4, 5]]
    roll = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "rollover")
    assert list(roll) == [[0, 1, 2], [3, 4, 5]]
    assert len(roll) == 2  # the carried [6] and 7 more make 8: two batches
    assert list(roll) == [[6, 0, 1], [2, 3, 4]]
    with pytest.raises(ValueError, match="last_batch"):
        gdata.BatchSampler(gdata.SequentialSampler(3), 2, "drop")
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        gdata.BatchSampler(gdata.SequentialSampler(3), 0)
    with pytest.raises(ValueError, match="interval 9 is larger"):
        gdata.IntervalSampler(3, 9)


def test_batchify_functions():
    b = gdata.batchify
    stacked = b.Stack()([onp.ones(2), onp.zeros(2)])
    assert isinstance(stacked, np.ndarray) and stacked.asnumpy().tolist() == [[1, 1], [0, 0]]
    padded, lengths = b.Pad(val=-1, ret_length=True)([onp.array([1, 2, 3]), onp.array([4])])
    assert padded.asnumpy().tolist() == [[1, 2, 3], [4, -1, -1]]
    assert lengths.asnumpy().tolist() == [3, 1]
    rows = b.Pad(axis=1)([onp.ones((2, 1)), onp.ones((2, 3))])
    assert rows.shape == (2, 2, 3) and rows.asnumpy()[0, :, 1:].tolist() == [[0, 0], [0, 0]]
    grouped = b.Group(b.Pad(), b.Stack())([(onp.array([1]), 5), (onp.array([2, 3]), 6)])
    assert grouped[0].asnumpy().tolist() == [[1, 0], [2, 3]]
    assert grouped[1].asnumpy().tolist() == [5, 6]
    with pytest.raises(ValueError, match="only axis 0 may differ"):
        b.Pad(axis=0)([onp.ones((2, 2)), onp.ones((2, 3))])
    # (without axis, MXNet's Pad pads every axis to the largest size)
    assert b.Pad()([onp.ones((2, 2)), onp.ones((1, 3))]).shape == (2, 2, 3)
    with pytest.raises(ValueError, match="2 elements but 1"):
        b.Group(b.Stack())([(1, 2)])


def _batches(loader):
    out = []
    for batch in loader:
        parts = batch if isinstance(batch, tuple) else (batch,)
        out.append(tuple(p.asnumpy() for p in parts))
    return out


@pytest.mark.parametrize("workers, thread_pool", [(2, False), (2, True), (1, False)])
def test_workers_give_the_batches_of_the_main_process(workers, thread_pool):
    x, y = _xy(23)
    ds = gdata.ArrayDataset(x, y).transform_first(lambda v: v * 2)  # a lambda: fork, no pickle
    want = _batches(gdata.DataLoader(ds, 4, last_batch="keep"))
    loader = gdata.DataLoader(ds, 4, last_batch="keep", num_workers=workers,
                              thread_pool=thread_pool, prefetch=3)
    got = _batches(loader)
    assert len(got) == len(want) == len(loader) == 6
    for g, w in zip(got, want):
        assert all(onp.array_equal(a, b) for a, b in zip(g, w))
    assert onp.array_equal(got[0][0], x[:4] * 2)
    assert _batches(loader)[-1][0].shape == (3, 3)  # a second epoch works too


def test_shuffled_workers_follow_the_seed():
    x, y = _xy(12)
    ds = gdata.ArrayDataset(x, y)
    ndx.random.seed(11)
    want = _batches(gdata.DataLoader(ds, 5, shuffle=True))
    ndx.random.seed(11)
    got = _batches(gdata.DataLoader(ds, 5, shuffle=True, num_workers=2))
    assert all(onp.array_equal(a, b) for g, w in zip(got, want) for a, b in zip(g, w))


def test_custom_batchify_and_batch_sampler_with_workers():
    ds = gdata.SimpleDataset([onp.arange(n) for n in (1, 3, 2, 4)])
    loader = gdata.DataLoader(ds, batch_sampler=[[0, 1], [2, 3]],
                              batchify_fn=gdata.batchify.Pad(val=9), num_workers=2)
    got = [b.asnumpy().tolist() for b in loader]
    assert got == [[[0, 9, 9], [0, 1, 2]], [[0, 1, 9, 9], [0, 1, 2, 3]]]


def _boom(v):
    raise KeyError(f"bad sample {v}")


def test_a_worker_error_reaches_the_caller():
    ds = gdata.SimpleDataset([1, 2, 3]).transform(_boom)
    with pytest.raises(KeyError, match="bad sample 1"):
        list(gdata.DataLoader(ds, 2, num_workers=2))


def test_a_slow_worker_times_out():
    ds = gdata.SimpleDataset([1.0, 2.0]).transform(lambda v: time.sleep(5) or v)
    loader = gdata.DataLoader(ds, 2, num_workers=1, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="more than timeout=0.5 s"):
        list(loader)
    assert time.monotonic() - start < 4
    del loader


# A DataLoader left in a reference cycle (here by the traceback of its worker's error) whose
# collection runs in its pool's own handler thread: the pool's shutdown used to wait there for
# that very thread, forever, and no gc.collect() in the process collected anything after. The
# collections are steered into the handler thread by disabling them while the cycle forms and
# then leaving the main thread asleep with every allocation triggering one; before the fix
# 3 runs in 4 stuck.
_COLLECTED_IN_A_POOL_THREAD = """
import gc, multiprocessing, time, weakref
from ndx.gluon import data as gdata

def boom(v):
    raise KeyError(v)

loader = gdata.DataLoader(gdata.SimpleDataset([1, 2, 3]).transform(boom), 2, num_workers=2)
try:
    list(loader)
except KeyError as e:
    err = e
gc.disable()
del loader, err
gc.set_threshold(1, 1, 1)
gc.enable()
time.sleep(1.0)

class Node:
    pass

node = Node()
node.me = node
ref = weakref.ref(node)
del node
for _ in range(50):
    gc.collect()
    if ref() is None and not multiprocessing.active_children():
        break
    time.sleep(0.05)
print("cycle collected:", ref() is None, "workers left:", len(multiprocessing.active_children()))
"""


@pytest.mark.parametrize("run", range(2))
def test_a_dataloader_collected_in_its_pools_thread_leaves_the_collector_working(run):
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _COLLECTED_IN_A_POOL_THREAD],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "cycle collected: True workers left: 0", done.stdout


def test_dataloader_argument_errors():
    ds = gdata.SimpleDataset([1, 2, 3])
    with pytest.raises(ValueError, match="batch_size must be given"):
        gdata.DataLoader(ds)
    with pytest.raises(ValueError, match="shuffle must be False"):
        gdata.DataLoader(ds, 2, shuffle=True, sampler=gdata.SequentialSampler(3))
    with pytest.raises(ValueError, match="must not be given with batch_sampler"):
        gdata.DataLoader(ds, 2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="num_workers must be >= 0"):
        gdata.DataLoader(ds, 2, num_workers=-1)
    with pytest.raises(ValueError, match="timeout"):
        gdata.DataLoader(ds, 2, timeout=0)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        gdata.DataLoader(ds, 0)


def test_training_with_workers_matches_training_without():
    x, y = _xy(32)
    x = (x / x.max()).astype("float32")

    def train(workers):
        ndx.random.seed(5)
        net = gluon.nn.Dense(3, in_units=3)
        net.initialize(ndx.initializer.Xavier())
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        losses = []
        loader = gdata.DataLoader(gdata.ArrayDataset(x, y), 8, shuffle=True,
                                  num_workers=workers)
        for _ in range(2):
            for data, label in loader:
                with ndx.autograd.record():
                    loss = loss_fn(net(data), label)
                loss.backward()
                trainer.step(8)
                losses.append(float(loss.mean()))
        return losses

    assert train(0) == train(2)


def test_workers_are_other_processes():
    import os
    ds = gdata.SimpleDataset(list(range(8))).transform(lambda v: os.getpid())
    pids = {p for batch in gdata.DataLoader(ds, 2, num_workers=2, batchify_fn=list)
            for p in batch}
    assert pids and os.getpid() not in pids
    threads = {p for batch in gdata.DataLoader(ds, 2, num_workers=2, thread_pool=True,
                                                batchify_fn=list) for p in batch}
    assert threads == {os.getpid()}


@pytest.mark.skipif(ndx.num_gpus() > 0, reason="checks the machine without a GPU; "
                    "test_gpu.py checks pinning on one")
def test_pinning_without_a_gpu():
    # PyTorch's DataLoader also leaves batches unpinned without an accelerator
    data = gdata.ArrayDataset(onp.arange(8, dtype=onp.float32).reshape(4, 2))
    batches = list(gdata.DataLoader(data, batch_size=2, pin_memory=True))
    assert [b.is_pinned() for b in batches] == [False, False]
    onp.testing.assert_array_equal(batches[1].asnumpy(), [[4, 5], [6, 7]])
    expected = NotImplementedError if "without CUDA" in ndx.device.gpu_unavailable_reason() \
        else ValueError
    with pytest.raises(expected, match="pin_memory"):
        np.ones(3).pin_memory()
