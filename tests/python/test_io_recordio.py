"""mx.io's iterators against MXNet's documented examples and a hand count of the batches,
mx.recordio against the RecordIO layout written out by hand (and the magic split), and
mx.runtime's feature list against this build."""
import pickle
import struct

import numpy as onp
import pytest

import ndx as mx
from ndx import np

DATA = onp.arange(40).reshape((10, 2, 2))
LABELS = onp.arange(10).reshape(10, 1).astype(onp.float32)


def _rows(batch):
    """The first element of each example in the batch (its index * 4)."""
    return [int(v) // 4 for v in batch.data[0].asnumpy()[:, 0, 0]]


def test_ndarray_iter_pad_discard_and_mxnets_roll_over_example():
    it = mx.io.NDArrayIter(DATA, LABELS, 3, last_batch_handle="pad")
    batches = list(it)
    assert [_rows(b) for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 0, 1]]
    assert [b.pad for b in batches] == [0, 0, 0, 2]
    onp.testing.assert_array_equal(batches[3].label[0].asnumpy().ravel(), [9, 0, 1])
    it = mx.io.NDArrayIter(DATA, LABELS, 3, last_batch_handle="discard")
    assert [_rows(b) for b in it] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    # MXNet's docstring: with roll_over, 3 batches, and after reset() the first batch is the
    # left-over example (36..39) followed by the first two (0..3, 4..7).
    it = mx.io.NDArrayIter(DATA, LABELS, 3, False, last_batch_handle="roll_over")
    assert sum(1 for _ in it) == 3
    it.reset()
    first = it.next()
    onp.testing.assert_array_equal(first.data[0].asnumpy(), DATA[[9, 0, 1]])
    onp.testing.assert_array_equal(first.label[0].asnumpy().ravel(), [9, 0, 1])
    assert [_rows(b) for b in it] == [[2, 3, 4], [5, 6, 7]]  # 8 and 9 roll over next time
    it.hard_reset()
    assert _rows(it.next()) == [0, 1, 2]


def test_ndarray_iter_descriptions_names_and_shuffle():
    it = mx.io.NDArrayIter({"b": DATA, "a": DATA * 2}, {"y": LABELS}, batch_size=4)
    assert [d.name for d in it.provide_data] == ["a", "b"]  # sorted by name, as MXNet's
    assert it.provide_data[0].shape == (4, 2, 2) and it.provide_label[0].shape == (4, 1)
    assert repr(it.provide_label[0]).startswith("DataDesc[y,(4, 1),")
    batch = it.next()
    onp.testing.assert_array_equal(batch.data[0].asnumpy(), DATA[:4] * 2)
    names = [d.name for d in mx.io.NDArrayIter([DATA, DATA], batch_size=2).provide_data]
    assert names == ["_0_data", "_1_data"]
    assert isinstance(batch.data[0], np.ndarray)
    onp.random.seed(3)
    it = mx.io.NDArrayIter(DATA, LABELS, batch_size=5, shuffle=True)
    first = [_rows(b) for b in it]
    it.reset()  # shuffles again
    second = [_rows(b) for b in it]
    assert sorted(sum(first, [])) == sorted(sum(second, [])) == list(range(10))
    assert first != second and sum(first, []) != list(range(10))


def test_ndarray_iter_keeps_data_and_labels_aligned_when_shuffled():
    onp.random.seed(0)
    it = mx.io.NDArrayIter(DATA, LABELS, batch_size=2, shuffle=True)
    for b in it:
        onp.testing.assert_array_equal(b.data[0].asnumpy()[:, 0, 0] // 4,
                                       b.label[0].asnumpy().ravel())


@pytest.mark.parametrize("kwargs, exc", [
    ({"batch_size": 0}, ValueError),
    ({"last_batch_handle": "wrap"}, ValueError),
    ({"label": onp.ones((9, 1))}, ValueError),
    ({"label": "labels"}, TypeError),
])
def test_ndarray_iter_rejects(kwargs, exc):
    with pytest.raises(exc, match="NDArrayIter"):
        mx.io.NDArrayIter(DATA, **kwargs)


def test_resize_and_prefetching_iterators():
    base = mx.io.NDArrayIter(onp.ones((100, 10)), batch_size=25)
    resized = mx.io.ResizeIter(base, 6)  # runs past the 4 batches: the inner one restarts
    assert sum(1 for _ in resized) == 6
    it1 = mx.io.NDArrayIter({"data": onp.ones((100, 10))}, batch_size=25)
    it2 = mx.io.NDArrayIter({"data": onp.zeros((100, 10))}, batch_size=25)
    pre = mx.io.PrefetchingIter([it1, it2], rename_data=[{"data": "data_1"},
                                                         {"data": "data_2"}])
    assert [d.name for d in pre.provide_data] == ["data_1", "data_2"]
    batches = list(pre)
    assert len(batches) == 4 and len(batches[0].data) == 2
    assert float(batches[0].data[0].sum()) == 250 and float(batches[0].data[1].sum()) == 0
    pre.reset()
    assert len(list(pre)) == 4
    pre.close()


def test_recordio_layout_written_by_hand(tmp_path):
    path = tmp_path / "a.rec"
    with mx.recordio.MXRecordIO(path, "w") as w:
        w.write(b"abcde")
        w.write(b"")
    raw = path.read_bytes()
    magic = struct.pack("<I", 0xCED7230A)
    assert raw == magic + struct.pack("<I", 5) + b"abcde\0\0\0" + magic + struct.pack("<I", 0)
    r = mx.recordio.MXRecordIO(path, "r")
    assert [r.read(), r.read(), r.read()] == [b"abcde", b"", None]
    r.reset()
    assert r.read() == b"abcde"


def test_recordio_splits_a_payload_at_the_magic(tmp_path):
    magic = struct.pack("<I", 0xCED7230A)
    payload = b"12345678" + magic + b"xy" + magic + b"z"  # magic at offsets 8 and 14
    path = tmp_path / "m.rec"
    with mx.recordio.MXRecordIO(path, "w") as w:
        w.write(payload)
        w.write(b"next")
    raw = path.read_bytes()
    # Only the 4-aligned magic (offset 8) splits: part 1 (flag 1) "12345678", part 2 (flag 3)
    # the rest, whose magic at offset 14 is not aligned and stays in the data.
    rest = b"xy" + magic + b"z"
    want = (magic + struct.pack("<I", (1 << 29) | 8) + b"12345678" +
            magic + struct.pack("<I", (3 << 29) | len(rest)) + rest + b"\0" * (-len(rest) % 4))
    assert raw.startswith(want)
    with mx.recordio.MXRecordIO(path, "r") as r:
        assert r.read() == payload and r.read() == b"next" and r.read() is None


def test_indexed_recordio_and_image_record_headers(tmp_path):
    idx, rec = tmp_path / "d.idx", tmp_path / "d.rec"
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(5):
        header = mx.recordio.IRHeader(0, float(i), i, 0)
        w.write_idx(i, mx.recordio.pack(header, b"img%d" % i))
    w.write_idx(9, mx.recordio.pack(mx.recordio.IRHeader(0, [1.5, 2.5, 3.5], 9, 7), b"multi"))
    w.close()
    r = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    assert r.keys == [0, 1, 2, 3, 4, 9]
    header, payload = mx.recordio.unpack(r.read_idx(3))
    assert payload == b"img3" and header.label == 3.0 and header.id == 3 and header.flag == 0
    header, payload = mx.recordio.unpack(r.read_idx(9))
    assert payload == b"multi" and header.flag == 3 and (header.id, header.id2) == (9, 7)
    onp.testing.assert_array_equal(header.label, [1.5, 2.5, 3.5])
    # the header layout: uint32 flag, float32 label, uint64 id, uint64 id2, little-endian
    packed = mx.recordio.pack(mx.recordio.IRHeader(0, 2.0, 5, 6), b"")
    assert packed == struct.pack("<IfQQ", 0, 2.0, 5, 6)
    clone = pickle.loads(pickle.dumps(r))
    assert mx.recordio.unpack(clone.read_idx(1))[1] == b"img1"
    with pytest.raises(KeyError):
        r.read_idx(42)
    with pytest.raises(ValueError, match="header bytes"):
        mx.recordio.unpack_img(b"")


def test_recordio_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.rec"
    bad.write_bytes(b"not a recordio file")
    with pytest.raises(ValueError, match="magic"):
        mx.recordio.MXRecordIO(bad, "r").read()
    good = tmp_path / "cut.rec"
    with mx.recordio.MXRecordIO(good, "w") as w:
        w.write(b"x" * 100)
    good.write_bytes(good.read_bytes()[:50])
    with pytest.raises(ValueError, match="truncated"):
        mx.recordio.MXRecordIO(good, "r").read()
    with pytest.raises(ValueError, match="flag"):
        mx.recordio.MXRecordIO(good, "a")
    with pytest.raises(ValueError, match="open for reading"):
        mx.recordio.MXRecordIO(good, "r").write(b"x")


def test_runtime_features_describe_this_build():
    features = mx.runtime.Features()
    assert features is mx.runtime.Features()
    config = mx.__config__.CONFIG["build"]
    assert features.is_enabled("ONEDNN") == ("(on)" in config["oneDNN"])
    assert features.is_enabled("cuda") == config["CUDA"].startswith("built")
    assert features.is_enabled("CPU_AVX512F") == (config["SIMD target running"] == "AVX3")
    assert not features.is_enabled("TENSORRT") and features.is_enabled("INT64_TENSOR_SIZE")
    with pytest.raises(RuntimeError, match="unknown"):
        features.is_enabled("WARP_DRIVE")
    assert {f.name for f in mx.runtime.feature_list()} == set(features)
