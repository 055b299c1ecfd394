"""MXNet 2's npx sequence, masking and shape-like routines (numpy_extension/_sequence.py) and
npx.stop_gradient: MXNet's documented examples, NumPy references, central-difference
gradients, hybridization, and typed errors."""
import numpy as onp
import pytest

from ndx import autograd, gluon, np, npx
from test_products import _numeric_grad_check

R = onp.random.default_rng(54)

# MXNet's SequenceMask / SequenceReverse example: (max_len 3, batch 2, 3 features)
X = onp.arange(1, 19, dtype=onp.float32).reshape(3, 2, 3)
# MXNet's SequenceLast example: (3, 3, 3)
Y = onp.arange(1, 28, dtype=onp.float32).reshape(3, 3, 3)


def _eq(got, want):
    onp.testing.assert_array_equal(got.asnumpy(), onp.asarray(want, dtype=got.asnumpy().dtype))


def test_sequence_mask_is_mxnets_example():
    x = np.array(X)
    _eq(npx.sequence_mask(x), X)  # without lengths: every sequence is full
    _eq(npx.sequence_mask(x, np.array([1.0, 1.0]), use_sequence_length=True),
        [[[1, 2, 3], [4, 5, 6]], [[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0]]])
    _eq(npx.sequence_mask(x, np.array([2, 3]), use_sequence_length=True, value=1),
        [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]], [[1, 1, 1], [16, 17, 18]]])
    # axis=1: (batch, max_len, ...); the same mask, transposed
    got = npx.sequence_mask(np.array(X.transpose(1, 0, 2)), np.array([2, 3]),
                            use_sequence_length=True, value=-5.0, axis=1)
    want = X.copy()
    want[2, 0] = -5
    _eq(got, want.transpose(1, 0, 2))


def test_sequence_last_is_mxnets_example():
    y = np.array(Y)
    _eq(npx.sequence_last(y), [[19, 20, 21], [22, 23, 24], [25, 26, 27]])
    _eq(npx.sequence_last(y, np.array([1, 1, 1]), use_sequence_length=True),
        [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    _eq(npx.sequence_last(y, np.array([1, 2, 3]), use_sequence_length=True),
        [[1, 2, 3], [13, 14, 15], [25, 26, 27]])
    _eq(npx.sequence_last(np.array(Y.transpose(1, 0, 2)), np.array([1, 2, 3]),
                          use_sequence_length=True, axis=1),
        [[1, 2, 3], [13, 14, 15], [25, 26, 27]])


def test_sequence_reverse_is_mxnets_example():
    x = np.array(X)
    _eq(npx.sequence_reverse(x), X[::-1])
    _eq(npx.sequence_reverse(x, np.array([2, 2]), use_sequence_length=True),
        [[[7, 8, 9], [10, 11, 12]], [[1, 2, 3], [4, 5, 6]], [[13, 14, 15], [16, 17, 18]]])
    _eq(npx.sequence_reverse(x, np.array([2, 3]), use_sequence_length=True),
        [[[7, 8, 9], [16, 17, 18]], [[1, 2, 3], [10, 11, 12]], [[13, 14, 15], [4, 5, 6]]])


def _masked_softmax_ref(x, mask, axis, t=1.0):
    z = onp.where(mask, x / t, -onp.inf)
    top = onp.max(z, axis=axis, keepdims=True)
    top = onp.where(onp.isfinite(top), top, 0)
    e = onp.where(mask, onp.exp(z - top), 0)
    s = e.sum(axis=axis, keepdims=True)
    return onp.where(mask, e / onp.where(s > 0, s, 1), 0)


def test_masked_softmax_is_mxnets_example_and_numpys_formula():
    mask = np.array([1, 0, 1, 0, 1])
    onp.testing.assert_allclose(npx.masked_softmax(np.arange(5.0), mask).asnumpy(),
                                [0.01587624, 0, 0.11731042, 0, 0.8668133], rtol=1e-6)
    onp.testing.assert_allclose(
        npx.masked_softmax(np.arange(10.0).reshape(2, 5), mask, axis=0).asnumpy(),
        [[0.00669285, 0, 0.00669285, 0, 0.00669285], [0.9933072, 0, 0.9933072, 0, 0.9933072]],
        rtol=1e-6)
    got = npx.masked_log_softmax(np.arange(5.0), mask).asnumpy()
    # (MXNet's printed float32 values are 3e-6 off the exact ones, -4 - log(1 + e^-2 + e^-4)...)
    onp.testing.assert_allclose(got, [-4.1429286, -onp.inf, -2.1429286, -onp.inf, -0.14292854],
                                atol=5e-6)
    exact = onp.log(1 + onp.exp(-2.0) + onp.exp(-4.0))
    onp.testing.assert_allclose(got, [-4 - exact, -onp.inf, -2 - exact, -onp.inf, -exact],
                                rtol=1e-6)
    x = R.standard_normal((3, 4, 5))
    m = R.random((3, 1, 5)) > 0.4  # broadcast over axis 1
    m[0, 0] = False  # a row with nothing kept: zeros (log: -inf)
    for axis in (-1, 1):
        got = npx.masked_softmax(np.array(x), np.array(m), axis=axis, temperature=2.0)
        onp.testing.assert_allclose(got.asnumpy(), _masked_softmax_ref(x, m, axis, 2.0),
                                    rtol=1e-12, atol=1e-15)
        with onp.errstate(divide="ignore"):
            want = onp.log(_masked_softmax_ref(x, m, axis, 2.0))
        got = npx.masked_log_softmax(np.array(x), np.array(m), axis=axis, temperature=2.0)
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    assert npx.masked_softmax(np.array(x), np.array(m), dtype="float32").dtype == onp.float32


def _softmax_rows_ref(x, lengths, axis, t, log):
    """MXNet's softmax with length: each row's first lengths entries, 0 past them."""
    x = onp.moveaxis(x / t, axis, -1)
    out = onp.zeros_like(x)
    for row in onp.ndindex(x.shape[:-1]):
        n = int(lengths[row])
        z = x[row][:n] - x[row][:n].max() if n else x[row][:0]
        lse = onp.log(onp.exp(z).sum()) if n else 0.0
        out[row][:n] = z - lse if log else onp.exp(z - lse)
    return onp.moveaxis(out, -1, axis)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_length_temperature_and_dtype_are_mxnets(log):
    fn = npx.log_softmax if log else npx.softmax
    x = R.standard_normal((3, 5, 4))
    cases = ((-1, onp.array([[1, 4, 2, 0, 3]] * 3)), (1, onp.array([[5, 1, 3, 2]] * 3)))
    for axis, lengths in cases:
        got = fn(np.array(x), axis=axis, length=np.array(lengths.astype("float32")),
                 use_length=True, temperature=0.5)
        onp.testing.assert_allclose(got.asnumpy(), _softmax_rows_ref(x, lengths, axis, 0.5, log),
                                    rtol=1e-12, atol=1e-15)
    want = (onp.log if log else (lambda v: v))(_masked_softmax_ref(x, onp.ones(x.shape, bool), 0,
                                                                   2.0))
    onp.testing.assert_allclose(fn(np.array(x), axis=0, temperature=2.0).asnumpy(), want,
                                rtol=1e-12)
    got = fn(np.array(x.astype("float32")), dtype="float64")
    assert got.dtype == onp.float64
    out = np.zeros(x.shape, dtype="float64")
    assert fn(np.array(x), temperature=3.0, out=out) is out
    onp.testing.assert_allclose(out.asnumpy(), fn(np.array(x / 3.0)).asnumpy(), rtol=1e-12)


def test_reshape_like_and_broadcast_like_are_mxnets_examples():
    assert npx.reshape_like(np.zeros((30, 12)), np.zeros((4, 2, 2, 3)), lhs_begin=-1,
                            rhs_begin=1).shape == (30, 2, 2, 3)
    assert npx.reshape_like(np.zeros((30, 7)), np.zeros((15, 2, 4)), lhs_begin=0, lhs_end=1,
                            rhs_begin=0, rhs_end=2).shape == (15, 2, 7)
    assert npx.reshape_like(np.zeros((3, 5)), np.zeros((1, 15, 4)), lhs_begin=0, lhs_end=2,
                            rhs_begin=1, rhs_end=2).shape == (15,)
    a = onp.arange(6.0)
    _eq(npx.reshape_like(np.array(a), np.zeros((2, 3))), a.reshape(2, 3))
    _eq(npx.broadcast_like(np.array([[1.0, 2, 3]]), np.zeros((2, 3))), [[1, 2, 3], [1, 2, 3]])
    _eq(npx.broadcast_like(np.array([9.0]), np.arange(5.0), lhs_axes=(0,), rhs_axes=(-1,)),
        [9, 9, 9, 9, 9])
    _eq(npx.broadcast_like(np.ones((2, 1, 1)), np.zeros((4, 5)), lhs_axes=(1, 2),
                           rhs_axes=(1, 0)), onp.ones((2, 5, 4)))


def test_arange_like_batch_flatten_shape_array_cast_nonzero_add_n():
    x = np.array([[1.0, 2, 3, 4], [5, 6, 7, 8]])
    _eq(npx.arange_like(x), [[0, 1, 2, 3], [4, 5, 6, 7]])
    _eq(npx.arange_like(x, axis=-1), [0, 1, 2, 3])
    _eq(npx.arange_like(x, start=1, step=2, repeat=2), [[1, 1, 3, 3], [5, 5, 7, 7]])
    assert npx.arange_like(np.zeros((2, 3), dtype="int32")).dtype == onp.int32
    assert npx.arange_like(np.zeros((0, 3))).shape == (0, 3)
    _eq(npx.batch_flatten(np.array(onp.arange(24.0).reshape(2, 3, 4))),
        onp.arange(24.0).reshape(2, 12))
    assert npx.batch_flatten(np.zeros((0, 3, 2))).shape == (0, 6)
    assert npx.batch_flatten(np.zeros((4,))).shape == (4, 1)
    got = npx.shape_array(np.zeros((2, 0, 5)))
    assert got.dtype == onp.int64 and got.asnumpy().tolist() == [2, 0, 5]
    assert npx.cast(np.array([1.7, -2.2]), "int32").asnumpy().tolist() == [1, -2]
    a = onp.array([[0, 3, 0], [1, 0, 2]])
    _eq(npx.nonzero(np.array(a)), onp.argwhere(a))
    _eq(npx.add_n(np.ones(3), np.array([1.0, 2, 3]), np.full(3, 2.0)), [4, 5, 6])


def test_smooth_l1_box_iou_and_stop_gradient_by_hand():
    # sigma = 2: 0.5 * 4 x^2 where |x| < 1/4, else |x| - 1/8
    onp.testing.assert_allclose(
        npx.smooth_l1(np.array([-1.0, -0.125, 0.0, 0.2, 3.0]), 2.0).asnumpy(),
        [0.875, 0.03125, 0.0, 0.08, 2.875], rtol=1e-6)
    lhs = onp.array([[0.0, 0, 2, 2], [0, 0, 1, 1]])
    rhs = onp.array([[1.0, 1, 3, 3], [0, 0, 2, 2], [5, 5, 6, 6]])
    want = [[1 / 7, 1, 0], [0, 0.25, 0]]
    onp.testing.assert_allclose(npx.box_iou(np.array(lhs), np.array(rhs)).asnumpy(), want,
                                rtol=1e-12)
    centers = onp.concatenate([(lhs[:, :2] + lhs[:, 2:]) / 2, lhs[:, 2:] - lhs[:, :2]], 1)
    rcenters = onp.concatenate([(rhs[:, :2] + rhs[:, 2:]) / 2, rhs[:, 2:] - rhs[:, :2]], 1)
    onp.testing.assert_allclose(
        npx.box_iou(np.array(centers), np.array(rcenters), format="center").asnumpy(), want,
        rtol=1e-12)
    assert npx.box_iou(np.zeros((2, 3, 4)), np.zeros((5, 4))).shape == (2, 3, 5)
    x = np.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = (npx.stop_gradient(x) * x).sum()
    y.backward()
    _eq(x.grad, [1, -2, 3])  # d/dx of c * x with c held: c, the values of x


# Interleaved attention: an einsum over the 5-d layout (seq, batch, heads, parts, dim) as
# the reference, independent of the reshape / transpose / matmul the functions use.
def _qk_ref(q, k):
    s = onp.einsum("ibhd,jbhd->bhij", q, k) / onp.sqrt(q.shape[-1])
    return s.reshape(-1, q.shape[0], k.shape[0])


def _valatt_ref(att, v):
    seq_k, batch, heads, dim = v.shape
    a = att.reshape(batch, heads, -1, seq_k)
    return onp.einsum("bhij,jbhd->ibhd", a, v).reshape(a.shape[2], batch, heads * dim)


def test_interleaved_attention_matches_an_einsum():
    seq, batch, heads, dim, seq_q = 5, 2, 3, 4, 6
    qkv = R.standard_normal((seq, batch, heads * 3 * dim))
    x = qkv.reshape(seq, batch, heads, 3, dim)
    got = npx.interleaved_matmul_selfatt_qk(np.array(qkv), heads=heads)
    onp.testing.assert_allclose(got.asnumpy(), _qk_ref(x[:, :, :, 0], x[:, :, :, 1]),
                                rtol=1e-12)
    att = R.random((batch * heads, seq, seq))
    got = npx.interleaved_matmul_selfatt_valatt(np.array(qkv), np.array(att), heads=heads)
    onp.testing.assert_allclose(got.asnumpy(), _valatt_ref(att, x[:, :, :, 2]), rtol=1e-12)
    queries = R.standard_normal((seq_q, batch, heads * dim))
    kv = R.standard_normal((seq, batch, heads * 2 * dim))
    y = kv.reshape(seq, batch, heads, 2, dim)
    got = npx.interleaved_matmul_encdec_qk(np.array(queries), np.array(kv), heads=heads)
    onp.testing.assert_allclose(
        got.asnumpy(), _qk_ref(queries.reshape(seq_q, batch, heads, dim), y[:, :, :, 0]),
        rtol=1e-12)
    att = R.random((batch * heads, seq_q, seq))
    got = npx.interleaved_matmul_encdec_valatt(np.array(kv), np.array(att), heads=heads)
    onp.testing.assert_allclose(got.asnumpy(), _valatt_ref(att, y[:, :, :, 1]), rtol=1e-12)
    assert got.shape == (seq_q, batch, heads * dim)  # MXNet's shape rule


def _f64(*shapes):
    return [R.standard_normal(s) for s in shapes]


LENGTHS = np.array([2, 3])


@pytest.mark.parametrize("name, fn, shapes", [
    ("sequence_mask", lambda x: npx.sequence_mask(x, LENGTHS, True, value=-1.0), [(3, 2, 2)]),
    ("sequence_mask-full", lambda x: npx.sequence_mask(x), [(3, 2)]),  # identity
    ("sequence_last", lambda x: npx.sequence_last(x, LENGTHS, True), [(3, 2, 2)]),
    ("sequence_last-full", lambda x: npx.sequence_last(x, axis=1), [(2, 3)]),
    ("sequence_reverse-full", lambda x: npx.sequence_reverse(x), [(3, 2)]),
    ("sequence_reverse", lambda x: npx.sequence_reverse(x, LENGTHS, True), [(3, 2, 2)]),
    ("masked_softmax", lambda x: npx.masked_softmax(
        x, np.array([[1, 0, 1, 1], [1, 1, 0, 1]]), temperature=0.7), [(2, 4)]),
    ("masked_log_softmax", lambda x: np.where(np.array([[1, 0, 1, 1]], dtype=bool),
                                              npx.masked_log_softmax(
                                                  x, np.array([[1, 0, 1, 1]])), 0), [(3, 4)]),
    ("softmax-length", lambda x: npx.softmax(x, length=np.array([2, 4, 3]), use_length=True,
                                              temperature=1.5), [(3, 4)]),
    ("log_softmax-length", lambda x: npx.log_softmax(x, axis=0, length=np.array([1, 3]),
                                                      use_length=True), [(3, 2)]),
    ("reshape_like", lambda x: npx.reshape_like(x, np.zeros((3, 4))), [(2, 6)]),
    ("broadcast_like", lambda x: npx.broadcast_like(x, np.zeros((3, 4)), 0, 0), [(1, 4)]),
    ("smooth_l1", lambda x: npx.smooth_l1(x * 3, 0.5), [(7,)]),
    ("box_iou", lambda a: npx.box_iou(
        a * 0.1 + np.array([0.0, 0, 2, 2]), np.array([[1.0, 1, 3, 3], [0.5, -1, 1.5, 1]])),
     [(2, 4)]),
    ("add_n", lambda a, b: npx.add_n(a, b, a), [(2, 3), (3,)]),
    ("add_n-one", lambda a: npx.add_n(a), [(2,)]),
    ("selfatt_qk", lambda x: npx.interleaved_matmul_selfatt_qk(x, heads=2), [(3, 2, 12)]),
    ("selfatt_valatt", lambda x, a: npx.interleaved_matmul_selfatt_valatt(x, a, 2),
     [(3, 1, 6), (2, 3, 3)]),
    ("encdec_qk", lambda q, kv: npx.interleaved_matmul_encdec_qk(q, kv, 2), [(2, 1, 4), (3, 1, 8)]),
    ("encdec_valatt", lambda kv, a: npx.interleaved_matmul_encdec_valatt(kv, a, 2),
     [(3, 1, 8), (2, 2, 3)]),
])
def test_gradients_against_central_differences(name, fn, shapes):
    _numeric_grad_check(fn, _f64(*shapes))


class _Attention(gluon.HybridBlock):
    def forward(self, x, lengths):
        masked = npx.sequence_mask(x, lengths, use_sequence_length=True, axis=1)
        keep = npx.sequence_mask(np.ones_like(x), lengths, use_sequence_length=True, axis=1)
        w = npx.masked_softmax(masked, keep, axis=1)
        return npx.stop_gradient(w) * npx.reshape_like(x, w) + npx.arange_like(x, 1, 0.5, 3)


def test_a_hybridized_block_gives_the_same_values():
    x, lengths = np.array(R.standard_normal((2, 5, 3))), np.array([3.0, 5.0])
    block = _Attention()
    want = block(x, lengths).asnumpy()
    block.hybridize()
    onp.testing.assert_allclose(block(x, lengths).asnumpy(), want, rtol=1e-6)
    onp.testing.assert_allclose(block(x, lengths).asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("call, error, match", [
    (lambda: npx.sequence_mask(np.ones(3)), ValueError, "sequence and a batch axis"),
    (lambda: npx.sequence_mask(np.ones((3, 2)), axis=2), ValueError, "axis .* 0 or 1"),
    (lambda: npx.sequence_mask(np.ones((3, 2)), use_sequence_length=True), ValueError,
     "needs sequence_length"),
    (lambda: npx.sequence_mask(np.ones((3, 2)), np.ones(3), True), ValueError, r"shape \(2,\)"),
    (lambda: npx.sequence_mask(np.ones((3, 2)), np.ones(2, dtype=bool), True), TypeError,
     "real numbers"),
    (lambda: npx.sequence_mask(np.ones((3, 2)), value="x"), TypeError, "value"),
    (lambda: npx.sequence_last(np.ones((0, 2))), ValueError, "no steps"),
    (lambda: npx.masked_softmax(np.ones((2, 3)), np.ones((3, 3))), ValueError, "broadcast"),
    (lambda: npx.masked_softmax(np.ones((2, 3)), np.ones(3), axis=2), ValueError, "axis"),
    (lambda: npx.masked_softmax(np.ones(3), np.ones(3), temperature=0), ValueError,
     "temperature"),
    (lambda: npx.masked_softmax(np.array(1.0), np.array(True)), ValueError, "1 dimension"),
    (lambda: npx.reshape_like(np.ones((2, 3)), np.ones((4, 2))), ValueError, "6 elements"),
    (lambda: npx.reshape_like(np.ones((2, 3)), np.ones(6), lhs_begin=3), ValueError, "range"),
    (lambda: npx.broadcast_like(np.ones((2, 3)), np.ones((3, 3))), ValueError, "broadcast"),
    (lambda: npx.broadcast_like(np.ones((2, 1)), np.ones(3), lhs_axes=(1,)), ValueError,
     "both"),
    (lambda: npx.broadcast_like(np.ones((2, 1)), np.ones(3), (0,), (0,)), ValueError,
     "only size 1"),
    (lambda: npx.arange_like(np.ones(3), repeat=0), ValueError, "repeat"),
    (lambda: npx.arange_like(np.array(1.0), axis=0), ValueError, "axis"),
    (lambda: npx.batch_flatten(np.array(1.0)), ValueError, "1 dimension"),
    (lambda: npx.smooth_l1(np.ones(2), 0), ValueError, "non-zero"),
    (lambda: npx.box_iou(np.ones((2, 3)), np.ones((2, 4))), ValueError, "4 box coordinates"),
    (lambda: npx.box_iou(np.ones(4), np.ones(4), format="xywh"), ValueError, "format"),
    (lambda: npx.add_n(), ValueError, "at least one"),
    (lambda: npx.interleaved_matmul_selfatt_qk(np.ones((2, 3)), 1), ValueError, "3-d"),
    (lambda: npx.interleaved_matmul_selfatt_qk(np.ones((2, 1, 7)), 2), ValueError, "split"),
    (lambda: npx.interleaved_matmul_selfatt_qk(np.ones((2, 1, 6)), 0), ValueError, "heads"),
    (lambda: npx.interleaved_matmul_selfatt_valatt(np.ones((2, 1, 6)), np.ones((2, 2, 3)), 2),
     ValueError, "attention must have shape"),
    (lambda: npx.interleaved_matmul_encdec_qk(np.ones((2, 1, 4)), np.ones((3, 2, 8)), 2),
     ValueError, "differ"),
    (lambda: npx.softmax(np.ones((2, 3)), use_length=True), ValueError, "needs the length"),
    (lambda: npx.softmax(np.ones((2, 3)), length=np.ones(3), use_length=True), ValueError,
     r"without the axis, \(2,\)"),
    (lambda: npx.log_softmax(np.ones((2, 3)), temperature=0.0), ValueError, "temperature"),
    (lambda: npx.softmax(np.ones((2, 3)), temperature="hot"), TypeError, "temperature"),
    (lambda: npx.stop_gradient(np.ones(2, dtype=bool)), TypeError, "bool"),
])
def test_bad_arguments_raise_typed_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
