"""The INT8 ops (src/operator/quantization.cc, conv.cc) against NumPy references written here:
symmetric quantization rounding half to even, exact int32 sums, and the requantization, on
oneDNN's kernels and (in a subprocess with NDX_DNNL=0) on the reference path."""
import os
import subprocess
import sys

import numpy as onp
import pytest

import ndx as mx
from ndx import _core

I32 = 2147483647.0


def run(op, inputs, **params):
    out = _core._invoke(op, tuple(inputs), params, None)
    return [o.asnumpy() for o in out] if isinstance(out, (list, tuple)) else out.asnumpy()


def arr(x):
    return mx.np.array(x)


def rng():
    return onp.random.default_rng(7)


def quantize_ref(x, lo, hi, levels):
    r = max(abs(lo), abs(hi))
    q = onp.rint(x.astype(onp.float64) * (levels / r))
    low = 0 if levels == 255 else -127 if levels == 127 else -I32
    return onp.clip(q, low, levels)


# ------------------------------------------------------------------ quantize / dequantize

def test_quantize_int8_runtime_range():
    x = onp.array([[-1.0, 0.5, 2.0, -3.0], [0.0, 1.5, -0.25, 2.9]], onp.float32)
    q, lo, hi = run("_contrib_quantize_v2", [arr(x)])
    assert q.dtype == onp.int8
    onp.testing.assert_array_equal(q, quantize_ref(x, -3.0, 2.9, 127))
    assert lo.tolist() == [-3.0] and hi.tolist() == [3.0]


def test_quantize_rounds_half_to_even_and_saturates():
    # with range 127 each step is 1.0: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 300 -> 127
    x = onp.array([0.5, 1.5, 2.5, -2.5, 300.0, -300.0], onp.float32)
    q, _, _ = run("_contrib_quantize_v2", [arr(x)], min_calib_range=-127.0,
                  max_calib_range=127.0)
    assert q.tolist() == [0, 2, 2, -2, 127, -127]


@pytest.mark.parametrize("out_type,levels", [("int8", 127), ("uint8", 255)])
def test_quantize_long_arrays_nan_and_inf(out_type, levels):
    # long enough for the 16-wide loop and its tail; nan -> 0, infinities saturate
    x = rng().standard_normal(4099).astype(onp.float32) * 3
    x[[5, 100, 4098]] = [onp.nan, onp.inf, -onp.inf]
    q, lo, hi = run("_contrib_quantize_v2", [arr(x)], out_type=out_type, min_calib_range=-4.0,
                    max_calib_range=4.0)
    ref = quantize_ref(onp.nan_to_num(x, nan=0.0, posinf=1e9, neginf=-1e9), -4.0, 4.0, levels)
    assert q[5] == 0 and q[100] == levels and q[4098] == (-127 if levels == 127 else 0)
    # the product x * scale is rounded to float32 before rounding to an integer, so a value
    # within float32 rounding of a half-way point may land on the other side
    assert onp.abs(q.astype(int) - ref).max() <= 1 and (q != ref).sum() <= 2


def test_quantize_uint8_and_auto():
    x = onp.array([-1.0, 0.0, 1.0, 2.0, 4.0], onp.float32)
    q, lo, hi = run("_contrib_quantize_v2", [arr(x)], out_type="uint8",
                    min_calib_range=0.0, max_calib_range=4.0)
    assert q.dtype == onp.uint8
    assert q.tolist() == [0, 0, 64, 128, 255]  # negatives saturate to 0; 63.75 -> 64
    assert lo.tolist() == [0.0] and hi.tolist() == [4.0]
    qa, _, _ = run("_contrib_quantize_v2", [arr(x)], out_type="auto", min_calib_range=0.0,
                   max_calib_range=4.0)
    assert qa.dtype == onp.uint8
    qs, _, _ = run("_contrib_quantize_v2", [arr(x)], out_type="auto", min_calib_range=-1.0,
                   max_calib_range=4.0)
    assert qs.dtype == onp.int8
    onp.testing.assert_array_equal(qs, quantize_ref(x, -1.0, 4.0, 127))


def test_quantize_passes_quantized_data_through():
    q = onp.array([-5, 0, 7], onp.int8)
    out, lo, hi = run("_contrib_quantize_v2", [arr(q)], min_calib_range=-2.0,
                      max_calib_range=2.0)
    assert out.dtype == onp.int8 and out.tolist() == [-5, 0, 7]
    assert lo.tolist() == [-2.0] and hi.tolist() == [2.0]
    with pytest.raises(ValueError, match="min_calib_range"):
        run("_contrib_quantize_v2", [arr(q)])


def test_quantize_zero_and_empty_data():
    q, lo, hi = run("_contrib_quantize_v2", [arr(onp.zeros(3, onp.float32))])
    assert q.tolist() == [0, 0, 0] and hi.tolist() == [1.0]  # any scale works for zeros
    q, _, _ = run("_contrib_quantize_v2", [arr(onp.zeros((0, 4), onp.float32))])
    assert q.shape == (0, 4) and q.dtype == onp.int8


@pytest.mark.parametrize("dtype,levels", [("int8", 127), ("uint8", 255), ("int32", I32)])
def test_dequantize(dtype, levels):
    info = onp.iinfo(dtype)
    q = rng().integers(max(info.min, -1000), min(info.max, 1000), size=(3, 5)).astype(dtype)
    y = run("_contrib_dequantize", [arr(q), arr(onp.array([-2.5], onp.float32)),
                                    arr(onp.array([1.5], onp.float32))])
    assert y.dtype == onp.float32
    if dtype == "uint8":  # affine, MXNet's: min + q * (max - min) / 255
        want = -2.5 + q.astype(onp.float64) * 4.0 / 255
    else:  # symmetric: q * max(|min|, |max|) / levels
        want = q.astype(onp.float64) * 2.5 / levels
    onp.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_requantize_with_and_without_calibration():
    q = onp.array([-I32, -1000, 0, 5000, int(I32)], onp.float64).astype(onp.int32)
    lo, hi = onp.array([-8.0], onp.float32), onp.array([8.0], onp.float32)
    real = q.astype(onp.float64) * 8.0 / I32
    out, olo, ohi = run("_contrib_requantize", [arr(q), arr(lo), arr(hi)], min_calib_range=-4.0,
                        max_calib_range=4.0)
    assert out.dtype == onp.int8 and olo.tolist() == [-4.0] and ohi.tolist() == [4.0]
    onp.testing.assert_array_equal(out, quantize_ref(real, -4.0, 4.0, 127))
    out, olo, ohi = run("_contrib_requantize", [arr(q), arr(lo), arr(hi)])
    onp.testing.assert_array_equal(out, quantize_ref(real, -8.0, 8.0, 127))
    assert ohi.tolist() == [8.0]
    out, _, _ = run("_contrib_requantize", [arr(q), arr(lo), arr(hi)], out_type="uint8",
                    min_calib_range=0.0, max_calib_range=8.0)
    onp.testing.assert_array_equal(out, quantize_ref(real, 0.0, 8.0, 255))


def test_bad_quantize_arguments():
    x = arr(onp.ones(3, onp.float32))
    with pytest.raises(ValueError, match="go together"):
        run("_contrib_quantize_v2", [x], min_calib_range=0.0)
    with pytest.raises(ValueError, match="exceeds"):
        run("_contrib_quantize_v2", [x], min_calib_range=1.0, max_calib_range=0.0)
    with pytest.raises(ValueError, match="out_type"):
        run("_contrib_quantize_v2", [x], out_type="int4")
    with pytest.raises(TypeError, match="float"):
        run("_contrib_quantize_v2", [arr(onp.ones(3, onp.int64))])
    with pytest.raises(TypeError, match="int32"):
        run("_contrib_requantize", [arr(onp.ones(3, onp.int8)), arr([0.0]), arr([1.0])])
    with pytest.raises(ValueError, match=r"shape \(1,\)"):
        run("_contrib_dequantize", [arr(onp.ones(3, onp.int8)), arr(onp.zeros(2, onp.float32)),
                                    arr(onp.ones(2, onp.float32))])


# ------------------------------------------------------------------ fully connected / conv

def quantize_tensor(x, unsigned=False):
    r = float(onp.abs(x).max())
    levels = 255 if unsigned else 127
    return quantize_ref(x, -r, r, levels).astype(onp.uint8 if unsigned else onp.int8), r


def conv_ref(x, w, stride, pad, dilate, groups):
    """Exact integer convolution (float64 sums of products of small integers)."""
    x = onp.pad(x.astype(onp.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh = (h - dilate * (kh - 1) - 1) // stride + 1
    ow = (wd - dilate * (kw - 1) - 1) // stride + 1
    out = onp.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilate: i * dilate + stride * (oh - 1) + 1: stride,
                           j * dilate: j * dilate + stride * (ow - 1) + 1: stride]
                out[:, g * fg:(g + 1) * fg] += onp.einsum(
                    "nchw,fc->nfhw", patch, w[g * fg:(g + 1) * fg, :, i, j].astype(onp.float64))
    return out


def linear_case(unsigned, per_channel, f=6):
    r = rng()
    x = r.standard_normal((5, 3, 4)).astype(onp.float32)
    if unsigned:
        x = onp.abs(x)
    w = (r.standard_normal((f, 12)) * onp.linspace(0.1, 2.0, f)[:, None]).astype(onp.float32)
    b = r.standard_normal(f).astype(onp.float32)
    xq, xr = quantize_tensor(x, unsigned)
    if per_channel:
        wr = onp.abs(w).max(axis=1)
        wq = onp.rint(w / (wr / 127)[:, None]).astype(onp.int8)
    else:
        wq, wmax = quantize_tensor(w)
        wr = onp.full(f, wmax)
    return x, w, b, xq, xr, wq, wr


def range_args(xr, wr, per_channel, unsigned=False):
    wlo = -wr if per_channel else onp.array([-wr[0]])
    whi = wr if per_channel else onp.array([wr[0]])
    return [arr(onp.array([0.0 if unsigned else -xr], onp.float32)),
            arr(onp.array([xr], onp.float32)), arr(wlo.astype(onp.float32)),
            arr(whi.astype(onp.float32))]


@pytest.mark.parametrize("unsigned", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
def test_quantized_fully_connected_int32_is_exact(unsigned, per_channel):
    x, w, b, xq, xr, wq, wr = linear_case(unsigned, per_channel)
    ranges = range_args(xr, wr, per_channel, unsigned)
    out, lo, hi = run("_contrib_quantized_fully_connected",
                      [arr(xq), arr(wq), arr(b)] + ranges + [arr([0.0]), arr([1.0])],
                      num_hidden=6)
    assert out.dtype == onp.int32
    sd, sw = xr / (255 if unsigned else 127), wr / 127
    acc = xq.reshape(5, -1).astype(onp.int64) @ wq.astype(onp.int64).T
    # the output unit is sd * max(sw): each channel rescaled onto it
    expect = onp.rint((acc + b / (sd * sw)) * (sw / sw.max()))
    assert onp.abs(out - expect).max() <= (0 if not per_channel else 1)
    onp.testing.assert_allclose(hi, [sd * sw.max() * I32], rtol=1e-6)
    # dequantized, it is the float layer up to the quantization of x and w
    y = run("_contrib_dequantize", [arr(out), arr(lo), arr(hi)])
    ref = x.reshape(5, -1) @ w.T + b
    assert onp.abs(y - ref).max() < 0.03 * onp.abs(ref).max()


def test_quantized_fully_connected_requantizes_with_relu():
    x, w, b, xq, xr, wq, wr = linear_case(False, True)
    ranges = range_args(xr, wr, True)
    real = (xq.reshape(5, -1).astype(onp.float64) * (xr / 127)) @ \
        (wq.astype(onp.float64) * (wr / 127)[:, None]).T + b
    out, lo, hi = run("_contrib_quantized_fully_connected",
                      [arr(xq), arr(wq), arr(b)] + ranges + [arr([0.0]), arr([1.0])],
                      num_hidden=6, min_calib_range=-3.0, max_calib_range=5.0)
    assert out.dtype == onp.int8 and lo.tolist() == [-5.0] and hi.tolist() == [5.0]
    assert onp.abs(out - quantize_ref(real, -5.0, 5.0, 127)).max() <= 1  # float scale rounding
    out, lo, hi = run("_contrib_quantized_fully_connected",
                      [arr(xq), arr(wq), arr(b)] + ranges + [arr([0.0]), arr([1.0])],
                      num_hidden=6, min_calib_range=-3.0, max_calib_range=5.0, with_relu=True)
    assert out.dtype == onp.uint8 and lo.tolist() == [0.0]
    assert onp.abs(out.astype(int) - quantize_ref(onp.maximum(real, 0), 0, 5.0, 255)).max() <= 1


def test_quantized_fully_connected_int8_bias_no_bias_and_no_flatten():
    x, w, b, xq, xr, wq, wr = linear_case(False, False)
    ranges = range_args(xr, wr, False)
    bq, br = quantize_tensor(b)
    out, lo, hi = run("_contrib_quantized_fully_connected",
                      [arr(xq), arr(wq), arr(bq)] + ranges +
                      [arr(onp.array([-br], onp.float32)), arr(onp.array([br], onp.float32))],
                      num_hidden=6)
    y = out.astype(onp.float64) * hi[0] / I32
    real = (xq.reshape(5, -1).astype(onp.float64) * (xr / 127)) @ \
        (wq.astype(onp.float64) * (wr[0] / 127)).T + bq * (br / 127)
    onp.testing.assert_allclose(y, real, atol=hi[0] / I32)
    out, _, _ = run("_contrib_quantized_fully_connected", [arr(xq), arr(wq)] + ranges,
                    num_hidden=6, no_bias=True)
    onp.testing.assert_array_equal(out, xq.reshape(5, -1).astype(onp.int64) @
                                   wq.astype(onp.int64).T)
    wq4 = wq[:, :4]
    out, _, _ = run("_contrib_quantized_fully_connected", [arr(xq), arr(wq4)] + ranges,
                    num_hidden=6, no_bias=True, flatten=False)
    assert out.shape == (5, 3, 6)
    onp.testing.assert_array_equal(out, xq.astype(onp.int64) @ wq4.astype(onp.int64).T)


@pytest.mark.parametrize("stride,pad,dilate,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1),
                                                      (1, 1, 1, 2)])
@pytest.mark.parametrize("unsigned", [False, True])
def test_quantized_conv_int32_is_exact(stride, pad, dilate, groups, unsigned):
    r = rng()
    x = r.standard_normal((2, 4, 9, 8)).astype(onp.float32)
    if unsigned:
        x = onp.abs(x)
    w = r.standard_normal((6, 4 // groups, 3, 3)).astype(onp.float32)
    b = r.standard_normal(6).astype(onp.float32)
    xq, xr = quantize_tensor(x, unsigned)
    wq, wmax = quantize_tensor(w)
    ranges = range_args(xr, onp.array([wmax]), False, unsigned)
    out, lo, hi = run("_contrib_quantized_conv",
                      [arr(xq), arr(wq), arr(b)] + ranges + [arr([0.0]), arr([1.0])],
                      kernel=(3, 3), num_filter=6, stride=(stride, stride), pad=(pad, pad),
                      dilate=(dilate, dilate), num_group=groups)
    sd, sw = xr / (255 if unsigned else 127), wmax / 127
    acc = conv_ref(xq, wq, stride, pad, dilate, groups)
    onp.testing.assert_array_equal(out, onp.rint(acc + (b / (sd * sw))[None, :, None, None]))
    onp.testing.assert_allclose(hi, [sd * sw * I32], rtol=1e-6)


def test_quantized_conv_per_channel_requantized_relu():
    r = rng()
    x = r.standard_normal((2, 3, 7, 7)).astype(onp.float32)
    w = (r.standard_normal((5, 3, 3, 3)) * onp.arange(1, 6)[:, None, None, None]).astype(
        onp.float32)
    b = r.standard_normal(5).astype(onp.float32)
    xq, xr = quantize_tensor(x)
    wr = onp.abs(w).reshape(5, -1).max(axis=1)
    wq = onp.rint(w / (wr / 127)[:, None, None, None]).astype(onp.int8)
    real = conv_ref(xq, wq, 1, 1, 1, 1) * (xr / 127) * (wr / 127)[None, :, None, None] + \
        b[None, :, None, None]
    out, lo, hi = run("_contrib_quantized_conv",
                      [arr(xq), arr(wq), arr(b)] + range_args(xr, wr, True) +
                      [arr([0.0]), arr([1.0])],
                      kernel=(3, 3), num_filter=5, pad=(1, 1), min_calib_range=-2.0,
                      max_calib_range=10.0, with_relu=True)
    assert out.dtype == onp.uint8 and lo.tolist() == [0.0] and hi.tolist() == [10.0]
    assert onp.abs(out.astype(int) - quantize_ref(onp.maximum(real, 0), 0, 10.0, 255)).max() <= 1


def test_quantized_conv_1d_and_shapes():
    r = rng()
    xq = r.integers(-127, 128, (2, 3, 10)).astype(onp.int8)
    wq = r.integers(-127, 128, (4, 3, 3)).astype(onp.int8)
    one = [arr([-1.0]), arr([1.0])]
    out, _, _ = run("_contrib_quantized_conv", [arr(xq), arr(wq)] + one + one, kernel=(3,),
                    num_filter=4, no_bias=True)
    ref = conv_ref(xq[:, :, None, :], wq[:, :, None, :], 1, 0, 1, 1)[:, :, 0]
    onp.testing.assert_array_equal(out, ref)
    with pytest.raises(ValueError, match="weight"):
        run("_contrib_quantized_conv", [arr(xq), arr(wq[:2])] + one + one, kernel=(3,),
            num_filter=4, no_bias=True)
    with pytest.raises(ValueError, match="min_weight"):
        run("_contrib_quantized_conv", [arr(xq), arr(wq)] + one +
            [arr(onp.zeros(3, onp.float32)), arr(onp.ones(3, onp.float32))], kernel=(3,),
            num_filter=4, no_bias=True)
    with pytest.raises(TypeError, match="int8"):
        run("_contrib_quantized_conv", [arr(xq.astype(onp.float32)), arr(wq)] + one + one,
            kernel=(3,), num_filter=4, no_bias=True)
    with pytest.raises(TypeError, match="weight"):
        run("_contrib_quantized_conv", [arr(xq), arr(wq.astype(onp.uint8))] + one + one,
            kernel=(3,), num_filter=4, no_bias=True)


# ------------------------------------------------------------------ pooling, relu, flatten

@pytest.mark.parametrize("pool_type", ["max", "avg"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("shape", [(2, 3, 6, 6), (1, 2, 4, 140)])  # (rows of 70 windows: the
def test_quantized_pooling(pool_type, dtype, shape):                # vector loop and a tail)
    info = onp.iinfo(dtype)
    q = rng().integers(max(info.min, -127), info.max, shape).astype(dtype)
    out, lo, hi = run("_contrib_quantized_pooling", [arr(q), arr([-3.0]), arr([3.0])],
                      kernel=(2, 2), stride=(2, 2), pool_type=pool_type)
    n, c, h, w = shape
    windows = q.astype(onp.float64).reshape(n, c, h // 2, 2, w // 2, 2)
    ref = windows.max(axis=(3, 5)) if pool_type == "max" else onp.rint(
        windows.mean(axis=(3, 5)))
    assert out.dtype == q.dtype
    onp.testing.assert_array_equal(out, ref)
    assert lo.tolist() == [-3.0] and hi.tolist() == [3.0]


def test_quantized_act_and_flatten():
    q = onp.array([[-5, 0, 9], [127, -127, 1]], onp.int8)
    out, lo, hi = run("_contrib_quantized_act", [arr(q), arr([-2.0]), arr([2.0])])
    assert out.tolist() == [[0, 0, 9], [127, 0, 1]] and hi.tolist() == [2.0]
    with pytest.raises(ValueError, match="act_type"):
        run("_contrib_quantized_act", [arr(q), arr([-2.0]), arr([2.0])], act_type="tanh")
    q3 = rng().integers(-127, 128, (2, 3, 4)).astype(onp.int8)
    out, _, _ = run("_contrib_quantized_flatten", [arr(q3), arr([-1.0]), arr([1.0])])
    onp.testing.assert_array_equal(out, q3.reshape(2, 12))


def test_int8_ops_have_no_gradient():
    x = arr(onp.ones((2, 3), onp.float32))
    x.attach_grad()
    with mx.autograd.record():
        q, lo, hi = _core._invoke("_contrib_quantize_v2", (x,), {}, None)
        y = _core._invoke("_contrib_dequantize", (q, lo, hi), {}, None)
    with pytest.raises(NotImplementedError, match="INT8"):
        y.backward()


def test_reference_path_without_onednn():
    """The same tests with oneDNN off (NDX_DNNL=0): the float-GEMM reference path."""
    env = dict(os.environ, NDX_DNNL="0")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-x", __file__, "-k", "quantized"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout


def test_quantized_elemwise_add():
    r = rng()
    a = r.integers(-127, 128, (3, 40)).astype(onp.int8)
    b = r.integers(0, 256, (3, 40)).astype(onp.uint8)
    ranges = [arr([-2.0]), arr([2.0]), arr([0.0]), arr([5.0])]
    real = a * (2.0 / 127) + b * (5.0 / 255)
    out, lo, hi = run("_contrib_quantized_elemwise_add", [arr(a), arr(b)] + ranges,
                      min_calib_range=-6.0, max_calib_range=6.0)
    assert out.dtype == onp.int8 and lo.tolist() == [-6.0] and hi.tolist() == [6.0]
    onp.testing.assert_array_equal(out, quantize_ref(real, -6.0, 6.0, 127))
    out, lo, hi = run("_contrib_quantized_elemwise_add", [arr(a), arr(b)] + ranges)
    assert out.dtype == onp.int32
    onp.testing.assert_allclose(out * (hi[0] / I32), real, atol=2 * hi[0] / I32)
    assert hi[0] >= onp.abs(real).max()
    with pytest.raises(ValueError, match="same shape"):
        run("_contrib_quantized_elemwise_add", [arr(a), arr(b[:2])] + ranges)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_quantized_pooling_padded_and_global(dtype):
    info = onp.iinfo(dtype)
    q = rng().integers(max(info.min, -127), info.max, (2, 3, 7, 9)).astype(dtype)
    ranges = [arr([-3.0]), arr([3.0])]
    # ResNet's stem pooling: 3x3 windows, stride 2, padding 1 (padding never wins a max)
    out, _, _ = run("_contrib_quantized_pooling", [arr(q)] + ranges, kernel=(3, 3),
                    stride=(2, 2), pad=(1, 1), pool_type="max")
    padded = onp.pad(q.astype(onp.float64), ((0, 0), (0, 0), (1, 1), (1, 1)),
                     constant_values=-onp.inf)
    ref = onp.stack([onp.stack([padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
                                for j in range(5)], -1) for i in range(4)], -2)
    onp.testing.assert_array_equal(out, ref)
    out, _, _ = run("_contrib_quantized_pooling", [arr(q)] + ranges, kernel=(1, 1),
                    global_pool=True, pool_type="avg")
    # the nearest integer; an exact half may go either way (oneDNN multiplies by 1 / 63)
    mean = q.astype(onp.float64).mean(axis=(2, 3), keepdims=True)
    assert out.shape == mean.shape and onp.abs(out - mean).max() <= 0.5


@pytest.mark.parametrize("op", ["conv", "fc"])
def test_weights_changed_in_place_are_used(op):
    # the oneDNN path keeps its reorder of the last weights; a change in place must show
    r = rng()
    one = [arr([-1.0]), arr([1.0])]
    if op == "conv":
        xq = r.integers(-127, 128, (2, 16, 6, 6)).astype(onp.int8)
        shape, params = (8, 16, 3, 3), dict(kernel=(3, 3), num_filter=8, no_bias=True)
        name = "_contrib_quantized_conv"
    else:
        xq = r.integers(-127, 128, (4, 64)).astype(onp.int8)
        shape, params = (8, 64), dict(num_hidden=8, no_bias=True)
        name = "_contrib_quantized_fully_connected"
    w1 = r.integers(-127, 128, shape).astype(onp.int8)
    w2 = r.integers(-127, 128, shape).astype(onp.int8)
    w = arr(w1)
    out1, _, _ = run(name, [arr(xq), w] + one + one, **params)
    w[:] = arr(w2)
    out2, _, _ = run(name, [arr(xq), w] + one + one, **params)
    if op == "conv":
        ref1, ref2 = (conv_ref(xq, v, 1, 0, 1, 1) for v in (w1, w2))
    else:
        ref1, ref2 = (xq.astype(onp.int64) @ v.astype(onp.int64).T for v in (w1, w2))
    onp.testing.assert_array_equal(out1, ref1)
    onp.testing.assert_array_equal(out2, ref2)


def test_quantized_sums_are_exact_for_long_dot_products():
    # K = 4608 uint8 x int8 products: partial sums pass 2^24, where float sums round
    r = rng()
    xq = r.integers(200, 256, (2, 512, 3, 3)).astype(onp.uint8)
    wq = r.integers(100, 128, (4, 512, 3, 3)).astype(onp.int8)
    one, unsigned = [arr([-1.0]), arr([1.0])], [arr([0.0]), arr([1.0])]
    out, _, _ = run("_contrib_quantized_conv", [arr(xq), arr(wq)] + unsigned + one,
                    kernel=(3, 3), num_filter=4, no_bias=True)
    exact = onp.einsum("nchw,fchw->nf", xq.astype(onp.int64), wq.astype(onp.int64))
    assert exact.max() > 2 ** 24
    onp.testing.assert_array_equal(out[:, :, 0, 0], exact)
    x2, w2 = xq.reshape(2, -1), wq.reshape(4, -1)
    out, _, hi = run("_contrib_quantized_fully_connected", [arr(x2), arr(w2)] + unsigned + one,
                     num_hidden=4, no_bias=True)
    # oneDNN scales its int32 result through float (the unit scale): within 1e-7 relative
    onp.testing.assert_allclose(out, x2.astype(onp.int64) @ w2.astype(onp.int64).T, rtol=1e-7)


def test_quantized_dead_weight_channel_keeps_the_int32_precision():
    # a channel of zero weights (range 0) must not set the int32 output's unit
    r = rng()
    xq = r.integers(-127, 128, (3, 32)).astype(onp.int8)
    w = r.uniform(-1e-5, 1e-5, (4, 32))
    w[2] = 0
    wr = onp.abs(w).max(axis=1)
    wq = onp.rint(w / onp.where(wr > 0, wr, 1)[:, None] * 127).astype(onp.int8)
    out, lo, hi = run("_contrib_quantized_fully_connected",
                      [arr(xq), arr(wq), arr([-1.0]), arr([1.0]),
                       arr(-wr.astype(onp.float32)), arr(wr.astype(onp.float32))],
                      num_hidden=4, no_bias=True)
    real = (xq.astype(onp.float64) / 127) @ (wq.astype(onp.float64) * (wr / 127)[:, None]).T
    got = out.astype(onp.float64) * hi[0] / I32
    # one int32 step of the live channels' unit, (1 / 127) * (max live range / 127); a dead
    # channel setting the unit (range 1) made errors of 60% here
    unit = (1 / 127) * (wr.max() / 127)
    onp.testing.assert_allclose(hi, [unit * I32], rtol=1e-6)
    assert onp.abs(got - real).max() <= unit


def test_quantize_ignores_infinities_for_its_range():
    x = onp.array([0.25, 2.0, 5.0, -3.0, onp.inf, -onp.inf], onp.float32)
    q, lo, hi = run("_contrib_quantize_v2", [arr(x)])
    assert hi.tolist() == [5.0]  # the finite values' range; the infinities saturate
    assert q.tolist() == [6, 51, 127, -76, 127, -127]


def test_quantized_bad_calibration_bias_and_pool_type():
    one = [arr([-1.0]), arr([1.0])]
    xq, wq = arr(onp.ones((2, 4), onp.int8)), arr(onp.ones((3, 4), onp.int8))
    for lo, hi, match in [(5.0, -5.0, "exceeds"), (onp.nan, 1.0, "finite")]:
        with pytest.raises(ValueError, match=match):
            run("_contrib_quantized_fully_connected", [xq, wq] + one + one, num_hidden=3,
                no_bias=True, min_calib_range=lo, max_calib_range=hi)
        with pytest.raises(ValueError, match=match):
            run("_contrib_quantized_elemwise_add", [xq, xq] + one + one, min_calib_range=lo,
                max_calib_range=hi)
    bias = arr(onp.array([0.0, onp.nan, 1.0], onp.float32))
    with pytest.raises(ValueError, match="bias"):
        run("_contrib_quantized_fully_connected", [xq, wq, bias] + one + one + one,
            num_hidden=3)
    with pytest.raises(ValueError, match="pool_type"):
        run("_contrib_quantized_pooling", [arr(onp.ones((1, 1, 4, 4), onp.uint8))] + one,
            kernel=(2, 2), stride=(2, 2), pool_type="sum")


def test_quantized_range_shapes_are_checked_by_shape_inference():
    data, lo, hi = mx.sym.var("data"), mx.sym.var("lo"), mx.sym.var("hi")
    for op, params in [("_contrib_quantized_pooling", {"kernel": (2, 2), "pool_type": "max"}),
                       ("_contrib_quantized_act", {}), ("_contrib_quantized_flatten", {}),
                       ("_contrib_dequantize", {})]:
        node = getattr(mx.sym, op)(data, lo, hi, name="node", **params)
        with pytest.raises(ValueError, match="shape"):
            node.infer_shape(data=(1, 2, 4, 4), lo=(2,), hi=(1,))


def test_quantize_v1_uint8_is_affine_and_round_trips():
    # MXNet's first quantize: uint8 over [min, max] with the minimum at 0
    x = onp.array([-1.0, -0.5, 0.0, 0.7, 3.0], onp.float32)
    q, lo, hi = run("_contrib_quantize", [arr(x), arr([-1.0]), arr([3.0])])
    assert q.dtype == onp.uint8 and lo.tolist() == [-1.0] and hi.tolist() == [3.0]
    onp.testing.assert_array_equal(q, onp.rint((x.astype(onp.float64) + 1) * 255 / 4))
    y = run("_contrib_dequantize", [arr(q), arr(lo), arr(hi)])
    assert onp.abs(y - x).max() <= 0.5 * 4 / 255 + 1e-6
    q8, lo8, hi8 = run("_contrib_quantize", [arr(x), arr([-1.0]), arr([3.0])], out_type="int8")
    onp.testing.assert_array_equal(q8, quantize_ref(x, -1.0, 3.0, 127))
    assert lo8.tolist() == [-3.0]
    # such a range (a zero point) is for dequantize only: the INT8 layers refuse it
    with pytest.raises(ValueError, match="uint8"):
        run("_contrib_quantized_fully_connected",
            [arr(q.reshape(1, 5)), arr(onp.ones((2, 5), onp.int8)), arr(lo), arr(hi),
             arr([-1.0]), arr([1.0])], num_hidden=2, no_bias=True)


def test_quantized_concat():
    r = rng()
    a = r.integers(-127, 128, (2, 3, 4)).astype(onp.int8)
    b = r.integers(0, 256, (2, 5, 4)).astype(onp.uint8)
    ranges = [arr([-2.0]), arr([2.0]), arr([0.0]), arr([4.0])]
    out, lo, hi = run("_contrib_quantized_concat", [arr(a), arr(b)] + ranges, num_args=2, dim=1)
    # int8 over the widest range, 4: a's steps (2 / 127) and b's (4 / 255) onto 4 / 127
    assert out.dtype == onp.int8 and lo.tolist() == [-4.0] and hi.tolist() == [4.0]
    real = onp.concatenate([a * (2.0 / 127), b * (4.0 / 255)], axis=1)
    onp.testing.assert_array_equal(out, onp.clip(onp.rint(real * 127 / 4), -128, 127))
    # all uint8 stays uint8; a calibrated range saturates what lies beyond it
    out, lo, hi = run("_contrib_quantized_concat", [arr(b), arr(b[:, :2])] +
                      [arr([0.0]), arr([4.0]), arr([0.0]), arr([4.0])], num_args=2, dim=1,
                      min_calib_range=0.0, max_calib_range=2.0)
    assert out.dtype == onp.uint8 and hi.tolist() == [2.0]
    want = onp.concatenate([b, b[:, :2]], axis=1) * (4.0 / 255)
    onp.testing.assert_array_equal(out, onp.clip(onp.rint(want * 255 / 2), 0, 255))
    out, _, _ = run("_contrib_quantized_concat", [arr(a), arr(a)] + ranges[:2] * 2,
                    num_args=2, dim=0)
    onp.testing.assert_array_equal(out, onp.concatenate([a, a]))
    with pytest.raises(ValueError, match="does not match"):
        run("_contrib_quantized_concat", [arr(a), arr(b)] + ranges, num_args=2, dim=2)


@pytest.mark.parametrize("fix_gamma", [False, True])
def test_quantized_batch_norm(fix_gamma):
    r = rng()
    q = r.integers(-127, 128, (2, 3, 4, 5)).astype(onp.int8)
    gamma, beta = r.uniform(0.5, 2, 3), r.uniform(-1, 1, 3)
    mean, var = r.uniform(-0.5, 0.5, 3), r.uniform(0.5, 2, 3)
    params = [arr(v.astype(onp.float32)) for v in (gamma, beta, mean, var)]
    g = onp.ones(3) if fix_gamma else gamma.astype(onp.float32).astype(onp.float64)
    x = q * (3.0 / 127)
    shape = (1, 3, 1, 1)
    real = (x - mean.astype(onp.float32).reshape(shape)) / onp.sqrt(
        var.astype(onp.float32).reshape(shape) + 1e-3) * g.reshape(shape) + \
        beta.astype(onp.float32).reshape(shape)
    out, lo, hi = run("_contrib_quantized_batch_norm", [arr(q)] + params +
                      [arr([-3.0]), arr([3.0])], fix_gamma=fix_gamma, min_calib_range=-4.0,
                      max_calib_range=4.0)
    assert out.dtype == onp.int8 and hi.tolist() == [4.0]
    assert onp.abs(out - quantize_ref(real, -4.0, 4.0, 127)).max() <= 1
    out, lo, hi = run("_contrib_quantized_batch_norm", [arr(q)] + params +
                      [arr([-3.0]), arr([3.0])], fix_gamma=fix_gamma)
    assert out.dtype == onp.int32 and hi[0] >= onp.abs(real).max()
    onp.testing.assert_allclose(out * (hi[0] / I32), real, atol=1e-6)
    with pytest.raises(ValueError, match="non-finite"):
        run("_contrib_quantized_batch_norm", [arr(q)] + params[:3] +
            [arr(-onp.ones(3, onp.float32))] + [arr([-3.0]), arr([3.0])], eps=0.0)
