"""Gluon losses (MXNet 2.0's mxnet.gluon.loss) against NumPy implementations of their
documented formulas (several shapes, batch axes, weights and sample weights), hybridized
against imperative, gradients against central differences; npx.ctc_loss / CTCLoss against a
brute-force sum over every alignment, and their typed errors."""
import itertools

import numpy as onp
import pytest

from ndx import autograd, gluon, np, npx
from ndx.gluon import loss as gloss
from ndx.test_utils import check_numeric_gradient

RTOL, ATOL = 1e-5, 1e-6


# ------------------------------------------------------------------- NumPy references
def _logaddexp0(x):
    return onp.logaddexp(0.0, x)


def _log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - onp.log(onp.exp(x - m).sum(axis=axis, keepdims=True))


def _reduce_but(fn, loss, batch_axis):
    axes = tuple(i for i in range(loss.ndim) if i != batch_axis % loss.ndim)
    return fn(loss, axis=axes) if axes else loss


def _finish(elem, weight, sample_weight, batch_axis, reduce=True):
    """MXNet's _apply_weighting, then the mean over every axis but the batch axis."""
    if sample_weight is not None:
        elem = elem * sample_weight
    if weight is not None:
        elem = elem * weight
    return _reduce_but(onp.mean, elem, batch_axis) if reduce else elem


def _f64(*arrays):
    return [onp.asarray(a, dtype=onp.float64) for a in arrays]


# Elementwise losses: (name, constructor kwargs, label kind, pred kind, reference of the
# elementwise loss before weighting).
def _huber(p, lab, rho):
    d = onp.abs(lab - p)
    return onp.where(d > rho, d - rho / 2, d * d / (2 * rho))


def _bce_logits(p, z, pw=1.0):
    log_p, log_not_p = -_logaddexp0(-p), -_logaddexp0(p)  # log sigmoid(p), log(1 - sigmoid(p))
    return -(z * log_p * pw + (1 - z) * log_not_p)


def _bce_probs(p, z, pw=1.0):
    return -(z * onp.log(p + 1e-12) * pw + (1 - z) * onp.log(1 - p + 1e-12))


def _poisson(p, t, from_logits=True, full=False):
    loss = onp.exp(p) - t * p if from_logits else p - t * onp.log(p + 1e-8)
    if full:
        with onp.errstate(divide="ignore", invalid="ignore"):
            stirling = t * onp.log(t) - t + 0.5 * onp.log(2 * onp.pi * t)
        loss = loss + onp.where(t > 1, stirling, 0.0)
    return loss


ELEMENTWISE = [
    ("L2Loss", {}, "real", "real", lambda p, lab: 0.5 * (lab - p) ** 2),
    ("L1Loss", {}, "real", "real", lambda p, lab: onp.abs(lab - p)),
    ("HuberLoss", {}, "real", "real", lambda p, lab: _huber(p, lab, 1.0)),
    ("HuberLoss", {"rho": 0.4}, "real", "real", lambda p, lab: _huber(p, lab, 0.4)),
    ("HingeLoss", {}, "signed", "real", lambda p, lab: onp.maximum(0, 1 - p * lab)),
    ("HingeLoss", {"margin": 0.5}, "signed", "real", lambda p, lab: onp.maximum(0, .5 - p * lab)),
    ("SquaredHingeLoss", {}, "signed", "real", lambda p, lab: onp.maximum(0, 1 - p * lab) ** 2),
    ("SquaredHingeLoss", {"margin": 2}, "signed", "real",
     lambda p, lab: onp.maximum(0, 2 - p * lab) ** 2),
    ("LogisticLoss", {}, "signed", "real", lambda p, lab: _logaddexp0(-p * lab)),
    ("LogisticLoss", {"label_format": "binary"}, "binary", "real",
     lambda p, lab: _logaddexp0(-p * (2 * lab - 1))),
    ("SigmoidBinaryCrossEntropyLoss", {}, "unit", "real", _bce_logits),
    ("SigmoidBinaryCrossEntropyLoss", {"from_sigmoid": True}, "unit", "prob", _bce_probs),
    ("KLDivLoss", {}, "prob", "logprob", lambda p, lab: lab * (onp.log(lab + 1e-12) - p)),
    ("PoissonNLLLoss", {}, "count", "real", _poisson),
    ("PoissonNLLLoss", {"from_logits": False}, "count", "prob",
     lambda p, t: _poisson(p, t, from_logits=False)),
    ("PoissonNLLLoss", {"compute_full": True}, "count", "real",
     lambda p, t: _poisson(p, t, full=True)),
]

SHAPES = [(5,), (4, 3), (3, 2, 4)]


def _values(kind, shape, rng):
    if kind == "real":
        return rng.uniform(-2, 2, size=shape)
    if kind == "signed":
        return rng.choice([-1.0, 1.0], size=shape)
    if kind == "binary":
        return rng.choice([0.0, 1.0], size=shape)
    if kind == "unit":
        return rng.uniform(0, 1, size=shape)
    if kind == "prob":
        return rng.uniform(0.05, 0.95, size=shape)
    if kind == "logprob":
        return onp.log(rng.uniform(0.05, 0.95, size=shape))
    if kind == "count":
        return rng.integers(0, 6, size=shape).astype(onp.float64)
    raise ValueError(kind)


def _cases():
    for (name, kw, lkind, pkind, ref), shape in itertools.product(ELEMENTWISE, SHAPES):
        for batch_axis in range(min(len(shape), 2)):
            for weighted in (False, True):
                tag = "-".join([name, ",".join(f"{k}={v}" for k, v in kw.items()) or "default",
                                str(shape), f"axis{batch_axis}", "w" if weighted else "unw"])
                yield pytest.param(name, kw, lkind, pkind, ref, shape, batch_axis, weighted,
                                   id=tag)


def _sample_weight(shape, batch_axis, rng):
    """A per-sample weight broadcast along every axis but the batch axis."""
    sw_shape = tuple(s if i == batch_axis else 1 for i, s in enumerate(shape))
    return rng.uniform(0.5, 2, size=sw_shape)


@pytest.mark.parametrize("name,kw,lkind,pkind,ref,shape,batch_axis,weighted", list(_cases()))
def test_elementwise_loss_matches_numpy(name, kw, lkind, pkind, ref, shape, batch_axis,
                                        weighted):
    rng = onp.random.default_rng(len(name) * 31 + len(shape) * 7 + batch_axis)
    pred, label = _values(pkind, shape, rng), _values(lkind, shape, rng)
    weight = 0.7 if weighted else None
    sw = _sample_weight(shape, batch_axis, rng) if weighted else None
    kwargs = dict(kw, batch_axis=batch_axis)
    if weighted:
        kwargs["weight"] = weight
    loss_fn = getattr(gloss, name)(**kwargs)
    args = [np.array(pred, dtype="float32"), np.array(label, dtype="float32")]
    if weighted:
        args.append(np.array(sw, dtype="float32"))
    got = loss_fn(*args)
    p32, l32 = _f64(pred.astype(onp.float32), label.astype(onp.float32))
    sw32 = None if sw is None else sw.astype(onp.float32).astype(onp.float64)
    # L2Loss scales by weight / 2 with weight 1 by default: its reference already halves.
    eff_weight = weight if name != "L2Loss" or weighted else None
    want = _finish(ref(p32, l32), eff_weight, sw32, batch_axis)
    assert got.shape == (shape[batch_axis],) and got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_label_may_have_another_shape_with_the_same_size():
    pred = onp.random.default_rng(0).uniform(-1, 1, size=(4, 3))
    label = onp.random.default_rng(1).uniform(-1, 1, size=(4, 3))
    got = gloss.L1Loss()(np.array(pred), np.array(label.reshape(12)))
    onp.testing.assert_allclose(got.asnumpy(), onp.abs(label - pred).mean(axis=1), rtol=RTOL)


def test_integer_labels_keep_the_loss_float32():
    pred = np.array([[0.5, -1.0], [2.0, 0.1]], dtype="float32")
    label = np.array([[1, -1], [-1, 1]], dtype="int32")
    got = gloss.HingeLoss()(pred, label)
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), [(0.5 + 0.0) / 2, (3.0 + 0.9) / 2], rtol=RTOL)


# ----------------------------------------------------------------- SigmoidBCE pos_weight
@pytest.mark.parametrize("from_sigmoid", [False, True])
def test_sigmoid_bce_pos_weight(from_sigmoid):
    rng = onp.random.default_rng(3)
    pred = rng.uniform(0.05, 0.95, size=(4, 3)) if from_sigmoid else rng.uniform(-3, 3, (4, 3))
    label = rng.choice([0.0, 1.0], size=(4, 3))
    pw = rng.uniform(0.5, 3, size=(1, 3))
    sw = rng.uniform(0.5, 2, size=(4, 1))
    got = gloss.SigmoidBCELoss(from_sigmoid=from_sigmoid)(
        np.array(pred), np.array(label), np.array(sw), pos_weight=np.array(pw))
    ref = _bce_probs if from_sigmoid else _bce_logits
    p, lab, w, s = _f64(*(a.astype(onp.float32) for a in (pred, label, pw, sw)))
    onp.testing.assert_allclose(got.asnumpy(), _finish(ref(p, lab, w), None, s, 0), rtol=1e-5)


# ----------------------------------------------------------------------- SoftmaxCE
@pytest.mark.parametrize("shape,axis", [((5, 4), -1), ((3, 4, 2), 1), ((3, 2, 4), -1),
                                        ((2, 3), 0)])
@pytest.mark.parametrize("from_logits", [False, True])
def test_softmax_ce_sparse(shape, axis, from_logits):
    rng = onp.random.default_rng(sum(shape) + axis)
    raw = rng.uniform(-3, 3, size=shape)
    pred = _log_softmax(raw, axis) if from_logits else raw
    ax = axis % len(shape)
    label_shape = tuple(s for i, s in enumerate(shape) if i != ax)
    label = rng.integers(0, shape[ax], size=label_shape)
    batch_axis = 1 if ax == 0 else 0
    got = gloss.SoftmaxCrossEntropyLoss(axis=axis, from_logits=from_logits,
                                        batch_axis=batch_axis)(np.array(pred), np.array(label))
    logp = _log_softmax(raw.astype(onp.float32).astype(onp.float64), axis)
    picked = -onp.take_along_axis(logp, onp.expand_dims(label, ax), axis=ax)
    want = _reduce_but(onp.mean, picked, batch_axis)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_softmax_ce_dense_labels_and_alias():
    rng = onp.random.default_rng(5)
    pred = rng.uniform(-2, 2, size=(4, 5))
    label = rng.uniform(0, 1, size=(4, 5))
    label /= label.sum(axis=1, keepdims=True)
    got = gloss.SoftmaxCELoss(sparse_label=False)(np.array(pred), np.array(label))
    p, lab = _f64(pred.astype(onp.float32), label.astype(onp.float32))
    want = -(lab * _log_softmax(p, -1)).sum(axis=1)  # keepdims axis of size 1: its mean
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    assert gloss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss


def test_softmax_ce_class_weights_through_sample_weight():
    """MXNet weighs classes through sample_weight (broadcast against the (N, 1) loss)."""
    rng = onp.random.default_rng(6)
    pred = rng.uniform(-2, 2, size=(6, 3))
    label = rng.integers(0, 3, size=6)
    class_weight = onp.array([0.2, 1.0, 3.0])
    sw = class_weight[label].reshape(6, 1)
    got = gloss.SoftmaxCrossEntropyLoss(weight=2.0)(np.array(pred), np.array(label),
                                                    sample_weight=np.array(sw))
    p = pred.astype(onp.float32).astype(onp.float64)
    want = -_log_softmax(p, 1)[onp.arange(6), label] * class_weight[label] * 2.0
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


def test_softmax_ce_accepts_labels_with_the_class_axis_kept():
    rng = onp.random.default_rng(7)
    pred = rng.uniform(-2, 2, size=(4, 3))
    label = rng.integers(0, 3, size=(4, 1))
    got = gloss.SoftmaxCrossEntropyLoss()(np.array(pred), np.array(label))
    want = -_log_softmax(pred.astype(onp.float32).astype(onp.float64), 1)[onp.arange(4),
                                                                            label[:, 0]]
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("axis", [-1, 0])
def test_kldiv_from_unnormalized_predictions(axis):
    rng = onp.random.default_rng(8)
    pred = rng.uniform(-2, 2, size=(3, 4))
    label = rng.uniform(0.05, 1, size=(3, 4))
    got = gloss.KLDivLoss(from_logits=False, axis=axis)(np.array(pred), np.array(label))
    p, lab = _f64(pred.astype(onp.float32), label.astype(onp.float32))
    want = (lab * (onp.log(lab + 1e-12) - _log_softmax(p, axis))).mean(axis=1)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


# ------------------------------------------------------------- Triplet, Cosine, SDML
@pytest.mark.parametrize("shape,batch_axis", [((4, 3), 0), ((3, 2, 4), 0), ((3, 5), 1)])
@pytest.mark.parametrize("margin", [1, 0.2])
def test_triplet_loss(shape, batch_axis, margin):
    rng = onp.random.default_rng(len(shape) + batch_axis)
    pred, pos, neg = (rng.uniform(-1, 1, size=shape) for _ in range(3))
    sw = rng.uniform(0.5, 2, size=(shape[batch_axis],))
    got = gloss.TripletLoss(margin=margin, weight=0.5, batch_axis=batch_axis)(
        np.array(pred), np.array(pos), np.array(neg), np.array(sw))
    p, a, b, s = _f64(*(x.astype(onp.float32) for x in (pred, pos, neg, sw)))
    want = onp.maximum(_reduce_but(onp.sum, (a - p) ** 2 - (b - p) ** 2, batch_axis) + margin,
                       0) * s * 0.5
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("margin", [0, 0.3])
def test_cosine_embedding_loss(margin):
    rng = onp.random.default_rng(9)
    x1, x2 = rng.uniform(-1, 1, size=(6, 4)), rng.uniform(-1, 1, size=(6, 4))
    x2[0] = x1[0] * 2  # cos = 1
    label = onp.array([1, -1, 1, -1, -1, 1])
    got = gloss.CosineEmbeddingLoss(margin=margin)(np.array(x1), np.array(x2), np.array(label))
    a, b = _f64(x1.astype(onp.float32), x2.astype(onp.float32))
    cos = (a * b).sum(1) / onp.maximum(onp.linalg.norm(a, axis=1) * onp.linalg.norm(b, axis=1),
                                       1e-12)
    want = onp.where(label == 1, 1 - cos, onp.maximum(cos - margin, 0))
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_sdml_loss():
    rng = onp.random.default_rng(10)
    x1, x2 = rng.uniform(-1, 1, size=(4, 3)), rng.uniform(-1, 1, size=(4, 3))
    got = gloss.SDMLLoss(smoothing_parameter=0.3)(np.array(x1), np.array(x2))
    a, b = _f64(x1.astype(onp.float32), x2.astype(onp.float32))
    dist = ((a[:, None, :] - b[None, :, :]) ** 2).sum(2)
    logp = _log_softmax(-dist, 1)
    labels = onp.where(onp.eye(4) > 0, 0.7, 0.3 / 3)
    want = (labels * (onp.log(labels + 1e-12) - logp)).mean(1)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ hybridize == imperative
def _hybrid_cases():
    rng = onp.random.default_rng(11)
    real = lambda *s: np.array(rng.uniform(-1, 1, size=s), dtype="float32")  # noqa: E731
    sw = np.array(rng.uniform(0.5, 2, size=(4, 1)), dtype="float32")
    signed = np.array(rng.choice([-1.0, 1.0], size=(4, 3)), dtype="float32")
    counts = np.array(rng.integers(0, 5, size=(4, 3)), dtype="float32")
    classes = np.array(rng.integers(0, 3, size=(4,)), dtype="int32")
    yield "L2", gloss.L2Loss(), (real(4, 3), real(4, 3)), {"sample_weight": sw}
    yield "Huber", gloss.HuberLoss(rho=0.3), (real(4, 3), real(4, 3)), {}
    yield "Hinge", gloss.HingeLoss(), (real(4, 3), signed), {"sample_weight": None}
    yield "Logistic", gloss.LogisticLoss(), (real(4, 3), signed, sw), {}
    yield "BCE-pos", gloss.SigmoidBCELoss(), (real(4, 3), (signed + 1) / 2), {
        "pos_weight": np.array([[2.0, 0.5, 1.0]], dtype="float32")}
    yield "CE", gloss.SoftmaxCELoss(), (real(4, 3), classes), {"sample_weight": sw}
    yield "KL", gloss.KLDivLoss(from_logits=False), (real(4, 3), real(4, 3) ** 2), {}
    yield "Poisson", gloss.PoissonNLLLoss(compute_full=True), (real(4, 3), counts), {
        "epsilon": 1e-6}
    yield "Triplet", gloss.TripletLoss(), (real(4, 3), real(4, 3), real(4, 3)), {}
    yield "Cosine", gloss.CosineEmbeddingLoss(), (real(4, 3), real(4, 3), signed[:, 0]), {}
    yield "SDML", gloss.SDMLLoss(), (real(4, 3), real(4, 3)), {}
    label = np.array([[0, 1, -1], [2, 2, 1], [1, -1, -1], [0, 0, 0]], dtype="float32")
    yield "CTC", gloss.CTCLoss(), (real(4, 7, 4), label), {}
    yield "CTC-lengths", gloss.CTCLoss(), (real(4, 7, 4), label), {
        "pred_lengths": np.array([7, 5, 6, 7]), "label_lengths": np.array([2, 3, 1, 3])}


@pytest.mark.parametrize("name,loss_fn,args,kwargs", list(_hybrid_cases()),
                         ids=[c[0] for c in _hybrid_cases()])
def test_hybridized_equals_imperative(name, loss_fn, args, kwargs):
    want = loss_fn(*args, **kwargs)
    loss_fn.hybridize()
    got = loss_fn(*args, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)
    # a second call replays the captured graph
    onp.testing.assert_allclose(loss_fn(*args, **kwargs).asnumpy(), want.asnumpy(), rtol=1e-6,
                                atol=1e-7)


def test_hybridized_loss_keeps_a_graph_per_set_of_optional_inputs():
    rng = onp.random.default_rng(12)
    pred = np.array(rng.uniform(-1, 1, size=(4, 3)), dtype="float32")
    label = np.array(rng.uniform(-1, 1, size=(4, 3)), dtype="float32")
    sw = np.array(rng.uniform(0.5, 2, size=(4, 1)), dtype="float32")
    loss_fn = gloss.L1Loss()
    loss_fn.hybridize()
    plain = loss_fn(pred, label).asnumpy()
    weighted = loss_fn(pred, label, sample_weight=sw).asnumpy()
    again = loss_fn(pred, label, None).asnumpy()
    d = onp.abs(label.asnumpy() - pred.asnumpy())
    onp.testing.assert_allclose(plain, d.mean(1), rtol=1e-6)
    onp.testing.assert_allclose(weighted, (d * sw.asnumpy()).mean(1), rtol=1e-6)
    onp.testing.assert_allclose(again, plain, rtol=1e-6)


def test_hybridized_gradient_equals_imperative():
    rng = onp.random.default_rng(13)
    pred_np = rng.uniform(-1, 1, size=(5, 4))
    label = np.array(rng.integers(0, 4, size=(5,)))
    grads = []
    for hybrid in (False, True):
        loss_fn = gloss.SoftmaxCrossEntropyLoss()
        if hybrid:
            loss_fn.hybridize()
        pred = np.array(pred_np, dtype="float32")
        pred.attach_grad()
        with autograd.record():
            out = loss_fn(pred, label)
        out.backward()
        grads.append(pred.grad.asnumpy())
    onp.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-7)
    p = _log_softmax(pred_np.astype(onp.float32).astype(onp.float64), 1)
    want = onp.exp(p)
    want[onp.arange(5), label.asnumpy()] -= 1  # d(-log softmax[label]) / d pred
    onp.testing.assert_allclose(grads[0], want, rtol=1e-5, atol=1e-6)


# -------------------------------------------------------------- numeric gradients
def _grad_cases():
    rng = onp.random.default_rng(14)
    f64 = lambda a: np.array(a, dtype="float64")  # noqa: E731
    lab = f64(rng.uniform(-1, 1, size=(3, 4)))
    signed = f64(rng.choice([-1.0, 1.0], size=(3, 4)))
    idx = np.array([0, 3, 1])
    dense = f64(onp.full((3, 4), 0.25))
    pw = f64(rng.uniform(0.5, 2, size=(1, 4)))
    yield "Huber", lambda p: gloss.HuberLoss(rho=0.5)(p, lab)
    yield "Logistic", lambda p: gloss.LogisticLoss()(p, signed)
    yield "SquaredHinge", lambda p: gloss.SquaredHingeLoss(margin=2)(p, signed)
    yield "CE-sparse", lambda p: gloss.SoftmaxCELoss()(p, idx)
    yield "CE-dense-axis0", lambda p: gloss.SoftmaxCELoss(sparse_label=False, axis=0)(p, dense)
    yield "BCE-pos_weight", lambda p: gloss.SigmoidBCELoss()(p, (signed + 1) / 2, None, pw)
    yield "KL", lambda p: gloss.KLDivLoss(from_logits=False)(p, dense)
    yield "Poisson-full", lambda p: gloss.PoissonNLLLoss(compute_full=True)(p, lab * 3 + 3)
    yield "Cosine", lambda p: gloss.CosineEmbeddingLoss(margin=0.1)(p, lab, signed[:, 0])
    yield "Triplet", lambda p: gloss.TripletLoss(margin=4)(p, lab, lab * 0.5)


@pytest.mark.parametrize("name,fn", list(_grad_cases()), ids=[c[0] for c in _grad_cases()])
def test_gradient_against_central_differences(name, fn):
    pred = onp.random.default_rng(15).uniform(-1, 1, size=(3, 4))
    check_numeric_gradient(fn, [pred], dtype=onp.float64, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------------- bad input
def test_bad_constructor_arguments_raise_typed_errors():
    with pytest.raises(TypeError, match="weight"):
        gloss.L1Loss(weight="heavy")
    with pytest.raises(TypeError, match="weight"):
        gloss.L2Loss(weight=np.ones(3))
    with pytest.raises(ValueError, match="label_format"):
        gloss.LogisticLoss(label_format="probability")
    with pytest.raises(ValueError, match="rho"):
        gloss.HuberLoss(rho=0)
    with pytest.raises(ValueError, match="layout"):
        gloss.CTCLoss(layout="NCT")
    with pytest.raises(ValueError, match="label_layout"):
        gloss.CTCLoss(label_layout="TT")


def test_bad_inputs_raise_typed_errors():
    x = np.ones((4, 3))
    with pytest.raises(ValueError, match=r"\[L2Loss\] label"):
        gloss.L2Loss()(x, np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"\[SoftmaxCrossEntropyLoss\] sparse label"):
        gloss.SoftmaxCrossEntropyLoss()(x, np.ones((3,)))
    with pytest.raises(ValueError, match="batch_axis"):
        gloss.L1Loss(batch_axis=2)(x, x)
    with pytest.raises(ValueError, match="SDMLLoss"):
        gloss.SDMLLoss()(np.ones((4, 3)), np.ones((3, 3)))


def test_repr_follows_mxnet():
    assert repr(gloss.L1Loss(weight=0.5, batch_axis=1)) == "L1Loss(batch_axis=1, w=0.5)"
    assert gloss.SigmoidBCELoss is gloss.SigmoidBinaryCrossEntropyLoss
    assert isinstance(gloss.HingeLoss(), gluon.HybridBlock)


# ============================================================================== CTC
def _log_softmax_rows(x):
    return _log_softmax(onp.asarray(x, dtype=onp.float64), -1)


def _collapse(path, blank):
    out = []
    prev = None
    for s in path:
        if s != prev and s != blank:
            out.append(s)
        prev = s
    return out


def _ctc_brute_force(data, labels, blank, data_lengths=None):
    """-log of the summed probability of every alignment (all C^T paths) that collapses to
    the label: data (T, N, C), labels a list of N lists."""
    steps, batch, classes = data.shape
    out = []
    for b in range(batch):
        t_len = steps if data_lengths is None else int(data_lengths[b])
        lp = _log_softmax_rows(data[:t_len, b])
        scores = [sum(lp[t, s] for t, s in enumerate(path))
                  for path in itertools.product(range(classes), repeat=t_len)
                  if _collapse(path, blank) == list(labels[b])]
        out.append(-onp.logaddexp.reduce(scores) if scores else onp.inf)
    return onp.array(out)


def _padded(labels, width, pad):
    out = onp.full((len(labels), width), pad, dtype=onp.float32)
    for b, row in enumerate(labels):
        out[b, :len(row)] = row
    return out


CTC_LABELS_FIRST = [[1, 2], [2, 2], [3], [], [1, 3, 1]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_loss_first_blank_matches_brute_force(dtype):
    data = onp.random.default_rng(20).uniform(-2, 2, size=(5, 5, 4))
    label = _padded(CTC_LABELS_FIRST, 3, 0)
    got = npx.ctc_loss(np.array(data, dtype=dtype), np.array(label))
    want = _ctc_brute_force(data.astype(dtype), CTC_LABELS_FIRST, blank=0)
    assert got.shape == (5,) and got.dtype == onp.dtype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-10
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)


def test_ctc_loss_last_blank_and_lengths_match_brute_force():
    rng = onp.random.default_rng(21)
    data = rng.uniform(-2, 2, size=(5, 4, 4))
    labels = [[0, 1, 1], [2], [0, 2], [1]]
    label = _padded(labels, 3, -1)
    label[1, 1:] = 0  # padding beyond label_lengths is never read
    lengths = onp.array([5, 2, 4, 1])
    got = npx.ctc_loss(np.array(data), np.array(label), np.array(lengths),
                       np.array([3, 1, 2, 1]), use_data_lengths=True, use_label_lengths=True,
                       blank_label="last")
    want = _ctc_brute_force(data.astype(onp.float32), labels, blank=3, data_lengths=lengths)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_ctc_loss_is_stable_for_large_activations():
    data = onp.random.default_rng(22).uniform(-60, 60, size=(4, 2, 3))
    labels = [[1, 2], [2]]
    got = npx.ctc_loss(np.array(data, dtype="float64"), np.array(_padded(labels, 2, 0)))
    want = _ctc_brute_force(data, labels, blank=0)
    assert onp.all(onp.isfinite(got.asnumpy()))
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10)


def test_ctc_large_batch_runs_in_parallel_and_matches_the_reference():
    """Enough work per call that the batch is split across threads: every sample equals the
    scaled forward recursion of op_table (an implementation of its own) and the same sample
    computed alone."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    from op_table import _ctc_ref

    rng = onp.random.default_rng(27)
    steps, batch, classes = 60, 48, 12
    data = rng.uniform(-3, 3, size=(steps, batch, classes))
    lengths = rng.integers(0, 20, size=batch)
    label = onp.zeros((batch, 20), dtype=onp.int32)
    for b, n in enumerate(lengths):
        label[b, :n] = rng.integers(1, classes, size=n)
    data_lengths = rng.integers(45, steps + 1, size=batch)
    got = npx.ctc_loss(np.array(data, dtype="float64"), np.array(label),
                       np.array(data_lengths), use_data_lengths=True).asnumpy()
    want = _ctc_ref(data, label, data_lengths, use_data_lengths=True)
    onp.testing.assert_allclose(got, want, rtol=1e-9)
    grads = []
    for sl in (slice(None), slice(7, 8)):
        x = np.array(data[:, sl], dtype="float64")
        x.attach_grad()
        with autograd.record():
            out = npx.ctc_loss(x, np.array(label[sl]), np.array(data_lengths[sl]),
                               use_data_lengths=True)
        out.backward()
        grads.append((out.asnumpy(), x.grad.asnumpy()))
    (all_loss, all_grad), (one_loss, one_grad) = grads
    assert one_loss[0] == all_loss[7] == got[7]
    onp.testing.assert_array_equal(one_grad[:, 0], all_grad[:, 7])
    onp.testing.assert_allclose(all_grad.sum(axis=2), 0, atol=1e-12)


def test_ctc_empty_sequences():
    """No time steps and no labels: probability 1, loss 0; a label on no time step fails."""
    got = npx.ctc_loss(np.ones((3, 2, 4)), np.array([[0, 0], [1, 0]]), np.array([0, 3]),
                       use_data_lengths=True)
    want = _ctc_brute_force(onp.ones((3, 2, 4)), [[], [1]], 0, data_lengths=[0, 3])
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="longer than its data"):
        npx.ctc_loss(np.ones((3, 1, 4)), np.array([[1, 0]]), np.array([0]),
                     use_data_lengths=True)


@pytest.mark.parametrize("lengths", [False, True])
def test_ctc_gradient_against_central_differences(lengths):
    rng = onp.random.default_rng(23)
    data = rng.uniform(-1, 1, size=(5, 3, 4))
    label = np.array(_padded([[1, 2, 2], [3], [2, 1]], 3, 0))
    if lengths:
        dl, ll = np.array([5, 2, 4]), np.array([3, 1, 1])
        fn = lambda d: npx.ctc_loss(d, label, dl, ll, use_data_lengths=True,  # noqa: E731
                                    use_label_lengths=True)
    else:
        fn = lambda d: npx.ctc_loss(d, label)  # noqa: E731
    check_numeric_gradient(fn, [data], dtype=onp.float64, rtol=1e-5, atol=1e-7)


def test_ctc_gradient_past_the_data_length_is_zero():
    data = np.array(onp.random.default_rng(24).uniform(-1, 1, size=(6, 2, 3)))
    data.attach_grad()
    with autograd.record():
        loss = npx.ctc_loss(data, np.array([[1, 2], [2, 0]]), np.array([3, 6]),
                            use_data_lengths=True)
    loss.backward()
    g = data.grad.asnumpy()
    assert onp.all(g[3:, 0] == 0) and onp.any(g[:3, 0] != 0) and onp.any(g[3:, 1] != 0)
    # softmax minus posteriors: each time step's gradient sums to zero over the alphabet
    onp.testing.assert_allclose(g.sum(axis=2), 0, atol=1e-6)


@pytest.mark.parametrize("layout,label_layout", [("NTC", "NT"), ("TNC", "NT"), ("NTC", "TN"),
                                                 ("TNC", "TN")])
def test_ctc_loss_block_layouts(layout, label_layout):
    rng = onp.random.default_rng(25)
    tnc = rng.uniform(-2, 2, size=(4, 3, 4))  # blank is channel 3 ('last')
    labels = [[0, 1], [2, 2], [1]]
    label_nt = _padded(labels, 2, -1)
    pred = tnc if layout == "TNC" else tnc.transpose(1, 0, 2)
    label = label_nt if label_layout == "NT" else label_nt.T
    sw = rng.uniform(0.5, 2, size=(3,))
    loss_fn = gloss.CTCLoss(layout=layout, label_layout=label_layout, weight=2.0)
    got = loss_fn(np.array(pred), np.array(label), sample_weight=np.array(sw))
    want = _ctc_brute_force(tnc.astype(onp.float32), labels, blank=3) * sw.astype(
        onp.float32) * 2.0
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_ctc_loss_block_with_lengths_and_gradient():
    rng = onp.random.default_rng(26)
    pred_np = rng.uniform(-1, 1, size=(2, 5, 3))  # NTC, blank 2
    label = np.array([[0, 1, 1], [1, 0, 0]])
    pred_lengths, label_lengths = np.array([5, 3]), np.array([2, 1])
    loss_fn = gloss.CTCLoss()
    got = loss_fn(np.array(pred_np), label, pred_lengths, label_lengths)
    want = _ctc_brute_force(pred_np.transpose(1, 0, 2).astype(onp.float32), [[0, 1], [1]],
                            blank=2, data_lengths=[5, 3])
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    check_numeric_gradient(lambda p: loss_fn(p, label, pred_lengths, label_lengths), [pred_np],
                           dtype=onp.float64, rtol=1e-5, atol=1e-7)


def test_ctc_bad_inputs_raise_typed_errors():
    data = np.ones((3, 2, 4))
    with pytest.raises(ValueError, match="cannot be longer than the data"):
        npx.ctc_loss(data, np.ones((2, 4)))
    with pytest.raises(ValueError, match="longer than its data"):
        npx.ctc_loss(np.ones((2, 1, 4)), np.array([[1, 1]]))  # a repeat needs a blank between
    with pytest.raises(ValueError, match="rank 3"):
        npx.ctc_loss(np.ones((3, 4)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="rank 2"):
        npx.ctc_loss(data, np.ones((2,)))
    with pytest.raises(ValueError, match="batch size"):
        npx.ctc_loss(data, np.ones((3, 2)))
    with pytest.raises(IndexError, match="outside the alphabet"):
        npx.ctc_loss(data, np.array([[1, 4], [1, 0]]))
    with pytest.raises(ValueError, match="data_lengths"):
        npx.ctc_loss(data, np.ones((2, 2)), np.array([4, 1]), use_data_lengths=True)
    with pytest.raises(ValueError, match="data_lengths"):
        npx.ctc_loss(data, np.ones((2, 2)), use_data_lengths=True)
    with pytest.raises(ValueError, match="label_lengths"):
        npx.ctc_loss(data, np.ones((2, 2)), None, np.array([1, 2, 3]), use_label_lengths=True)
    with pytest.raises(TypeError, match="float"):
        npx.ctc_loss(np.ones((3, 2, 4), dtype="int32"), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"\[CTCLoss\] pred"):
        gloss.CTCLoss()(np.ones((3, 4)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="cannot be longer than the data"):
        gloss.CTCLoss()(np.ones((2, 3, 4)), np.ones((2, 5)))  # labels longer than T = 3
