"""mx.image.imrotate / random_rotate and the Rotate, RandomRotation and HybridRandomApply
transforms (MXNet 2.0's): against np.rot90, SciPy's bilinear map_coordinates at the rotated
points (computed here independently) and the rotated bounding box's zoom."""
import math

import numpy as onp
import pytest
from scipy import ndimage

import ndx as mx
from ndx import np

T = mx.gluon.data.vision.transforms
R = onp.random.default_rng(2)


def _reference(img, degrees, scale=1.0):
    """Each output pixel reads the source at its centred position rotated by `degrees`
    (counterclockwise in the image's x-right, y-down frame), scaled, bilinearly, zeros
    outside the image taking part in the interpolation (SciPy's grid-constant mode, as
    MXNet's BilinearSampler reads each corner)."""
    c, h, w = img.shape
    t = math.radians(degrees)
    yy, xx = onp.mgrid[0:h, 0:w].astype(onp.float64)
    y, x = yy - (h - 1) / 2, xx - (w - 1) / 2
    sx = (x * math.cos(t) - y * math.sin(t)) * scale + (w - 1) / 2
    sy = (x * math.sin(t) + y * math.cos(t)) * scale + (h - 1) / 2
    return onp.stack([ndimage.map_coordinates(img[k].astype(onp.float64), [sy, sx], order=1,
                                              mode="grid-constant", cval=0.0)
                     for k in range(c)])


def test_quarter_turns_and_no_turn():
    img = R.standard_normal((2, 5, 5)).astype(onp.float32)
    out = mx.image.imrotate(np.array(img), 90).asnumpy()
    onp.testing.assert_allclose(out, onp.rot90(img, k=1, axes=(1, 2)), atol=1e-5)
    onp.testing.assert_allclose(mx.image.imrotate(np.array(img), 0).asnumpy(), img, atol=1e-6)


@pytest.mark.parametrize("degrees", [30.0, -75.0, 200.0])
def test_any_angle_is_bilinear_sampling_of_the_rotated_grid(degrees):
    img = R.standard_normal((3, 7, 9)).astype(onp.float32)
    out = mx.image.imrotate(np.array(img), degrees).asnumpy()
    onp.testing.assert_allclose(out, _reference(img, degrees), atol=1e-4)


@pytest.mark.parametrize("zoom", ["zoom_in", "zoom_out"])
def test_zoom_fits_the_rotated_bounding_box(zoom):
    img = R.standard_normal((1, 6, 10)).astype(onp.float32)
    t = math.radians(35)
    box_w = 10 * abs(math.cos(t)) + 6 * abs(math.sin(t))
    box_h = 6 * abs(math.cos(t)) + 10 * abs(math.sin(t))
    scale = max(box_w / 10, box_h / 6) if zoom == "zoom_out" else min(10 / box_w, 6 / box_h)
    out = mx.image.imrotate(np.array(img), 35, **{zoom: True}).asnumpy()
    onp.testing.assert_allclose(out, _reference(img, 35, scale), atol=1e-4)


def test_a_batch_takes_one_angle_per_image_and_legacy_arrays_stay_legacy():
    imgs = R.standard_normal((2, 1, 5, 5)).astype(onp.float32)
    out = mx.image.imrotate(mx.nd.array(imgs), mx.nd.array([90, 0]))
    assert isinstance(out, mx.nd.NDArray) and out.shape == (2, 1, 5, 5)
    onp.testing.assert_allclose(out.asnumpy()[0], onp.rot90(imgs[0], axes=(1, 2)), atol=1e-5)
    onp.testing.assert_allclose(out.asnumpy()[1], imgs[1], atol=1e-6)


def test_bad_rotation_arguments():
    img = np.zeros((1, 4, 4))
    with pytest.raises(ValueError, match="cannot both"):
        mx.image.imrotate(img, 10, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match="float32"):
        mx.image.imrotate(np.zeros((1, 4, 4), dtype="uint8"), 10)
    with pytest.raises(ValueError, match="angles"):
        mx.image.imrotate(np.zeros((2, 1, 4, 4)), [1, 2, 3])
    with pytest.raises(ValueError, match="low < high"):
        T.RandomRotation((10, -10))
    with pytest.raises(ValueError, match="p must be"):
        T.RandomRotation((-10, 10), rotate_with_proba=2)
    with pytest.raises(TypeError, match="float32"):
        T.Rotate(10)(np.zeros((1, 4, 4), dtype="uint8"))


def test_random_rotation_draws_repeatably_and_with_its_probability():
    img = np.array(R.standard_normal((1, 6, 6)), dtype="float32")
    np.random.seed(3)
    first = T.RandomRotation((-40, 40))(img).asnumpy()
    np.random.seed(3)
    onp.testing.assert_array_equal(T.RandomRotation((-40, 40))(img).asnumpy(), first)
    assert not onp.allclose(first, img.asnumpy())
    onp.testing.assert_array_equal(T.RandomRotation((-40, 40), rotate_with_proba=0)(img)
                                   .asnumpy(), img.asnumpy())
    onp.testing.assert_allclose(T.Rotate(90)(img).asnumpy(),
                                onp.rot90(img.asnumpy(), axes=(1, 2)), atol=1e-5)


def test_hybrid_random_apply():
    img = np.array(R.standard_normal((3, 4, 4)), dtype="float32")
    always = T.HybridRandomApply(mx.gluon.nn.HybridLambda(lambda x: x * 2), p=1.0)
    never = T.HybridRandomApply(mx.gluon.nn.HybridLambda(lambda x: x * 2), p=0.0)
    for block in (always, never):
        block.hybridize()
    onp.testing.assert_allclose(always(img).asnumpy(), img.asnumpy() * 2)
    onp.testing.assert_allclose(never(img).asnumpy(), img.asnumpy())
    with pytest.raises(TypeError, match="HybridBlock"):
        T.HybridRandomApply(lambda x: x)
    # one branch runs: a transform may change the shape or dtype
    raw = np.array(R.integers(0, 255, size=(6, 8, 3)), dtype="uint8")
    for p, shape, dtype in ((1.0, (4, 4, 3), "uint8"), (0.0, (6, 8, 3), "uint8")):
        block = T.HybridRandomApply(T.Resize(4), p=p)
        out = block(raw)
        assert out.shape == shape and str(out.dtype) == dtype
    cast = T.HybridRandomApply(T.Cast("float16"), p=0.0)
    assert str(cast(raw).dtype) == "uint8"
    cast.hybridize()  # (a traced graph runs both: the shapes and dtypes must agree)
    with pytest.raises(NotImplementedError, match="shape and dtype"):
        cast(raw)
