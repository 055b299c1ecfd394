"""Decoding image files (ndx.image through Pillow), recordio's pack_img / unpack_img and the
file-based vision data sets, against the pixel arrays the files were made from (PNG is
lossless, so the pixels must come back exactly; JPEG within its loss)."""
import io
import os

import numpy as onp
import pytest

import ndx as mx
from ndx import gluon

PIL = pytest.importorskip("PIL.Image")  # a test requirement (requirements-dev.txt)


def _pixels(seed, shape=(5, 7, 3)):
    return onp.random.default_rng(seed).integers(0, 256, size=shape, dtype=onp.uint8)


def _encode(arr, fmt="PNG", **kwargs):
    out = io.BytesIO()
    PIL.fromarray(arr).save(out, format=fmt, **kwargs)
    return out.getvalue()


def test_imdecode_gives_the_pixels_back():
    rgb = _pixels(0)
    img = mx.image.imdecode(_encode(rgb))
    assert img.shape == (5, 7, 3) and img.dtype == onp.uint8
    onp.testing.assert_array_equal(img.asnumpy(), rgb)
    onp.testing.assert_array_equal(mx.image.imdecode(_encode(rgb), to_rgb=False).asnumpy(),
                                   rgb[:, :, ::-1])
    gray = _pixels(1, (4, 6))
    got = mx.image.imdecode(bytearray(_encode(gray)), flag=0)
    assert got.shape == (4, 6, 1)
    onp.testing.assert_array_equal(got.asnumpy()[:, :, 0], gray)
    # a gray file read in color repeats the level in the three channels
    onp.testing.assert_array_equal(mx.image.imdecode(_encode(gray)).asnumpy(),
                                   onp.repeat(gray[:, :, None], 3, axis=2))
    smooth = onp.tile(onp.linspace(0, 255, 32, dtype=onp.uint8), (24, 1))
    smooth = onp.stack([smooth, smooth.T[:24, :24].repeat(2, axis=1)[:, :32], smooth], -1)
    jpeg = mx.image.imdecode(_encode(smooth, "JPEG", quality=95)).asnumpy()
    assert onp.abs(jpeg.astype(int) - smooth).mean() < 3  # lossy, but close


def test_imread_imresize_and_bad_input(tmp_path):
    path = tmp_path / "x.png"
    rgb = _pixels(2, (8, 10, 3))
    path.write_bytes(_encode(rgb))
    img = mx.image.imread(str(path))
    onp.testing.assert_array_equal(img.asnumpy(), rgb)
    small = mx.image.imresize(img, 5, 4, interp=0)  # nearest: every other pixel
    onp.testing.assert_array_equal(small.asnumpy(), rgb[::2, ::2])
    with pytest.raises(FileNotFoundError):
        mx.image.imread(str(tmp_path / "missing.png"))
    with pytest.raises(ValueError, match="cannot decode"):
        mx.image.imdecode(b"not an image")
    with pytest.raises(TypeError, match="bytes"):
        mx.image.imdecode("x.png")
    with pytest.raises(ValueError, match="flag"):
        mx.image.imdecode(_encode(rgb), flag=2)


def test_pack_img_and_unpack_img_use_opencvs_bgr_layout():
    bgr = _pixels(3)
    header = mx.recordio.IRHeader(0, 4.0, 11, 0)
    h, img = mx.recordio.unpack_img(mx.recordio.pack_img(header, bgr, img_fmt=".png"))
    assert h.label == 4.0 and h.id == 11
    onp.testing.assert_array_equal(img, bgr)
    gray = _pixels(4, (3, 5))
    onp.testing.assert_array_equal(
        mx.recordio.unpack_img(mx.recordio.pack_img(header, gray, img_fmt=".png"))[1], gray)
    _, jpg = mx.recordio.unpack_img(mx.recordio.pack_img(header, bgr, quality=100))
    assert jpg.shape == bgr.shape
    with pytest.raises(ValueError, match="img_fmt"):
        mx.recordio.pack_img(header, bgr, img_fmt=".gif")


def _tree(root):
    """root/cat/{a,b}.png, root/dog/c.png plus a stray file and a non-image."""
    images = {}
    for folder, names in (("cat", ("b.png", "a.png")), ("dog", ("c.png",))):
        os.makedirs(root / folder)
        for i, name in enumerate(names):
            arr = _pixels(10 * len(images) + i)
            (root / folder / name).write_bytes(_encode(arr))
            images[f"{folder}/{name}"] = arr
    (root / "dog" / "notes.txt").write_text("x")
    (root / "README").write_text("x")
    return images


def test_image_folder_dataset(tmp_path):
    images = _tree(tmp_path)
    with pytest.warns(UserWarning):
        ds = gluon.data.vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 3
    assert [(os.path.relpath(p, tmp_path), label) for p, label in ds.items] == \
        [("cat/a.png", 0), ("cat/b.png", 0), ("dog/c.png", 1)]
    img, label = ds[2]
    onp.testing.assert_array_equal(img.asnumpy(), images["dog/c.png"])
    assert label == 1
    totensor = gluon.data.vision.transforms.ToTensor()
    loader = gluon.data.DataLoader(ds.transform_first(totensor), batch_size=3)
    data, labels = next(iter(loader))
    assert data.shape == (3, 3, 5, 7)
    onp.testing.assert_allclose(data.asnumpy()[0], images["cat/a.png"].transpose(2, 0, 1) / 255,
                                rtol=1e-6)
    onp.testing.assert_array_equal(labels.asnumpy(), [0, 0, 1])


def test_image_list_and_record_datasets(tmp_path):
    images = _tree(tmp_path)
    (tmp_path / "train.lst").write_text("0\t1\tdog/c.png\n1\t0\tcat/b.png\n")
    listed = gluon.data.vision.ImageListDataset(str(tmp_path), "train.lst")
    img, label = listed[1]
    assert label == 0.0
    onp.testing.assert_array_equal(img.asnumpy(), images["cat/b.png"])
    rec, idx = str(tmp_path / "data.rec"), str(tmp_path / "data.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, key in enumerate(sorted(images)):
        bgr = images[key][:, :, ::-1]  # pack_img takes OpenCV's BGR, as MXNet's im2rec
        writer.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i), i, 0), bgr,
                                                 img_fmt=".png"))
    writer.close()
    ds = gluon.data.vision.ImageRecordDataset(rec)
    assert len(ds) == 3
    for i, key in enumerate(sorted(images)):
        img, label = ds[i]
        assert label == float(i)
        onp.testing.assert_array_equal(img.asnumpy(), images[key])  # RGB again
    raw = gluon.data.RecordFileDataset(rec)
    assert mx.recordio.unpack(raw[0])[0].id == 0
    with pytest.raises(FileNotFoundError):
        gluon.data.vision.ImageRecordDataset(str(tmp_path / "none.rec"))
