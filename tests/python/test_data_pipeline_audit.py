"""gluon.data from a user building input pipelines: datasets, samplers, batchify functions,
the DataLoader with process workers, and vision transforms, each checked against NumPy or
MXNet's documented behaviour worked out by hand."""
import os
import threading
import time

import numpy as onp
import pytest

import ndx
from ndx import np
from ndx.gluon import data as gdata
from ndx.gluon.data.vision import transforms

B = gdata.batchify


# ---- datasets ------------------------------------------------------------------------------

def test_array_dataset_keeps_a_tuple_of_ragged_arrays():
    # MXNet keeps each argument as given; NumPy could not make one array of these
    seqs = (onp.arange(2), onp.arange(5))
    ds = gdata.ArrayDataset(seqs, [7, 8])
    x, y = ds[1]
    assert onp.array_equal(x, onp.arange(5)) and y == 8


@pytest.mark.parametrize("bad", [5, onp.float32(3), onp.array(2.0), np.array(1.0), None])
def test_array_dataset_rejects_unsized_arguments(bad):
    with pytest.raises(TypeError, match=r"\[ArrayDataset\] array 1"):
        gdata.ArrayDataset([1, 2], bad)


def test_shards_cover_every_sample_once_with_mxnets_split():
    # MXNet: shard_len = n // k; the first n % k shards take one more, contiguous
    for n, k in [(10, 3), (2, 4), (7, 7), (0, 2)]:
        ds = gdata.SimpleDataset(list(range(n)))
        parts = [[s[i] for i in range(len(s))] for s in (ds.shard(k, j) for j in range(k))]
        assert sum(parts, []) == list(range(n))
        assert [len(p) for p in parts] == [n // k + (j < n % k) for j in range(k)]


def test_eager_transform_first_and_chained_methods():
    x, y = onp.arange(12.0).reshape(6, 2), onp.arange(6)
    ds = gdata.ArrayDataset(x, y).transform_first(lambda a: a * 2, lazy=False)
    assert isinstance(ds, gdata.SimpleDataset)
    got = ds.filter(lambda s: s[1] % 2 == 0).take(2)
    assert [(list(a), b) for a, b in got] == [([0.0, 2.0], 0), ([8.0, 10.0], 2)]


# ---- samplers ------------------------------------------------------------------------------

def test_rollover_over_three_epochs_of_a_dataloader():
    ds = gdata.ArrayDataset(onp.arange(10))
    loader = gdata.DataLoader(ds, 4, last_batch="rollover")
    epochs = [[b.asnumpy().tolist() for b in loader] for _ in range(3)]
    # 10 samples, batches of 4: 2 carried into epoch 2 (12 -> 3 batches), none into epoch 3
    assert epochs[0] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert epochs[1] == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    # MXNet's len: (carried + n) // batch_size, so 2 carried again give 3 batches next
    assert epochs[2] == epochs[0] and len(loader) == 3


def test_distributed_sampler_parts_cover_the_data():
    parts = [list(gdata.DistributedSampler(10, 3, k, shuffle=False)) for k in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded from the start
    cut = [list(gdata.DistributedSampler(10, 3, k, shuffle=False, drop_last=True))
           for k in range(3)]
    assert sorted(sum(cut, [])) == list(range(9))


# ---- batchify ------------------------------------------------------------------------------

def test_group_checks_its_functions_when_made():
    with pytest.raises(TypeError, match=r"\[Group\] batchify function 1 must be callable"):
        B.Group(B.Stack(), 5)
    with pytest.raises(TypeError, match=r"\[Tuple\] batchify function 0"):
        B.Tuple(["not a function"])
    with pytest.raises(TypeError, match=r"\[Group\] takes"):
        B.Group([B.Stack()], B.Stack())


def test_pad_round_to_ret_length_and_dict():
    samples = [onp.ones((2, 3), "int32"), onp.full((2, 1), 2, "int32")]
    out, lengths = B.Pad(val=-1, axis=1, round_to=4, ret_length=True)(samples)
    want = onp.full((2, 2, 4), -1)
    want[0, :, :3], want[1, :, :1] = 1, 2
    assert onp.array_equal(out.asnumpy(), want) and lengths.asnumpy().tolist() == [3, 1]
    batch = B.Dict({"t": B.Pad(), "n": B.Stack(), "s": B.AsList()})(
        [{"t": [1, 2], "n": 3, "s": "ab"}, {"t": [4], "n": 5, "s": "c"}])
    assert batch["t"].asnumpy().tolist() == [[1, 2], [4, 0]]
    assert batch["n"].asnumpy().tolist() == [3, 5] and batch["s"] == ["ab", "c"]
    appended = B.Append()([onp.arange(2), onp.arange(3)])
    assert [a.shape for a in appended] == [(1, 2), (1, 3)]


# ---- DataLoader with worker processes -------------------------------------------------------

class _TwoArgError(Exception):
    """An exception whose __init__ does not take its args back (pickle rebuilds cls(*args))."""

    def __init__(self, index, why):
        super().__init__(f"sample {index}: {why}")
        self.index = index


def _raise_two_arg(v):
    raise _TwoArgError(v, "bad pixels")


def test_a_worker_error_with_its_own_init_arrives_at_once():
    ds = gdata.SimpleDataset([1, 2, 3]).transform(_raise_two_arg)
    loader = gdata.DataLoader(ds, 2, num_workers=1, timeout=8)
    start = time.monotonic()
    with pytest.raises(_TwoArgError, match="sample 1: bad pixels") as info:
        list(loader)
    assert info.value.index == 1 and time.monotonic() - start < 5
    # the pool still works afterwards
    ok = gdata.DataLoader(gdata.SimpleDataset([1, 2, 3]), 2, num_workers=1, timeout=8)
    assert [b.asnumpy().tolist() for b in ok] == [[1, 2], [3]]


class _LockedError(Exception):
    def __init__(self):
        super().__init__("cannot decode")
        self.lock = threading.Lock()  # (no pickle for locks)


def _raise_locked(v):
    raise _LockedError()


def test_a_worker_error_that_cannot_be_pickled_names_its_class():
    ds = gdata.SimpleDataset([1, 2]).transform(_raise_locked)
    with pytest.raises(RuntimeError, match="a worker raised _LockedError: cannot decode"):
        list(gdata.DataLoader(ds, 2, num_workers=1, timeout=8))


def _pid_and_draw(v):
    time.sleep(0.05)  # (so that both workers get samples)
    return onp.array([os.getpid(), float(np.random.uniform())])


def _first_draw_per_worker():
    ds = gdata.SimpleDataset(list(range(8))).transform(_pid_and_draw)
    loader = gdata.DataLoader(ds, 1, num_workers=2, prefetch=8, timeout=20)
    first = {}
    for batch in loader:
        pid, draw = batch.asnumpy()[0]
        first.setdefault(pid, draw)
    return sorted(first.values())


def test_process_workers_draw_their_own_random_numbers():
    # forked workers inherited one generator state: worker 2's k-th draw was worker 1's
    ndx.random.seed(42)
    draws = _first_draw_per_worker()
    assert len(draws) == 2 and draws[0] != draws[1]
    ndx.random.seed(42)  # and the seed still repeats them
    assert _first_draw_per_worker() == draws


def test_nested_samples_with_workers_match_the_main_process():
    samples = [({"img": onp.full((2,), i, "float32")}, (i, [i * 0.5, 1.0])) for i in range(5)]
    ds = gdata.SimpleDataset(samples)
    want = list(gdata.DataLoader(ds, 2))
    got = list(gdata.DataLoader(ds, 2, num_workers=2, timeout=20))
    for w, g in zip(want, got):
        assert onp.array_equal(w[0]["img"].asnumpy(), g[0]["img"].asnumpy())
        assert onp.array_equal(w[1][0].asnumpy(), g[1][0].asnumpy())
        assert [a.asnumpy().tolist() for a in g[1][1]] == \
            [a.asnumpy().tolist() for a in w[1][1]]
    assert got[2][1][1][0].asnumpy().tolist() == [2.0]


# ---- vision transforms -----------------------------------------------------------------------

def _image(h=5, w=7):
    return onp.random.RandomState(0).randint(0, 256, (h, w, 3)).astype("uint8")


def test_random_resized_crop_takes_a_number_as_scale():
    # MXNet's random_size_crop: a number `area` is (area, 1.0); with area 1 and the image's
    # own aspect ratio the crop is the whole image, resized
    img = np.array(_image())
    crop = transforms.RandomResizedCrop((4, 3), scale=1.0, ratio=(7 / 5, 7 / 5))
    want = transforms.Resize((4, 3))(img)
    assert onp.array_equal(crop(img).asnumpy(), want.asnumpy())
    with pytest.raises(TypeError, match=r"\[RandomResizedCrop\] scale must be a pair"):
        transforms.RandomResizedCrop(4, scale="big")
    with pytest.raises(TypeError, match=r"\[RandomResizedCrop\] ratio must be a pair"):
        transforms.RandomResizedCrop(4, ratio=0.5)


@pytest.mark.parametrize("cls", [transforms.RandomBrightness, transforms.RandomContrast,
                                 transforms.RandomSaturation, transforms.RandomHue])
def test_colour_jitter_amounts_must_be_numbers(cls):
    with pytest.raises(TypeError, match=rf"\[{cls.__name__}\] the amount must be a number"):
        cls("0.5")
    assert cls(onp.float64(0.0))(np.array(_image())).shape == (5, 7, 3)


def test_hybridized_pipeline_on_a_batch_matches_numpy():
    imgs = onp.stack([_image(), _image()[::-1]])
    mean, std = (0.4, 0.5, 0.6), (0.2, 0.25, 0.3)
    pipe = transforms.HybridCompose([transforms.ToTensor(), transforms.Normalize(mean, std)])
    pipe.hybridize()
    got = pipe(np.array(imgs)).asnumpy()
    m = onp.array(mean, "float32")[:, None, None]
    s = onp.array(std, "float32")[:, None, None]
    want = (imgs.transpose(0, 3, 1, 2).astype("float32") / 255 - m) / s
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_crops_with_a_label_match_numpy_slices():
    img = _image()
    x, label = transforms.Compose([transforms.CenterCrop((3, 2)),
                                   transforms.RandomFlipLeftRight(1.0)])(np.array(img), 4)
    assert label == 4 and onp.array_equal(x.asnumpy(), img[1:3, 2:5][:, ::-1])
    box = transforms.CropResize(1, 2, 3, 2)(np.array(img))
    assert onp.array_equal(box.asnumpy(), img[2:4, 1:4])
