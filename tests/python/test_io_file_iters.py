"""mx.io's file iterators against NumPy references: ImageRecordIter over PNG images written
with Pillow into .rec / .idx files (crops as NumPy slices, MXNet's normalization written out
in NumPy, labels, layout, round_batch padding, shuffling, sharding, mirroring), CSVIter over
files written with numpy.savetxt and MXNet's documented round_batch example, and the typed
errors of both."""
import io
import logging
import random

import numpy as onp
import pytest
from PIL import Image

import ndx as mx
from ndx import recordio

N, H, W = 7, 10, 12          # images in the test files, each H x W
SHAPE = (3, 8, 8)            # data_shape: a centred crop starts at row 1, column 2
Y0, X0 = (H - SHAPE[1]) // 2, (W - SHAPE[2]) // 2
ID0 = 100                    # header id of image i is ID0 + i (the idx keys are i)


def _png(pixels):
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("recs")
    rng = onp.random.RandomState(7)
    rgb = [rng.randint(0, 256, (H, W, 3)).astype(onp.uint8) for _ in range(N)]
    gray = [rng.randint(0, 256, (H, W)).astype(onp.uint8) for _ in range(N)]
    out = {"rgb_px": rgb, "gray_px": gray}
    for name, images, label in (
            ("rgb", rgb, lambda i: float(i)),
            ("gray", gray, lambda i: float(i)),
            ("multi", rgb, lambda i: [float(i), 10.0 * i])):
        rec = recordio.MXIndexedRecordIO(str(root / f"{name}.idx"), str(root / f"{name}.rec"),
                                         "w")
        for i, px in enumerate(images):
            rec.write_idx(i, recordio.pack(recordio.IRHeader(0, label(i), ID0 + i, 0),
                                           _png(px)))
        rec.close()
        out[name] = (str(root / f"{name}.rec"), str(root / f"{name}.idx"))
    # the same images through ndx's pack_img (OpenCV's BGR layout), no index file
    plain = recordio.MXRecordIO(str(root / "bgr.rec"), "w")
    for i, px in enumerate(rgb):
        plain.write(recordio.pack_img(recordio.IRHeader(0, float(i), ID0 + i, 0),
                                      px[:, :, ::-1], img_fmt=".png"))
    plain.close()
    out["bgr"] = str(root / "bgr.rec")
    # an image list giving each record (by header id) two labels
    lst = root / "labels.lst"
    lst.write_text("".join(f"{ID0 + i}\t{i + 0.5}\t{-i}\timg{i}.png\n" for i in range(N)))
    out["lst"] = str(lst)
    out["root"] = root
    return out


def _crop(px):
    """The centred SHAPE crop of an (H, W, 3) image, as (3, h, w) float32."""
    return px[Y0:Y0 + SHAPE[1], X0:X0 + SHAPE[2]].transpose(2, 0, 1).astype(onp.float32)


def _labels(batch):
    return batch.label[0].asnumpy().tolist()


def _epoch(it):
    return [(_labels(b), b.pad) for b in it]


# ---------------------------------------------------------------------------- ImageRecordIter

def test_normalizes_as_mxnet_rgb_chw(files):
    rec, idx = files["rgb"]
    mean, std, scale = (120.0, 110.5, 100.0), (60.0, 50.0, 40.0), 0.5
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                               mean_r=mean[0], mean_g=mean[1], mean_b=mean[2],
                               std_r=std[0], std_g=std[1], std_b=std[2], scale=scale)
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (N,) + SHAPE
    assert it.provide_label[0].name == "softmax_label"
    assert it.provide_label[0].shape == (N,) and it.batch_size == N
    batch = it.next()
    data = batch.data[0].asnumpy()
    assert data.dtype == onp.float32 and data.shape == (N,) + SHAPE
    m, s = onp.array(mean).reshape(3, 1, 1), onp.array(std).reshape(3, 1, 1)
    want = onp.stack([(_crop(px) - m) / s * scale for px in files["rgb_px"]])
    onp.testing.assert_allclose(data, want, rtol=1e-6, atol=1e-5)
    assert _labels(batch) == list(range(N)) and batch.pad == 0
    assert batch.index.tolist() == [ID0 + i for i in range(N)]
    assert it.getpad() == 0 and it.getdata().shape == (N,) + SHAPE
    with pytest.raises(StopIteration):
        it.next()


def test_pack_img_records_decode_to_rgb(files):
    # pack_img stores OpenCV's BGR; the iterator gives RGB as MXNet's
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=files["bgr"], data_shape=SHAPE, batch_size=N)
    data = it.next().data[0].asnumpy()
    assert data.dtype == onp.uint8
    onp.testing.assert_array_equal(data, onp.stack([_crop(px) for px in files["rgb_px"]]))


def test_round_batch_pads_by_wrapping_as_mxnet(files):
    rec, idx = files["rgb"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=SHAPE,
                               batch_size=3)
    first = list(it)
    assert [(_labels(b), b.pad) for b in first] == [
        ([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 0, 1], 2)]
    # the padding rows are the first images again
    onp.testing.assert_array_equal(first[2].data[0].asnumpy()[1:],
                                   first[0].data[0].asnumpy()[:2])
    with pytest.raises(StopIteration):  # nothing more until reset()
        it.next()
    # MXNet: the reset after a wrapped batch does not rewind; the next epoch carries on
    it.reset()
    assert _epoch(it) == [([2, 3, 4], 0), ([5, 6, 0], 1)]
    it.reset()
    assert _epoch(it) == [([1, 2, 3], 0), ([4, 5, 6], 0)]
    it.reset()  # that epoch ended without wrapping: back to the start
    assert _epoch(it)[0] == ([0, 1, 2], 0)


def test_round_batch_false_returns_the_short_batch_with_pad(files):
    rec, _ = files["rgb"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=3,
                               round_batch=False)
    for _ in range(2):  # the same each epoch
        batches = list(it)
        # the rows after the last image keep the previous batch's (MXNet's reused buffer)
        assert [(_labels(b), b.pad) for b in batches] == [
            ([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 4, 5], 2)]
        onp.testing.assert_array_equal(batches[2].data[0].asnumpy()[0],
                                       _crop(files["rgb_px"][6]))
        it.reset()
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=7,
                               round_batch=False)
    assert _epoch(it) == [(list(range(7)), 0)]


@pytest.mark.parametrize("indexed", [True, False])
def test_shuffle_with_seed_is_a_reproducible_permutation(files, indexed):
    rec, idx = files["rgb"]
    kwargs = dict(path_imgrec=rec, data_shape=SHAPE, batch_size=N, shuffle=True, seed=3)
    if indexed:
        kwargs["path_imgidx"] = idx
    state = random.getstate()
    it = mx.io.ImageRecordIter(**kwargs)
    orders = []
    for _ in range(3):
        batch = it.next()
        order = [int(v) for v in _labels(batch)]
        assert sorted(order) == list(range(N))
        # each image sits with its own label
        data = batch.data[0].asnumpy()
        for row, label in zip(data, order):
            onp.testing.assert_array_equal(row, _crop(files["rgb_px"][label]))
        orders.append(order)
        it.reset()
    assert any(o != list(range(N)) for o in orders)
    assert len({tuple(o) for o in orders}) > 1  # reshuffled at each pass
    again = mx.io.ImageRecordIter(**kwargs)
    assert [int(v) for v in _labels(again.next())] == orders[0]
    assert random.getstate() == state  # Python's global random state is left alone


@pytest.mark.parametrize("indexed", [True, False])
def test_parts_are_disjoint_and_cover_the_records(files, indexed):
    rec, idx = files["rgb"]
    seen = []
    for part in range(3):
        kwargs = dict(path_imgrec=rec, data_shape=SHAPE, batch_size=2, num_parts=3,
                      part_index=part, round_batch=False)
        if indexed:
            kwargs["path_imgidx"] = idx
        labels = []
        for b in mx.io.ImageRecordIter(**kwargs):
            labels += _labels(b)[:2 - b.pad]
        seen.append([int(v) for v in labels])
    assert seen == [[0, 1, 2], [3, 4, 5], [6]]  # ceil(7 / 3) = 3 records a part


def test_rand_mirror_flips_some_images_and_mirror_flips_all(files):
    rec, idx = files["rgb"]
    kinds = []
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=SHAPE,
                               batch_size=N, rand_mirror=True, seed=1)
    runs = []
    for _ in range(2):
        data = it.next().data[0].asnumpy()
        runs.append(data)
        for row, px in zip(data, files["rgb_px"]):
            plain = _crop(px)
            if (row == plain).all():
                kinds.append("plain")
            else:
                onp.testing.assert_array_equal(row, plain[:, :, ::-1])
                kinds.append("flipped")
        it.reset()
    assert set(kinds) == {"plain", "flipped"}
    again = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=SHAPE,
                                  batch_size=N, rand_mirror=True, seed=1)
    onp.testing.assert_array_equal(again.next().data[0].asnumpy(), runs[0])
    data = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                                 mirror=True).next().data[0].asnumpy()
    onp.testing.assert_array_equal(data, onp.stack([_crop(px)[:, :, ::-1]
                                                    for px in files["rgb_px"]]))


def test_seed_aug_ties_the_augmentation_to_the_record(files):
    rec, idx = files["rgb"]

    def flips(**kwargs):
        it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=SHAPE,
                                   batch_size=N, rand_mirror=True, seed_aug=11, **kwargs)
        batch = it.next()
        out = {}
        for row, label in zip(batch.data[0].asnumpy(), _labels(batch)):
            out[int(label)] = not (row == _crop(files["rgb_px"][int(label)])).all()
        return out

    plain = flips()
    assert set(plain.values()) == {True, False}
    assert flips(shuffle=True, seed=9) == plain  # the same draws whatever the order


def test_rand_crop_takes_windows_of_the_image(files):
    rec, _ = files["rgb"]
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 6, 6), batch_size=N,
                                    rand_crop=True, seed=5)
    data = it.next().data[0].asnumpy()
    offsets = set()
    for row, px in zip(data, files["rgb_px"]):
        hits = [(y, x) for y in range(H - 5) for x in range(W - 5)
                if (px[y:y + 6, x:x + 6].transpose(2, 0, 1) == row).all()]
        assert hits, "not a 6x6 window of its image"
        offsets.add(hits[0])
    assert len(offsets) > 1


def test_resize_shorter_side_nearest(files):
    rec, _ = files["rgb"]
    # the shorter side 10 -> 8, the longer 12 -> 12 * 8 // 10 = 9; then the centred 8x8 crop
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=SHAPE, batch_size=1,
                                    resize=8, inter_method=0)
    rows = onp.floor(onp.arange(8) * H / 8).astype(int)
    cols = onp.floor(onp.arange(9) * W / 9).astype(int)
    px = files["rgb_px"][0]
    want = px[rows][:, cols][:, 0:8].transpose(2, 0, 1)
    onp.testing.assert_array_equal(it.next().data[0].asnumpy()[0], want)


def test_pad_fills_the_border(files):
    rec, _ = files["rgb"]
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 14, 16), batch_size=1,
                                    pad=2, fill_value=9)
    want = onp.pad(files["rgb_px"][0], ((2, 2), (2, 2), (0, 0)), constant_values=9)
    onp.testing.assert_array_equal(it.next().data[0].asnumpy()[0], want.transpose(2, 0, 1))


def test_gray_images_one_channel(files):
    rec, _ = files["gray"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(1, 8, 8), batch_size=N,
                               mean_r=100.0, std_r=2.0)
    data = it.next().data[0].asnumpy()
    want = onp.stack([(g[Y0:Y0 + 8, X0:X0 + 8][None].astype(onp.float32) - 100.0) / 2.0
                      for g in files["gray_px"]])
    onp.testing.assert_allclose(data, want, rtol=1e-6)


def test_multi_labels_and_image_list_labels(files):
    rec, idx = files["multi"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=4,
                               label_width=2)
    assert it.provide_label[0].shape == (4, 2)
    batch = it.next()
    assert batch.label[0].shape == (4, 2)
    assert _labels(batch) == [[i, 10 * i] for i in range(4)]
    with pytest.raises(ValueError, match=r"ImageRecordIter.*2 label\(s\), label_width is 1"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=4).next()
    # a list file's labels, found by the record's header id, replace the record's
    rec, _ = files["rgb"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imglist=files["lst"], data_shape=SHAPE,
                               batch_size=N, label_width=2)
    assert _labels(it.next()) == [[i + 0.5, -i] for i in range(N)]


def test_uint8_and_int8_outputs(files, caplog):
    rec, _ = files["rgb"]
    with caplog.at_level(logging.WARNING):
        it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                                   dtype="uint8", mean_r=50.0)
    assert "mean_r" in caplog.text  # ignored for uint8, as MXNet does, and said so
    assert it.provide_data[0].dtype == onp.uint8
    raw = onp.stack([_crop(px) for px in files["rgb_px"]])
    onp.testing.assert_array_equal(it.next().data[0].asnumpy(), raw)
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N, dtype="int8",
                               mean_r=100.4, mean_g=127.5, mean_b=0.0)
    data = it.next().data[0].asnumpy()
    assert data.dtype == onp.int8
    rounded = onp.array([100.0, 128.0, 0.0]).reshape(1, 3, 1, 1)  # rounded half away
    onp.testing.assert_array_equal(data, onp.clip(raw - rounded, -128, 127))
    data8 = mx.io.ImageRecordInt8Iter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                                      mean_r=100.4, mean_g=127.5).next().data[0].asnumpy()
    onp.testing.assert_array_equal(data8, data)


def test_mean_img_is_computed_saved_and_loaded(files, tmp_path):
    rec, _ = files["rgb"]
    path = tmp_path / "mean.nd"
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                               mean_img=str(path), scale=2.0)
    crops = onp.stack([_crop(px) for px in files["rgb_px"]])
    mean = crops.astype(onp.float64).mean(axis=0)
    saved = mx.nd.load(str(path))
    onp.testing.assert_allclose(saved["mean_img"].asnumpy(), mean, rtol=1e-6)
    onp.testing.assert_allclose(it.next().data[0].asnumpy(), (crops - mean) * 2.0,
                                rtol=1e-5, atol=1e-4)
    # an existing file is loaded, not recomputed
    mx.nd.save(str(path), {"mean_img": mx.nd.array(onp.full(SHAPE, 7.0, onp.float32))})
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                               mean_img=str(path))
    onp.testing.assert_allclose(it.next().data[0].asnumpy(), crops - 7.0)
    mx.nd.save(str(path), {"mean_img": mx.nd.array(onp.zeros((3, 4, 4), onp.float32))})
    with pytest.raises(ValueError, match=r"mean_img .* has shape \(3, 4, 4\), data_shape"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                              mean_img=str(path))


def test_brightness_scales_each_image_by_one_factor(files):
    rec, _ = files["rgb"]
    np_state = onp.random.get_state()[1].copy()
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                               brightness=0.4, seed=2)
    data = it.next().data[0].asnumpy()
    alphas = []
    for row, px in zip(data, files["rgb_px"]):
        plain = _crop(px)
        # row = clip(rint(plain * alpha), 0, 255) for one alpha: the unclipped pixels bound it
        free = (row < 255) & (plain > 0)
        lo = ((row[free] - 0.5) / plain[free]).max()
        hi = ((row[free] + 0.5) / plain[free]).min()
        assert lo <= hi + 1e-6 and 0.6 - 1e-3 <= lo and hi <= 1.4 + 1e-3
        assert (plain[row == 255] * hi >= 254.5 - 1e-3).all()
        assert (row[plain == 0] == 0).all() and (row == onp.rint(row)).all()
        alphas.append((lo + hi) / 2)
    assert max(alphas) - min(alphas) > 0.05
    assert (onp.random.get_state()[1] == np_state).all()


def test_contrast_and_illumination_ranges(files):
    rec, _ = files["rgb"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=N,
                               max_random_contrast=0.5, max_random_illumination=20.0,
                               mean_r=128.0, mean_g=128.0, mean_b=128.0, seed=4)
    data = it.next().data[0].asnumpy()
    for row, px in zip(data, files["rgb_px"]):
        centred = (_crop(px) - 128.0).ravel()
        # row = centred * c + i, with c in [0.5, 1.5] and i in [-20, 20]
        c, i = onp.polyfit(centred, row.ravel(), 1)
        assert 0.5 - 1e-4 <= c <= 1.5 + 1e-4 and -20 - 1e-3 <= i <= 20 + 1e-3
        onp.testing.assert_allclose(row.ravel(), centred * c + i, atol=1e-3)


def test_color_augmenters_and_random_resized_crop_give_the_shape(files):
    rec, idx = files["rgb"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 5, 7),
                               batch_size=4, random_resized_crop=True, min_random_area=0.3,
                               max_aspect_ratio=0.25, contrast=0.3, saturation=0.3,
                               pca_noise=0.1, rand_mirror=True, shuffle=True,
                               preprocess_threads=8, prefetch_buffer=2, verbose=False)
    batches = list(it)
    assert [b.data[0].shape for b in batches] == [(4, 3, 5, 7)] * 2
    data = onp.concatenate([b.data[0].asnumpy() for b in batches])
    assert data.min() >= 0 and data.max() <= 255 and (data == onp.rint(data)).all()


def test_is_a_data_iter(files):
    rec, _ = files["rgb"]
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=4,
                               data_name="img", label_name="cls")
    assert isinstance(it, mx.io.DataIter)
    assert [d.name for d in it.provide_data + it.provide_label] == ["img", "cls"]
    assert it.iter_next() and it.getlabel().asnumpy().tolist() == [0, 1, 2, 3]
    assert isinstance(it.getdata(), mx.nd.NDArray) and it.getindex().dtype == onp.uint64
    prefetched = mx.io.PrefetchingIter(
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=SHAPE, batch_size=4))
    assert [(_labels(b), b.pad) for b in prefetched] == [([0, 1, 2, 3], 0), ([4, 5, 6, 0], 1)]
    prefetched.close()


def test_image_record_iter_errors(files, tmp_path):
    rec, idx = files["rgb"]
    make = mx.io.ImageRecordIter
    with pytest.raises(FileNotFoundError, match=r"\[ImageRecordIter\] path_imgrec: no file"):
        make(path_imgrec=str(tmp_path / "none.rec"), data_shape=SHAPE, batch_size=2)
    with pytest.raises(FileNotFoundError, match=r"path_imgidx: no file"):
        make(path_imgrec=rec, path_imgidx=str(tmp_path / "none.idx"), data_shape=SHAPE,
             batch_size=2)
    with pytest.raises(ValueError, match=r"data_shape must be \(channels, height, width\)"):
        make(path_imgrec=rec, data_shape=(2, 8, 8), batch_size=2)
    with pytest.raises(ValueError, match=r"batch_size must be an int >= 1, got 0"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=0)
    with pytest.raises(TypeError, match=r"batch_size must be an int, got float"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2.0)
    with pytest.raises(ValueError, match=r"part_index must be in \[0, num_parts=2\), got 2"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, num_parts=2, part_index=2)
    with pytest.raises(ValueError, match=r"dtype must be one of .*got 'float64'"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, dtype="float64")
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['colour'\]"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, colour=1)
    with pytest.raises(NotImplementedError, match=r"max_rotate_angle=10, random_h=5"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, max_rotate_angle=10,
             random_h=5)
    make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, max_rotate_angle=0, random_h=0)
    with pytest.raises(NotImplementedError, match=r"max_aspect_ratio"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, max_aspect_ratio=0.2)
    with pytest.raises(ValueError, match=r"std_g must not be 0"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, std_g=0)
    with pytest.raises(ValueError, match=r"inter_method must be"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, inter_method=5)
    with pytest.raises(ValueError, match=r"need RGB images"):
        make(path_imgrec=rec, data_shape=(1, 8, 8), batch_size=2, brightness=0.1)
    with pytest.raises(TypeError, match=r"shuffle must be a bool, got str"):
        make(path_imgrec=rec, data_shape=SHAPE, batch_size=2, shuffle="yes")
    with pytest.raises(ValueError, match=r"gives uint8 data; dtype must be 'uint8'"):
        mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=SHAPE, batch_size=2,
                                   dtype="float32")
    too_big = make(path_imgrec=rec, data_shape=(3, 11, 8), batch_size=2)
    with pytest.raises(ValueError, match=r"record 0: the image is 10x12 .* smaller than "
                                         r"data_shape's 11x8"):
        too_big.next()
    broken = tmp_path / "broken.rec"
    writer = recordio.MXRecordIO(str(broken), "w")
    writer.write(recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), b"not an image"))
    writer.close()
    with pytest.raises(RuntimeError, match=r"record 0: cannot decode its image"):
        make(path_imgrec=str(broken), data_shape=SHAPE, batch_size=1).next()


LIBSVM_DATA = "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n"
LIBSVM_ROWS = onp.array([[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2], [0, 0, -1.2]], onp.float32)


def test_libsvm_iter_mxnets_documented_example(tmp_path):
    # MXNet's LibSVMIter example: four rows, batch_size 3, round_batch wraps to the start
    path = tmp_path / "data.t"
    path.write_text(LIBSVM_DATA)
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=3)
    assert it.provide_data[0].shape == (3, 3) and it.provide_label[0].shape == (3,)
    first = it.next()
    assert first.data[0].stype == "csr" and first.data[0].shape == (3, 3)
    onp.testing.assert_array_equal(first.data[0].asnumpy(), LIBSVM_ROWS[:3])
    onp.testing.assert_array_equal(first.label[0].asnumpy(), [1.0, -2.0, -3.0])
    second = it.next()
    assert second.pad == 2
    onp.testing.assert_array_equal(second.data[0].asnumpy(), LIBSVM_ROWS[[3, 0, 1]])
    onp.testing.assert_array_equal(second.label[0].asnumpy(), [4.0, 1.0, -2.0])
    with pytest.raises(StopIteration):
        it.next()
    it.reset()  # after the wrapped batch: carries on after the padding
    onp.testing.assert_array_equal(it.next().data[0].asnumpy(), LIBSVM_ROWS[[2, 3, 0]])


def test_libsvm_iter_without_round_batch_pads_with_empty_rows(tmp_path):
    path = tmp_path / "data.t"
    path.write_text(LIBSVM_DATA)
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=3,
                          round_batch=False)
    it.next()
    second = it.next()
    assert second.pad == 2  # one row left: the other two slots are empty, not the last batch's
    want = onp.zeros((3, 3), onp.float32)
    want[0] = LIBSVM_ROWS[3]
    onp.testing.assert_array_equal(second.data[0].asnumpy(), want)
    onp.testing.assert_array_equal(second.label[0].asnumpy(), [4.0, 0.0, 0.0])


def test_libsvm_iter_with_a_label_file_and_parts(tmp_path):
    data = tmp_path / "data.t"
    data.write_text(LIBSVM_DATA)
    labels = tmp_path / "label.t"
    labels.write_text("1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n")
    it = mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), label_libsvm=str(labels),
                          label_shape=(3,), batch_size=4)
    batch = it.next()
    assert batch.label[0].stype == "csr"
    onp.testing.assert_array_equal(batch.label[0].asnumpy(), onp.array(
        [[0, 0, 0], [0.125, 0, 0], [0, 0, 1.2], [0, 1.0, -1.2]], onp.float32))
    onp.testing.assert_array_equal(batch.data[0].asnumpy(), LIBSVM_ROWS)
    parts = [mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=2,
                              num_parts=2, part_index=k).next().data[0].asnumpy()
             for k in range(2)]
    onp.testing.assert_array_equal(onp.concatenate(parts), LIBSVM_ROWS)
    # the batches feed the sparse dot
    w = mx.nd.array([[1.0], [2.0], [3.0]])
    onp.testing.assert_allclose(mx.nd.dot(batch.data[0], w).asnumpy(), LIBSVM_ROWS @ w.asnumpy(),
                                rtol=1e-6)


@pytest.mark.parametrize("text,message", [
    ("1 0:1 3:2\n", r"column index 3 is out of range for 3 columns"),
    ("1 2:1 1:2\n", r"ascending"),
    ("1 0-1\n", r"label index:value"),
    ("x 0:1\n", r"label index:value"),
])
def test_libsvm_iter_rejects_malformed_lines(tmp_path, text, message):
    path = tmp_path / "bad.t"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=1).next()


def test_libsvm_iter_argument_errors(tmp_path):
    path = tmp_path / "data.t"
    path.write_text(LIBSVM_DATA)
    with pytest.raises(ValueError, match="one dimension"):
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3, 1), batch_size=1)
    with pytest.raises(ValueError, match="part_index"):
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), num_parts=2, part_index=2)
    with pytest.raises(FileNotFoundError):
        mx.io.LibSVMIter(data_libsvm=str(tmp_path / "none.t"), data_shape=(3,))
    with pytest.raises(TypeError, match="unexpected keyword"):
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), shuffle=True)


# ------------------------------------------------------------------------------------ CSVIter

def _write(path, text):
    path.write_text(text)
    return str(path)


def test_csv_mxnets_documented_example(tmp_path):
    csv = _write(tmp_path / "data.csv", "1,2,3\n2,3,4\n3,4,5\n4,5,6\n")
    rows = onp.array([[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]], onp.float32)
    it = mx.io.CSVIter(data_csv=csv, data_shape=(3,), batch_size=2)
    onp.testing.assert_array_equal(onp.concatenate([b.data[0].asnumpy() for b in it]), rows)
    # round_batch=True: the second batch wraps; after reset() the third pass carries on
    it = mx.io.CSVIter(data_csv=csv, data_shape=(3,), batch_size=3)
    batches = list(it)
    onp.testing.assert_array_equal(batches[0].data[0].asnumpy(), rows[[0, 1, 2]])
    onp.testing.assert_array_equal(batches[1].data[0].asnumpy(), rows[[3, 0, 1]])
    assert [b.pad for b in batches] == [0, 2]
    assert batches[1].index.tolist() == [3, 0, 1]
    it.reset()
    batches = list(it)
    assert len(batches) == 1 and batches[0].pad == 1
    onp.testing.assert_array_equal(batches[0].data[0].asnumpy(), rows[[2, 3, 0]])
    # round_batch=False: the same two batches in every pass, the last with pad 2 and the
    # previous batch's rows after the fourth row
    it = mx.io.CSVIter(data_csv=csv, data_shape=(3,), batch_size=3, round_batch=False)
    for _ in range(2):
        batches = list(it)
        onp.testing.assert_array_equal(batches[1].data[0].asnumpy(), rows[[3, 1, 2]])
        assert [b.pad for b in batches] == [0, 2]
        it.reset()


def test_csv_shapes_labels_and_dtypes(tmp_path):
    rng = onp.random.RandomState(0)
    data = rng.uniform(-5, 5, (10, 6)).astype(onp.float32)
    labels = rng.randint(0, 4, (10, 2)).astype(onp.float32)
    onp.savetxt(tmp_path / "x.csv", data, delimiter=",")
    onp.savetxt(tmp_path / "y.csv", labels, delimiter=",")
    it = mx.io.CSVIter(data_csv=str(tmp_path / "x.csv"), data_shape=(2, 3),
                       label_csv=str(tmp_path / "y.csv"), label_shape=(2,), batch_size=5)
    assert it.provide_data[0].shape == (5, 2, 3) and it.provide_label[0].shape == (5, 2)
    batches = list(it)
    assert len(batches) == 2 and [b.pad for b in batches] == [0, 0]
    onp.testing.assert_array_equal(
        onp.concatenate([b.data[0].asnumpy() for b in batches]), data.reshape(10, 2, 3))
    onp.testing.assert_array_equal(
        onp.concatenate([b.label[0].asnumpy() for b in batches]), labels)
    # no label file: zeros of shape (batch_size,), float32, as MXNet
    it = mx.io.CSVIter(data_csv=str(tmp_path / "x.csv"), data_shape=(6,), batch_size=4,
                       data_name="x", label_name="y")
    assert [d.name for d in it.provide_data + it.provide_label] == ["x", "y"]
    assert it.provide_label[0].shape == (4,)
    batch = it.next()
    assert batch.label[0].dtype == onp.float32
    onp.testing.assert_array_equal(batch.label[0].asnumpy(), onp.zeros(4))
    # integer data
    ints = rng.randint(-1000, 1000, (4, 3))
    onp.savetxt(tmp_path / "i.csv", ints, delimiter=",", fmt="%d")
    for dtype in ("int32", "int64"):
        it = mx.io.CSVIter(data_csv=str(tmp_path / "i.csv"), data_shape=(3,), batch_size=4,
                           dtype=dtype)
        out = it.next().data[0].asnumpy()
        assert out.dtype == onp.dtype(dtype)
        onp.testing.assert_array_equal(out, ints)


def test_csv_folder_is_read_in_name_order(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    onp.savetxt(folder / "b.csv", onp.array([[3.0, 4.0]]), delimiter=",")
    onp.savetxt(folder / "a.csv", onp.array([[1.0, 2.0]]), delimiter=",")
    it = mx.io.CSVIter(data_csv=str(folder), data_shape=(2,), batch_size=2)
    onp.testing.assert_array_equal(it.next().data[0].asnumpy(), [[1, 2], [3, 4]])


def test_csv_works_under_prefetching(tmp_path):
    onp.savetxt(tmp_path / "x.csv", onp.arange(10.0).reshape(5, 2), delimiter=",")
    it = mx.io.PrefetchingIter(mx.io.CSVIter(data_csv=str(tmp_path / "x.csv"),
                                             data_shape=(2,), batch_size=2))
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    onp.testing.assert_array_equal(batches[2].data[0].asnumpy(), [[8, 9], [0, 1]])
    it.close()


def test_csv_errors(tmp_path):
    good = _write(tmp_path / "good.csv", "1,2,3\n4,5,6\n")
    with pytest.raises(FileNotFoundError, match=r"\[CSVIter\] data_csv: no file or folder"):
        mx.io.CSVIter(data_csv=str(tmp_path / "none.csv"), data_shape=(3,))
    with pytest.raises(FileNotFoundError, match=r"\[CSVIter\] label_csv: no file or folder"):
        mx.io.CSVIter(data_csv=good, data_shape=(3,), label_csv=str(tmp_path / "none.csv"))
    bad = _write(tmp_path / "bad.csv", "1,2,3\n4,5\n")
    it = mx.io.CSVIter(data_csv=bad, data_shape=(3,), batch_size=2)
    with pytest.raises(ValueError, match=r"bad.csv:2: a row of data_csv has 2 values, its "
                                         r"shape \(3,\) needs 3"):
        it.next()
    text = _write(tmp_path / "text.csv", "1,x,3\n")
    with pytest.raises(ValueError, match=r"text.csv:1: data_csv must hold comma-separated "
                                         r"numbers"):
        mx.io.CSVIter(data_csv=text, data_shape=(3,)).next()
    with pytest.raises(ValueError, match=r"'1.5' is not an integer"):
        mx.io.CSVIter(data_csv=_write(tmp_path / "f.csv", "1.5,2,3\n"), data_shape=(3,),
                      dtype="int32").next()
    short = _write(tmp_path / "short.csv", "1\n")
    with pytest.raises(ValueError, match=r"label_csv has fewer rows than data_csv: no label "
                                         r"for data row 2"):
        mx.io.CSVIter(data_csv=good, data_shape=(3,), label_csv=short, batch_size=2).next()
    with pytest.raises(ValueError, match=r"data_shape must be a non-empty tuple of positive"):
        mx.io.CSVIter(data_csv=good, data_shape=(0,))
    with pytest.raises(ValueError, match=r"dtype must be one of .*got 'float16'"):
        mx.io.CSVIter(data_csv=good, data_shape=(3,), dtype="float16")
    with pytest.raises(TypeError, match=r"\[CSVIter\] unexpected keyword argument\(s\) "
                                        r"\['shuffle'\]"):
        mx.io.CSVIter(data_csv=good, data_shape=(3,), shuffle=True)
    mx.io.CSVIter(data_csv=good, data_shape=(3,), prefetch_buffer=4)  # accepted, ignored


# ---- MNISTIter ----------------------------------------------------------------------------


def _write_idx(path, array, magic):
    import gzip
    import struct
    header = struct.pack(f">{1 + array.ndim}I", magic, *array.shape)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(header + array.astype(onp.uint8).tobytes())
    return str(path)


def _mnist_files(tmp_path, count=10, rows=4, cols=3, gz=False):
    rng = onp.random.default_rng(3)
    images = rng.integers(0, 256, size=(count, rows, cols), dtype=onp.uint8)
    labels = rng.integers(0, 10, size=(count,), dtype=onp.uint8)
    suffix = ".gz" if gz else ""
    return (_write_idx(tmp_path / f"img{suffix}", images, 2051),
            _write_idx(tmp_path / f"lab{suffix}", labels, 2049), images, labels)


def test_mnist_iter_reads_idx_files_as_mxnet_does(tmp_path):
    img, lab, images, labels = _mnist_files(tmp_path)
    it = mx.io.MNISTIter(image=img, label=lab, batch_size=4, shuffle=False, silent=True)
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (4, 1, 4, 3)
    assert it.provide_label[0].name == "softmax_label" and it.provide_label[0].shape == (4,)
    batches = list(it)
    assert len(batches) == 2  # 10 images: two full batches, the last two dropped
    for k, b in enumerate(batches):
        want = images[4 * k:4 * k + 4, None].astype(onp.float32) / 256  # MXNet's scaling
        onp.testing.assert_array_equal(b.data[0].asnumpy(), want)
        onp.testing.assert_array_equal(b.label[0].asnumpy(), labels[4 * k:4 * k + 4])
        assert b.pad == 0 and b.data[0].dtype == onp.float32
    it.reset()
    assert len(list(it)) == 2
    flat = mx.io.MNISTIter(image=img, label=lab, batch_size=5, shuffle=False, flat=True,
                           silent=True)
    first = next(flat)
    assert first.data[0].shape == (5, 12)
    onp.testing.assert_array_equal(first.data[0].asnumpy(),
                                   images[:5].reshape(5, 12).astype(onp.float32) / 256)


def test_mnist_iter_shuffles_once_and_splits_into_parts(tmp_path):
    img, lab, images, labels = _mnist_files(tmp_path, count=12, gz=True)
    it = mx.io.MNISTIter(image=img, label=lab, batch_size=12, seed=5, silent=True)
    b = next(it)
    got = (b.data[0].asnumpy()[:, 0] * 256).round().astype(onp.uint8)
    order = [int(onp.flatnonzero((images == g).all(axis=(1, 2)))[0]) for g in got]
    assert sorted(order) == list(range(12)) and order != list(range(12))
    onp.testing.assert_array_equal(b.label[0].asnumpy(), labels[order])  # pairs kept
    it.reset()
    onp.testing.assert_array_equal(next(it).label[0].asnumpy(), labels[order])  # once only
    # num_parts / part_index: contiguous slices, count / num_parts * index (truncated)
    part = mx.io.MNISTIter(image=img, label=lab, batch_size=4, shuffle=False, num_parts=3,
                           part_index=1, silent=True)
    onp.testing.assert_array_equal(next(part).label[0].asnumpy(), labels[4:8])


def test_mnist_iter_bad_input(tmp_path):
    img, lab, _, _ = _mnist_files(tmp_path)
    with pytest.raises(FileNotFoundError, match="image"):
        mx.io.MNISTIter(image=str(tmp_path / "none"), label=lab)
    with pytest.raises(ValueError, match="magic number 2049"):
        mx.io.MNISTIter(image=lab, label=lab)
    with pytest.raises(ValueError, match="part_index"):
        mx.io.MNISTIter(image=img, label=lab, num_parts=2, part_index=2)
    # other keyword arguments are ignored, as MXNet's parser ignores them (its own test
    # passes data_shape)
    it = mx.io.MNISTIter(image=img, label=lab, data_shape=(12,), batch_size=2, silent=True)
    assert next(it).data[0].shape == (2, 1, 4, 3)
    short = _write_idx(tmp_path / "short", onp.zeros(3, onp.uint8), 2049)
    with pytest.raises(ValueError, match="10 images but 3 labels"):
        mx.io.MNISTIter(image=img, label=short, silent=True)
