"""mx.image's augmenters, CreateAugmenter and ImageIter against NumPy references: MXNet's
documented formulas written out here, random draws reproduced from seeded Python / NumPy
random states, crops as NumPy slices, and ImageIter's batches against PNG images written with
Pillow into .rec / .idx / .lst files."""
import json
import math
import random

import numpy as onp
import pytest

import ndx as mx
from ndx import np, recordio

PIL = pytest.importorskip("PIL.Image")
image = mx.image
LUMA = onp.array([0.299, 0.587, 0.114])


def _rgb(seed, shape=(40, 60, 3)):
    return onp.random.default_rng(seed).integers(0, 256, size=shape, dtype=onp.uint8)


def _float(seed, shape=(12, 16, 3)):
    return onp.random.default_rng(seed).uniform(0, 255, size=shape).astype(onp.float32)


def _nearest_ref(x, w, h):
    """OpenCV's INTER_NEAREST: output pixel i takes source floor(i * n / m)."""
    rows = onp.minimum(onp.floor(onp.arange(h) * x.shape[0] / h).astype(int), x.shape[0] - 1)
    cols = onp.minimum(onp.floor(onp.arange(w) * x.shape[1] / w).astype(int), x.shape[1] - 1)
    return x[rows][:, cols]


# --------------------------------------------------------------------------- the base class

def test_dumps_is_mxnets_json():
    assert json.loads(image.ResizeAug(30, 1).dumps()) == ["resizeaug", {"size": 30,
                                                                        "interp": 1}]
    assert json.loads(image.CenterCropAug((20, 10)).dumps()) == [
        "centercropaug", {"size": [20, 10], "interp": 2}]
    assert json.loads(image.CastAug().dumps()) == ["castaug", {"type": "float32"}]
    light = json.loads(image.LightingAug(0.1, onp.array([1.0, 2.0, 3.0]),
                                         onp.eye(3)).dumps())
    assert light == ["lightingaug", {"alphastd": 0.1, "eigval": [1.0, 2.0, 3.0],
                                     "eigvec": onp.eye(3).tolist()}]
    norm = json.loads(image.ColorNormalizeAug(np.array([1.0, 2.0, 3.0]), None).dumps())
    assert norm == ["colornormalizeaug", {"mean": [1.0, 2.0, 3.0], "std": None}]
    # the composite augmenters give a list of their members' strings, as MXNet's
    seq = image.SequentialAug([image.HorizontalFlipAug(0.5), image.CastAug()])
    assert seq.dumps() == ["sequentialaug", [image.HorizontalFlipAug(0.5).dumps(),
                                             image.CastAug().dumps()]]
    jitter = image.ColorJitterAug(0.1, 0, 0.2)
    assert jitter.dumps()[0] == "colorjitteraug"
    assert [json.loads(s)[0] for s in jitter.dumps()[1]] == ["brightnessjitteraug",
                                                              "saturationjitteraug"]
    with pytest.raises(NotImplementedError, match="Augmenter"):
        image.Augmenter()(np.zeros((2, 2, 3)))


def test_sequential_and_random_order():
    def add_one(x):
        return x + 1

    def double(x):
        return x * 2

    src = np.array(onp.full((2, 2, 3), 3.0, onp.float32))
    seq = image.SequentialAug([add_one, double])
    assert float(seq(src).asnumpy()[0, 0, 0]) == 8.0  # (3 + 1) * 2
    orders = set()
    for seed in range(12):
        aug = image.RandomOrderAug([add_one, double])
        random.seed(seed)
        got = float(aug(src).asnumpy()[0, 0, 0])
        random.seed(seed)
        order = [add_one, double]
        random.shuffle(order)
        want = 3.0
        for f in order:
            want = f(want)
        assert got == want
        orders.add(got)
    assert orders == {8.0, 7.0}  # both orders happen


# ------------------------------------------------------------------------- resize and crop

def test_resize_augs():
    img = _float(0, (40, 60, 3))
    short = image.ResizeAug(20, interp=3)(np.array(img))
    assert short.shape == (20, 30, 3)
    block_mean = img.reshape(20, 2, 30, 2, 3).mean(axis=(1, 3))  # area: exact 2 x 2 means
    onp.testing.assert_allclose(short.asnumpy(), block_mean, rtol=1e-5)
    tall = image.ResizeAug(10, interp=0)(np.array(img.transpose(1, 0, 2)))
    assert tall.shape == (15, 10, 3)  # 60 x 40 (H x W): the width becomes 10
    onp.testing.assert_array_equal(tall.asnumpy(), img.transpose(1, 0, 2)[::4, ::4])
    forced = image.ForceResizeAug((15, 8), interp=0)(np.array(img))
    assert forced.shape == (8, 15, 3)
    onp.testing.assert_array_equal(forced.asnumpy(), _nearest_ref(img, 15, 8))
    # interp 9 shrinks with area (3), as MXNet's rule picks it
    auto = image.ForceResizeAug((30, 20), interp=9)(np.array(img))
    onp.testing.assert_allclose(auto.asnumpy(), block_mean, rtol=1e-5)


def test_center_and_random_crop_augs():
    img = _rgb(1)
    center = image.CenterCropAug((20, 10))(np.array(img))
    onp.testing.assert_array_equal(center.asnumpy(), img[15:25, 20:40])
    places = set()
    for seed in range(8):
        random.seed(seed)
        got = image.RandomCropAug((25, 15))(np.array(img)).asnumpy()
        random.seed(seed)
        x0, y0 = random.randint(0, 60 - 25), random.randint(0, 40 - 15)
        onp.testing.assert_array_equal(got, img[y0:y0 + 15, x0:x0 + 25])
        places.add((x0, y0))
    assert len(places) > 1
    # a crop larger than the image: the largest crop of that shape (60 x 20), grown
    random.seed(11)
    big = image.RandomCropAug((120, 40), interp=0)(np.array(img))
    random.seed(11)
    x0, y0 = random.randint(0, 0), random.randint(0, 20)
    assert big.shape == (40, 120, 3)
    onp.testing.assert_array_equal(big.asnumpy(), _nearest_ref(img[y0:y0 + 20], 120, 40))


def _random_size_crop_ref(h, w, area, ratio):
    """MXNet's random sized crop: (x0, y0, w, h), or None for the center-crop fallback."""
    lo, hi = (area, 1.0) if isinstance(area, float) else area
    for _ in range(10):
        target = random.uniform(lo, hi) * h * w
        aspect = math.exp(random.uniform(math.log(ratio[0]), math.log(ratio[1])))
        nw = int(round(math.sqrt(target * aspect)))
        nh = int(round(math.sqrt(target / aspect)))
        if 0 < nw <= w and 0 < nh <= h:
            return random.randint(0, w - nw), random.randint(0, h - nh), nw, nh
    return None


@pytest.mark.parametrize("area", [0.08, (0.3, 0.6)])
def test_random_size_crop(area):
    img = _rgb(2)
    sizes = set()
    for seed in range(10):
        random.seed(seed)
        out, rect = image.random_size_crop(np.array(img), (16, 12), area, (0.75, 4 / 3),
                                           interp=0)
        random.seed(seed)
        x0, y0, w, h = _random_size_crop_ref(40, 60, area, (0.75, 4 / 3))
        assert rect == (x0, y0, w, h)
        lo, hi = (area, 1.0) if isinstance(area, float) else area
        assert lo * 2400 * 0.8 <= w * h <= hi * 2400 * 1.2
        assert out.shape == (12, 16, 3)
        onp.testing.assert_array_equal(out.asnumpy(),
                                       _nearest_ref(img[y0:y0 + h, x0:x0 + w], 16, 12))
        sizes.add((w, h))
        random.seed(seed)
        aug = image.RandomSizedCropAug((16, 12), area, (0.75, 4 / 3), interp=0)
        onp.testing.assert_array_equal(aug(np.array(img)).asnumpy(), out.asnumpy())
    assert len(sizes) > 1


def test_random_size_crop_falls_back_to_center_crop():
    img = _rgb(3, (30, 30, 3))
    # a 10:1 crop of 90 % of the area never fits in a square: after 10 tries, center_crop
    out, rect = image.random_size_crop(np.array(img), (10, 10), (0.9, 1.0), (10.0, 10.0))
    assert rect == (10, 10, 10, 10)
    onp.testing.assert_array_equal(out.asnumpy(), img[10:20, 10:20])


# ----------------------------------------------------------------------------------- color

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_brightness_jitter(seed):
    src = _float(seed)
    x = np.array(src)
    random.seed(seed)
    out = image.BrightnessJitterAug(0.4)(x)
    random.seed(seed)
    alpha = 1.0 + random.uniform(-0.4, 0.4)
    assert alpha != 1.0
    onp.testing.assert_allclose(out.asnumpy(), src * alpha, rtol=1e-5)
    assert out is x  # in place, as MXNet's


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_contrast_jitter(seed):
    src = _float(seed + 10)
    random.seed(seed)
    out = image.ContrastJitterAug(0.5)(np.array(src)).asnumpy()
    random.seed(seed)
    alpha = 1.0 + random.uniform(-0.5, 0.5)
    mean_gray = (src.astype(onp.float64) @ LUMA).mean()
    onp.testing.assert_allclose(out, alpha * src + (1 - alpha) * mean_gray, rtol=1e-4,
                                atol=1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_saturation_jitter(seed):
    src = _float(seed + 20)
    random.seed(seed)
    out = image.SaturationJitterAug(0.5)(np.array(src)).asnumpy()
    random.seed(seed)
    alpha = 1.0 + random.uniform(-0.5, 0.5)
    gray = (src.astype(onp.float64) @ LUMA)[:, :, None]
    onp.testing.assert_allclose(out, alpha * src + (1 - alpha) * gray, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hue_jitter_rotates_iq(seed):
    src = _float(seed + 30)
    random.seed(seed)
    out = image.HueJitterAug(0.3)(np.array(src)).asnumpy()
    random.seed(seed)
    theta = random.uniform(-0.3, 0.3) * math.pi
    to_yiq = onp.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                        [0.211, -0.523, 0.311]])
    to_rgb = onp.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
    yiq = src.astype(onp.float64) @ to_yiq.T
    i, q = yiq[..., 1].copy(), yiq[..., 2].copy()
    yiq[..., 1] = i * math.cos(theta) - q * math.sin(theta)
    yiq[..., 2] = i * math.sin(theta) + q * math.cos(theta)
    want = yiq @ to_rgb.T
    assert out.dtype == onp.float32
    onp.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)


def test_lighting_pca_noise():
    src = _float(40)
    eigval = onp.array([55.46, 4.794, 1.148])
    eigvec = onp.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]])
    onp.random.seed(7)
    out = image.LightingAug(0.1, eigval, eigvec)(np.array(src)).asnumpy()
    onp.random.seed(7)
    alpha = onp.random.normal(0, 0.1, size=3)
    shift = eigvec @ (alpha * eigval)  # sum over components of alpha_i lambda_i v_i
    assert onp.abs(shift).max() > 0.01
    onp.testing.assert_allclose(out, src + shift, rtol=1e-5, atol=1e-4)


def test_color_jitter_composes_in_random_order():
    aug = image.ColorJitterAug(0.3, 0.0, 0.2)
    assert sorted(type(t).__name__ for t in aug.ts) == ["BrightnessJitterAug",
                                                         "SaturationJitterAug"]
    assert isinstance(aug, image.RandomOrderAug)
    assert image.ColorJitterAug(0, 0, 0).ts == []
    src = _float(50)
    for seed in range(4):
        aug = image.ColorJitterAug(0.3, 0.0, 0.2)
        names = [type(t).__name__ for t in aug.ts]
        random.seed(seed)
        out = aug(np.array(src)).asnumpy()
        random.seed(seed)
        random.shuffle(names)
        want = src.astype(onp.float64)
        for name in names:
            if name == "BrightnessJitterAug":
                want = want * (1.0 + random.uniform(-0.3, 0.3))
            else:
                alpha = 1.0 + random.uniform(-0.2, 0.2)
                want = alpha * want + (1 - alpha) * (want @ LUMA)[:, :, None]
        onp.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)


def test_color_normalize_aug():
    src = _float(60)
    mean, std = onp.array([10.0, 20.0, 30.0]), onp.array([2.0, 4.0, 8.0])
    out = image.ColorNormalizeAug(mean, std)(np.array(src)).asnumpy()
    onp.testing.assert_allclose(out, (src - mean) / std, rtol=1e-5)
    only_mean = image.ColorNormalizeAug([1.0, 2.0, 3.0], None)(np.array(src)).asnumpy()
    onp.testing.assert_allclose(only_mean, src - [1.0, 2.0, 3.0], rtol=1e-6)


def test_random_gray():
    src = _float(70)
    gray = src.astype(onp.float64) @ onp.array([0.21, 0.72, 0.07])
    out = image.RandomGrayAug(1.0)(np.array(src)).asnumpy()
    assert out.shape == src.shape
    onp.testing.assert_allclose(out, onp.repeat(gray[:, :, None], 3, axis=2), rtol=1e-5)
    onp.testing.assert_array_equal(image.RandomGrayAug(0.0)(np.array(src)).asnumpy(), src)
    decisions = set()
    for seed in range(10):
        random.seed(seed)
        out = image.RandomGrayAug(0.5)(np.array(src)).asnumpy()
        random.seed(seed)
        converted = random.random() < 0.5
        decisions.add(converted)
        want = onp.repeat(gray[:, :, None], 3, axis=2) if converted else src
        onp.testing.assert_allclose(out, want, rtol=1e-5)
    assert decisions == {True, False}


def test_horizontal_flip_and_cast():
    src = _rgb(4, (5, 7, 3))
    onp.testing.assert_array_equal(image.HorizontalFlipAug(1.0)(np.array(src)).asnumpy(),
                                   onp.flip(src, axis=1))
    onp.testing.assert_array_equal(image.HorizontalFlipAug(0.0)(np.array(src)).asnumpy(), src)
    flips = set()
    for seed in range(10):
        random.seed(seed)
        out = image.HorizontalFlipAug(0.5)(np.array(src)).asnumpy()
        random.seed(seed)
        flipped = random.random() < 0.5
        flips.add(flipped)
        onp.testing.assert_array_equal(out, onp.flip(src, axis=1) if flipped else src)
    assert flips == {True, False}
    cast = image.CastAug()(np.array(src))
    assert cast.dtype == onp.float32
    onp.testing.assert_array_equal(cast.asnumpy(), src.astype(onp.float32))
    assert image.CastAug("float64")(np.array(src)).dtype == onp.float64


# -------------------------------------------------------------------------- CreateAugmenter

def _types(augs):
    return [type(a).__name__ for a in augs]


def test_create_augmenter_default_and_order():
    augs = image.CreateAugmenter((3, 24, 32))
    assert _types(augs) == ["CenterCropAug", "CastAug"]
    assert augs[0].size == (32, 24) and augs[0].interp == 2
    assert _types(image.CreateAugmenter((3, 24, 32), rand_crop=True)) == ["RandomCropAug",
                                                                          "CastAug"]
    augs = image.CreateAugmenter((3, 24, 32), resize=40, rand_crop=True, rand_resize=True,
                                 rand_mirror=True, mean=True, std=True, brightness=0.1,
                                 contrast=0.2, saturation=0.3, hue=0.4, pca_noise=0.05,
                                 rand_gray=0.25, inter_method=1)
    assert _types(augs) == ["ResizeAug", "RandomSizedCropAug", "HorizontalFlipAug", "CastAug",
                            "ColorJitterAug", "HueJitterAug", "LightingAug", "RandomGrayAug",
                            "ColorNormalizeAug"]
    resize, crop, flip, cast, jitter, hue, light, gray, norm = augs
    assert (resize.size, resize.interp) == (40, 1)
    assert crop.size == (32, 24) and crop.interp == 1
    assert crop.area == 0.08 and onp.allclose(crop.ratio, (0.75, 4 / 3))
    assert flip.p == 0.5 and cast.typ == "float32"
    assert sorted(_types(jitter.ts)) == ["BrightnessJitterAug", "ContrastJitterAug",
                                         "SaturationJitterAug"]
    assert hue.hue == 0.4 and light.alphastd == 0.05 and gray.p == 0.25
    onp.testing.assert_allclose(light.eigval, [55.46, 4.794, 1.148])
    onp.testing.assert_allclose(light.eigvec, [[-0.5675, 0.7192, 0.4009],
                                               [-0.5808, -0.0045, -0.8140],
                                               [-0.5836, -0.6948, 0.4203]])
    onp.testing.assert_allclose(norm.mean.asnumpy(), [123.68, 116.28, 103.53], rtol=1e-6)
    onp.testing.assert_allclose(norm.std.asnumpy(), [58.395, 57.12, 57.375], rtol=1e-6)
    # the whole list runs on a decoded image
    out = np.array(_rgb(5, (50, 70, 3)))
    for aug in augs:
        out = aug(out)
    assert out.shape == (24, 32, 3) and out.dtype == onp.float32
    assert onp.isfinite(out.asnumpy()).all()


def test_create_augmenter_mean_std_arrays():
    augs = image.CreateAugmenter((3, 8, 8), mean=onp.array([1.0, 2.0, 3.0]))
    assert _types(augs) == ["CenterCropAug", "CastAug", "ColorNormalizeAug"]
    assert augs[-1].std is None
    onp.testing.assert_allclose(augs[-1].mean.asnumpy(), [1.0, 2.0, 3.0])
    src = _rgb(6, (8, 8, 3))
    out = np.array(src)
    for aug in augs:
        out = aug(out)
    onp.testing.assert_allclose(out.asnumpy(), src - onp.array([1.0, 2.0, 3.0]), rtol=1e-6)
    std_only = image.CreateAugmenter((3, 8, 8), std=np.array([2.0]))
    assert std_only[-1].mean is None
    onp.testing.assert_allclose(std_only[-1].std.asnumpy(), [2.0])


# ------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("make,exc,match", [
    (lambda: image.ResizeAug("10"), TypeError, r"ResizeAug\] size"),
    (lambda: image.ResizeAug(0), ValueError, r"ResizeAug\] size"),
    (lambda: image.CenterCropAug(10), TypeError, r"CenterCropAug\] size"),
    (lambda: image.CenterCropAug((10,)), ValueError, r"CenterCropAug\] size"),
    (lambda: image.ForceResizeAug((10, 0)), ValueError, r"ForceResizeAug\] size"),
    (lambda: image.RandomCropAug((10, 1.5)), TypeError, r"RandomCropAug\] size"),
    (lambda: image.ResizeAug(10, interp=7), ValueError, r"ResizeAug\] interp"),
    (lambda: image.RandomSizedCropAug((4, 4), 0.0, (0.75, 1.33)), ValueError,
     r"RandomSizedCropAug\] area"),
    (lambda: image.RandomSizedCropAug((4, 4), (0.5, 0.2), (0.75, 1.33)), ValueError,
     r"RandomSizedCropAug\] area"),
    (lambda: image.RandomSizedCropAug((4, 4), 0.1, (2.0, 1.0)), ValueError,
     r"RandomSizedCropAug\] ratio"),
    (lambda: image.RandomSizedCropAug((4, 4), 0.1, 1.0), TypeError,
     r"RandomSizedCropAug\] ratio"),
    (lambda: image.BrightnessJitterAug(-0.1), ValueError, r"BrightnessJitterAug\] brightness"),
    (lambda: image.ContrastJitterAug("0.1"), TypeError, r"ContrastJitterAug\] contrast"),
    (lambda: image.HorizontalFlipAug(1.5), ValueError, r"HorizontalFlipAug\] p"),
    (lambda: image.RandomGrayAug(None), TypeError, r"RandomGrayAug\] p"),
    (lambda: image.LightingAug(0.1, [1.0, 2.0], onp.eye(3)), ValueError,
     r"LightingAug\] eigval"),
    (lambda: image.CastAug("not-a-type"), TypeError, r"CastAug\] typ"),
    (lambda: image.SequentialAug([image.CastAug(), 3]), TypeError, r"SequentialAug\] ts\[1\]"),
    (lambda: image.RandomOrderAug(image.CastAug()), TypeError, r"RandomOrderAug\] ts"),
    (lambda: image.CreateAugmenter((3, 8)), ValueError, r"CreateAugmenter\] data_shape"),
    (lambda: image.CreateAugmenter(8), TypeError, r"CreateAugmenter\] data_shape"),
    (lambda: image.CreateAugmenter((3, 8, 8), rand_resize=True), ValueError, "rand_crop"),
    (lambda: image.CreateAugmenter((3, 8, 8), mean=onp.zeros(2)), ValueError,
     r"CreateAugmenter\] mean"),
    (lambda: image.CreateAugmenter((3, 8, 8), std="abc"), TypeError, r"CreateAugmenter\] std"),
    (lambda: image.CreateAugmenter((3, 8, 8), rand_gray=2), ValueError, "rand_gray"),
    (lambda: image.CreateAugmenter((3, 8, 8), inter_method=5), ValueError,
     r"CreateAugmenter\] interp"),
    (lambda: image.CreateAugmenter((3, 8, 8), resize=-1), ValueError, "resize"),
])
def test_bad_arguments(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_bad_images():
    gray = np.array(onp.zeros((4, 4, 1), onp.float32))
    with pytest.raises(ValueError, match=r"ContrastJitterAug\] expects an RGB image"):
        image.ContrastJitterAug(0.1)(gray)
    with pytest.raises(TypeError, match=r"BrightnessJitterAug\] expects a floating-point"):
        image.BrightnessJitterAug(0.1)(np.array(_rgb(0, (4, 4, 3))))
    with pytest.raises(TypeError, match=r"HorizontalFlipAug\] expects an \(H, W, C\) ndx"):
        image.HorizontalFlipAug(0.5)(onp.zeros((4, 4, 3)))
    with pytest.raises(ValueError, match=r"CenterCropAug\] expects an \(H, W, C\) image"):
        image.CenterCropAug((2, 2))(np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"random_size_crop\] ratio"):
        image.random_size_crop(np.zeros((4, 4, 3)), (2, 2), 0.5, (0.0, 1.0))


# ------------------------------------------------------------------------------- ImageIter

N_IMAGES, H, W = 7, 6, 8


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """7 RGB images as PNG files, .lst files of them (one and two labels each) and .rec / .idx
    files of the same (one label, two labels)."""
    root = tmp_path_factory.mktemp("imgs")
    pixels = [_rgb(100 + i, (H, W, 3)) for i in range(N_IMAGES)]
    labels = [(float(i % 3), float(10 + i)) for i in range(N_IMAGES)]
    lines, lines2 = [], []
    for i, (px, lab) in enumerate(zip(pixels, labels)):
        PIL.fromarray(px).save(root / f"img{i}.png")
        lines.append(f"{i}\t{lab[0]}\timg{i}.png\n")
        lines2.append(f"{i}\t{lab[0]}\t{lab[1]}\timg{i}.png\n")
    (root / "list.lst").write_text("".join(lines))
    (root / "list2.lst").write_text("".join(lines2))
    rec = recordio.MXIndexedRecordIO(str(root / "data.idx"), str(root / "data.rec"), "w")
    for i, (px, lab) in enumerate(zip(pixels, labels)):
        header = recordio.IRHeader(0, lab[0], i, 0)
        rec.write_idx(i, recordio.pack_img(header, px[:, :, ::-1], img_fmt=".png"))
    rec.close()
    rec2 = recordio.MXIndexedRecordIO(str(root / "multi.idx"), str(root / "multi.rec"), "w")
    for i, (px, lab) in enumerate(zip(pixels, labels)):
        header = recordio.IRHeader(0, list(lab), i, 0)
        rec2.write_idx(i, recordio.pack_img(header, px[:, :, ::-1], img_fmt=".png"))
    rec2.close()
    return {"root": str(root), "pixels": pixels, "labels": labels,
            "rec": str(root / "data.rec"), "idx": str(root / "data.idx"),
            "multi_rec": str(root / "multi.rec"), "multi_idx": str(root / "multi.idx"),
            "lst": str(root / "list.lst"), "lst2": str(root / "list2.lst")}


def _epoch(it):
    return list(it)


def _check_batch(batch, files, order, pad=0):
    data, label = batch.data[0], batch.label[0]
    assert data.shape == (len(order), 3, H, W) and data.dtype == onp.float32
    want = onp.stack([files["pixels"][i].transpose(2, 0, 1) for i in order]).astype("float32")
    onp.testing.assert_array_equal(data.asnumpy(), want)
    onp.testing.assert_array_equal(label.asnumpy(),
                                   [files["labels"][i][0] for i in order])
    assert batch.pad == pad


@pytest.mark.parametrize("source", ["rec_idx", "rec", "lst", "imglist"])
def test_image_iter_sources_pad(files, source):
    kwargs = {"rec_idx": {"path_imgrec": files["rec"], "path_imgidx": files["idx"]},
              "rec": {"path_imgrec": files["rec"]},
              "lst": {"path_imglist": files["lst"], "path_root": files["root"]},
              "imglist": {"imglist": [[lab[0], f"img{i}.png"] for i, lab in
                                      enumerate(files["labels"])],
                          "path_root": files["root"]}}[source]
    it = image.ImageIter(3, (3, H, W), **kwargs)
    assert it.provide_data == [("data", (3, 3, H, W))]
    assert it.provide_label == [("softmax_label", (3,))]
    for _ in range(2):  # two epochs: reset() starts again
        batches = _epoch(it)
        assert len(batches) == 3
        _check_batch(batches[0], files, [0, 1, 2])
        _check_batch(batches[1], files, [3, 4, 5])
        _check_batch(batches[2], files, [6, 0, 1], pad=2)  # padded from the start
        with pytest.raises(StopIteration):
            it.next()
        it.reset()


def test_image_iter_discard_and_roll_over(files):
    src = {"path_imgrec": files["rec"], "path_imgidx": files["idx"]}
    it = image.ImageIter(3, (3, H, W), last_batch_handle="discard", **src)
    for _ in range(2):
        batches = _epoch(it)
        assert len(batches) == 2
        _check_batch(batches[1], files, [3, 4, 5])
        it.reset()
    it = image.ImageIter(3, (3, H, W), last_batch_handle="roll_over", **src)
    first = _epoch(it)
    assert len(first) == 2  # image 6 is kept for the next epoch
    it.reset()
    second = _epoch(it)
    assert len(second) == 2  # [6, 0, 1], [2, 3, 4]; 5 and 6 kept
    _check_batch(second[0], files, [6, 0, 1], pad=2)  # pad: images from the new epoch
    _check_batch(second[1], files, [2, 3, 4])
    it.reset()
    third = _epoch(it)
    assert len(third) == 3
    _check_batch(third[0], files, [5, 6, 0], pad=1)
    _check_batch(third[2], files, [4, 5, 6])
    it.reset()
    fourth = _epoch(it)
    assert len(fourth) == 2
    _check_batch(fourth[0], files, [0, 1, 2])
    it.hard_reset()  # drops image 6, kept from the fourth epoch
    _check_batch(it.next(), files, [0, 1, 2])


def test_image_iter_shuffle_and_parts(files):
    src = {"path_imgrec": files["rec"], "path_imgidx": files["idx"]}
    random.seed(3)
    it = image.ImageIter(7, (3, H, W), shuffle=True, **src)
    random.seed(3)
    order = list(range(N_IMAGES))
    random.shuffle(order)
    assert order != sorted(order)
    _check_batch(it.next(), files, order)
    for part, want in ((0, [0, 1, 2]), (1, [3, 4, 5])):
        it = image.ImageIter(3, (3, H, W), num_parts=2, part_index=part, **src)
        batches = _epoch(it)
        assert len(batches) == 1
        _check_batch(batches[0], files, want)


def test_image_iter_label_width_and_dtype(files):
    it = image.ImageIter(4, (3, H, W), label_width=2, path_imglist=files["lst2"],
                         path_root=files["root"], dtype="int32")
    assert it.provide_label == [("softmax_label", (4, 2))]
    batch = it.next()
    assert batch.label[0].dtype == onp.int32
    onp.testing.assert_array_equal(batch.label[0].asnumpy(), files["labels"][:4])
    it = image.ImageIter(4, (3, H, W), label_width=2, path_imgrec=files["multi_rec"],
                         path_imgidx=files["multi_idx"])
    onp.testing.assert_allclose(it.next().label[0].asnumpy(), files["labels"][:4])
    # a list with a record file gives the labels, by index
    it = image.ImageIter(2, (3, H, W), label_width=2, path_imgrec=files["rec"],
                         path_imgidx=files["idx"], path_imglist=files["lst2"])
    onp.testing.assert_allclose(it.next().label[0].asnumpy(), files["labels"][:2])
    onp.testing.assert_allclose(it.next().label[0].asnumpy(), files["labels"][2:4])


def test_image_iter_augments(files):
    it = image.ImageIter(2, (3, H, W), path_imgrec=files["rec"], path_imgidx=files["idx"],
                         aug_list=[image.HorizontalFlipAug(1.0), image.CastAug()])
    data = it.next().data[0].asnumpy()
    want = onp.stack([onp.flip(files["pixels"][i], axis=1).transpose(2, 0, 1)
                      for i in (0, 1)])
    onp.testing.assert_array_equal(data, want)
    # CreateAugmenter's arguments: a 4 x 4 center crop, normalized
    it = image.ImageIter(2, (3, 4, 4), path_imgrec=files["rec"], path_imgidx=files["idx"],
                         mean=onp.array([10.0, 20.0, 30.0]))
    data = it.next().data[0].asnumpy()
    crop = files["pixels"][0][1:5, 2:6].astype(onp.float64) - [10.0, 20.0, 30.0]
    onp.testing.assert_allclose(data[0], crop.transpose(2, 0, 1))


def test_image_iter_errors(files, tmp_path):
    src = {"path_imgrec": files["rec"], "path_imgidx": files["idx"]}
    with pytest.raises(ValueError, match=r"ImageIter\] give path_imgrec"):
        image.ImageIter(2, (3, H, W))
    with pytest.raises(FileNotFoundError, match=r"ImageIter\] path_imgrec"):
        image.ImageIter(2, (3, H, W), path_imgrec=str(tmp_path / "none.rec"))
    with pytest.raises(FileNotFoundError, match=r"ImageIter\] path_imglist"):
        image.ImageIter(2, (3, H, W), path_imglist=str(tmp_path / "none.lst"))
    with pytest.raises(ValueError, match=r"ImageIter\] data_shape must have 3 channels"):
        image.ImageIter(2, (1, H, W), **src)
    with pytest.raises(ValueError, match=r"ImageIter\] data_shape"):
        image.ImageIter(2, (H, W), **src)
    with pytest.raises(ValueError, match=r"ImageIter\] batch_size"):
        image.ImageIter(0, (3, H, W), **src)
    with pytest.raises(ValueError, match=r"ImageIter\] last_batch_handle"):
        image.ImageIter(2, (3, H, W), last_batch_handle="keep", **src)
    with pytest.raises(ValueError, match=r"ImageIter\] dtype"):
        image.ImageIter(2, (3, H, W), dtype="int8", **src)
    with pytest.raises(ValueError, match=r"ImageIter\] part_index"):
        image.ImageIter(2, (3, H, W), num_parts=2, part_index=2, **src)
    with pytest.raises(ValueError, match=r"ImageIter\] shuffle and num_parts"):
        image.ImageIter(2, (3, H, W), path_imgrec=files["rec"], shuffle=True)
    with pytest.raises(TypeError, match=r"ImageIter\] imglist\[0\]"):
        image.ImageIter(2, (3, H, W), imglist=[["img0.png"]])
    # found while reading
    with pytest.raises(ValueError, match=r"ImageIter\] the augmenters give images of shape"):
        image.ImageIter(2, (3, 4, 4), aug_list=[image.CastAug()], **src).next()
    with pytest.raises(ValueError, match=r"ImageIter\] an image has 1 labels, label_width"):
        image.ImageIter(2, (3, H, W), label_width=2, **src).next()
    with pytest.raises(FileNotFoundError, match=r"ImageIter\] no image file"):
        image.ImageIter(2, (3, H, W), imglist=[[0, "missing.png"]],
                        path_root=files["root"]).next()
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    with pytest.raises(RuntimeError, match=r"ImageIter\] broken image, file bad.png"):
        image.ImageIter(2, (3, H, W), imglist=[[0, "bad.png"]],
                        path_root=str(tmp_path)).next()
    bad_lst = tmp_path / "bad.lst"
    bad_lst.write_text("0\timg0.png\n")
    with pytest.raises(ValueError, match=r"bad.lst:1: expected"):
        image.ImageIter(2, (3, H, W), path_imglist=str(bad_lst), path_root=files["root"])


def test_image_iter_is_a_data_iter(files):
    it = image.ImageIter(7, (3, H, W), path_imglist=files["lst"], path_root=files["root"])
    assert isinstance(it, mx.io.DataIter)
    batch = next(iter(it))
    assert isinstance(batch, mx.io.DataBatch)
    _check_batch(batch, files, list(range(N_IMAGES)))
