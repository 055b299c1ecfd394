"""gluon.metric against NumPy and hand counts (F1 by counting TP / FP / FN, Pearson by
onp.corrcoef, ...), MXNet's documented examples, accumulation over batches, the
EvalMetric protocol, create(), clip_global_norm, and typed errors for bad input."""
import math
import warnings
from collections import OrderedDict

import numpy as onp
import pytest

import ndx
from ndx import gluon, np
from ndx.gluon import metric
from strict_checks import assert_almost_equal

RNG = onp.random.default_rng(7)


def _probs(n, k):
    e = onp.exp(RNG.normal(size=(n, k)))
    return e / e.sum(axis=1, keepdims=True)


def test_exported_names():
    assert gluon.metric is metric
    # MXNet 1.x's mx.metric: the gluon metric classes under their 1.x module name
    assert ndx.metric.Accuracy is metric.Accuracy and ndx.metric.F1 is metric.F1


def test_mxnet_documented_examples():
    preds = [np.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])]
    labels = [np.array([0, 1, 1])]
    cases = [(metric.Accuracy(), ("accuracy", 2 / 3)),
             (metric.F1(), ("f1", 0.8)),
             (metric.CrossEntropy(), ("cross-entropy", 0.57159948348999023)),
             (metric.Perplexity(ignore_label=None), ("perplexity", 1.7710976285155853))]
    for m, (name, value) in cases:
        m.update(labels, preds)
        got_name, got = m.get()
        assert got_name == name and math.isclose(got, value, rel_tol=1e-6), (name, got)
    reg_p, reg_l = [np.array([3, -0.5, 2, 7])], [np.array([2.5, 0.0, 2, 8])]
    for m, value in ((metric.MAE(), 0.5), (metric.MSE(), 0.375), (metric.RMSE(), math.sqrt(0.375))):
        m.update(reg_l, reg_p)
        assert math.isclose(m.get()[1], value, rel_tol=1e-9)
    pr = metric.PearsonCorrelation()
    pr.update([np.array([[1, 0], [0, 1], [0, 1]])], [np.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
    assert math.isclose(pr.get()[1], 0.42163704544016178, rel_tol=1e-6)


def test_accuracy_over_batches_and_axis():
    m = metric.Accuracy()
    correct = total = 0
    for n in (5, 8):
        p = _probs(n, 4)
        lab = RNG.integers(0, 4, size=n)
        m.update([np.array(lab)], [np.array(p)])
        correct += (p.argmax(axis=1) == lab).sum()
        total += n
    assert m.get() == ("accuracy", correct / total)
    # class axis 0, and predictions given as class indices, and single arrays
    p = _probs(6, 3)
    lab = RNG.integers(0, 3, size=6)
    m0 = metric.Accuracy(axis=0)
    m0.update(np.array(lab), np.array(p.T))
    assert m0.get()[1] == (p.argmax(axis=1) == lab).mean()
    m1 = metric.Accuracy()
    m1.update(np.array(lab), np.array(p.argmax(axis=1).astype(onp.float32)))
    assert m1.get()[1] == (p.argmax(axis=1) == lab).mean()


def test_top_k_accuracy():
    p = RNG.random(size=(20, 6))
    lab = RNG.integers(0, 6, size=20)
    for k in (2, 3, 6, 9):
        m = metric.TopKAccuracy(top_k=k)
        m.update([np.array(lab[:12]), np.array(lab[12:])], [np.array(p[:12]), np.array(p[12:])])
        top = onp.argsort(p, axis=1)[:, -min(k, 6):]
        want = onp.mean([lab[i] in top[i] for i in range(20)])
        assert m.get() == (f"top_k_accuracy_{k}", want)


def _counts(pred_pos, lab_pos):
    tp = int(onp.sum(pred_pos & lab_pos))
    fp = int(onp.sum(pred_pos & ~lab_pos))
    fn = int(onp.sum(~pred_pos & lab_pos))
    return tp, fp, fn


def _f1(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def test_f1_binary_by_counting_over_batches():
    batches = [(RNG.random(size=(9, 2)), RNG.integers(0, 2, size=9)) for _ in range(3)]
    m = metric.F1()
    for p, lab in batches:
        m.update([np.array(lab)], [np.array(p)])
    pred = onp.concatenate([p[:, 1] > 0.5 for p, _ in batches])
    lab = onp.concatenate([lab for _, lab in batches]).astype(bool)
    assert math.isclose(m.get()[1], _f1(*_counts(pred, lab)), rel_tol=1e-12)
    # probabilities of the positive class in the label's shape, another threshold
    p, lab = RNG.random(size=12), RNG.integers(0, 2, size=12)
    m = metric.F1(threshold=0.3)
    m.update(np.array(lab), np.array(p))
    assert math.isclose(m.get()[1], _f1(*_counts(p > 0.3, lab.astype(bool))), rel_tol=1e-12)
    m.reset()
    assert math.isnan(m.get()[1])


def test_f1_multiclass_micro_macro_and_per_class():
    p, lab = _probs(30, 4), RNG.integers(0, 4, size=30)
    pred = p.argmax(axis=1)
    per_class = onp.array([_f1(*_counts(pred == c, lab == c)) for c in range(4)])
    tp, fp, fn = (sum(x) for x in zip(*[_counts(pred == c, lab == c) for c in range(4)]))
    for average, want in (("micro", _f1(tp, fp, fn)), ("macro", per_class.mean()),
                          (None, per_class)):
        m = metric.F1(class_type="multiclass", average=average)
        m.update([np.array(lab[:10]), np.array(lab[10:])], [np.array(p[:10]), np.array(p[10:])])
        assert_almost_equal(onp.asarray(m.get()[1].asnumpy() if average is None
                                        else m.get()[1]), want, rtol=1e-12, atol=1e-15)


def test_f1_multilabel_and_fbeta():
    p, lab = RNG.random(size=(15, 3)), RNG.integers(0, 2, size=(15, 3))
    pred, lab_b = p > 0.5, lab.astype(bool)
    m = metric.F1(class_type="multilabel", average="macro")
    m.update(np.array(lab), np.array(p))
    want = onp.mean([_f1(*_counts(pred[:, c], lab_b[:, c])) for c in range(3)])
    assert math.isclose(m.get()[1], want, rel_tol=1e-12)
    fb = metric.Fbeta(beta=2)
    fb.update([np.array([0.0, 1.0, 1.0])], [np.array([[0.3, 0.7], [0.0, 1.0], [0.4, 0.6]])])
    assert math.isclose(fb.get()[1], 0.9090909090909091, rel_tol=1e-12)  # MXNet's example


def test_regression_metrics_match_numpy():
    lab, pred = RNG.normal(size=(6, 2, 3)), RNG.normal(size=(6, 2, 3))
    batches = [(lab[:4], pred[:4]), (lab[4:], pred[4:])]
    for m, f in ((metric.MAE(), lambda d: onp.abs(d).mean()),
                 (metric.MSE(), lambda d: (d**2).mean()),
                 (metric.RMSE(), lambda d: math.sqrt((d**2).mean()))):
        for lb, pb in batches:
            m.update([np.array(lb)], [np.array(pb)])
        assert math.isclose(m.get()[1], f(lab - pred), rel_tol=1e-12)
    # (N,) labels with (N, 1) predictions compare sample by sample, not by broadcasting
    m = metric.MSE()
    m.update(np.array(lab[:, 0, 0]), np.array(pred[:, 0, :1]))
    assert math.isclose(m.get()[1], ((lab[:, 0, 0] - pred[:, 0, 0]) ** 2).mean(), rel_tol=1e-12)


def test_cross_entropy_perplexity_ignore_label_and_logits():
    p = _probs(10, 5)
    lab = RNG.integers(0, 5, size=10)
    lab[[2, 7]] = -1
    keep = lab != -1
    ce_want = -onp.log(p[keep, lab[keep]]).mean()
    ce = metric.CrossEntropy(ignore_label=-1)
    ce.update([np.array(lab)], [np.array(p)])
    assert math.isclose(ce.get()[1], ce_want, rel_tol=1e-6)
    perp = metric.Perplexity(ignore_label=-1)
    perp.update([np.array(lab)], [np.array(p)])
    assert math.isclose(perp.get()[1], math.exp(ce_want), rel_tol=1e-6)
    # logits along axis 1 of (N, C, T) predictions with (N, T) labels
    logits = RNG.normal(size=(3, 4, 2))
    lab3 = RNG.integers(0, 4, size=(3, 2))
    soft = onp.exp(logits) / onp.exp(logits).sum(axis=1, keepdims=True)
    want = -onp.mean([onp.log(soft[i, lab3[i, t], t]) for i in range(3) for t in range(2)])
    ce = metric.CrossEntropy(axis=1, from_logits=True)
    ce.update(np.array(lab3), np.array(logits))
    assert math.isclose(ce.get()[1], want, rel_tol=1e-6)
    # eps keeps a zero probability finite
    ce = metric.CrossEntropy(eps=1e-4)
    ce.update(np.array([0]), np.array([[0.0, 1.0]]))
    assert math.isclose(ce.get()[1], -math.log(1e-4), rel_tol=1e-6)


def test_pearson_over_batches_matches_corrcoef():
    lab, pred = RNG.normal(size=40), RNG.normal(size=40)
    pred = pred + 0.7 * lab
    m = metric.PearsonCorrelation()
    for lo, hi in ((0, 7), (7, 25), (25, 40)):
        m.update([np.array(lab[lo:hi])], [np.array(pred[lo:hi])])
    assert math.isclose(m.get()[1], onp.corrcoef(lab, pred)[0, 1], rel_tol=1e-10)


def test_composite_create_and_protocol():
    comp = metric.create(["acc", "f1", metric.CrossEntropy()])
    assert isinstance(comp, metric.CompositeEvalMetric)
    p, lab = np.array([[0.3, 0.7], [0.0, 1.0], [0.4, 0.6]]), np.array([0, 1, 1])
    comp.update([lab], [p])
    names, values = comp.get()
    assert names == ["accuracy", "f1", "cross-entropy"]
    assert math.isclose(values[0], 2 / 3) and math.isclose(values[1], 0.8)
    assert math.isclose(values[2], -(math.log(0.3) + math.log(0.6)) / 3, rel_tol=1e-6)
    assert comp.get_name_value()[0] == ("accuracy", values[0])
    assert comp.get_metric(1).name == "f1"
    with pytest.raises(IndexError):
        comp.get_metric(5)
    comp.reset()
    assert all(math.isnan(v) for v in comp.get()[1])

    for name, klass in (("acc", metric.Accuracy), ("Accuracy", metric.Accuracy),
                        ("ce", metric.CrossEntropy), ("top_k_acc", metric.TopKAccuracy),
                        ("pearsonr", metric.PearsonCorrelation), ("rmse", metric.RMSE),
                        ("perplexity", metric.Perplexity), ("composite",
                                                            metric.CompositeEvalMetric)):
        args = {"top_k": 3} if klass is metric.TopKAccuracy else {}
        assert type(metric.create(name, **args)) is klass
    acc = metric.Accuracy()
    assert metric.create(acc) is acc

    def feval(label, pred):
        return float(onp.abs(label.asnumpy() - pred.asnumpy()).sum()), label.size

    custom = metric.create(feval)
    custom.update([np.array([1.0, 2.0])], [np.array([1.5, 2.0])])
    assert custom.get() == ("feval", 0.25)
    npm = metric.np(lambda lab, pr: float(onp.max(lab - pr)))
    npm.update([np.array([3.0, 1.0])], [np.array([1.0, 1.0])])
    assert npm.get() == ("custom(<lambda>)", 2.0)

    m = metric.Accuracy(output_names=["out"], label_names=["lab"])
    m.update_dict(OrderedDict(lab=lab, other=np.array([9, 9, 9])),
                  OrderedDict(out=p, extra=np.zeros((3, 2))))
    assert math.isclose(m.get()[1], 2 / 3)
    assert m.get_config()["metric"] == "Accuracy" and m.get_config()["axis"] == 1
    assert str(m) == f"EvalMetric: {{'accuracy': {m.get()[1]}}}"
    loss = metric.Loss()
    loss.update(None, [np.array([1.0, 2.0]), np.array([3.0])])
    assert loss.get() == ("loss", 2.0)


def test_typed_errors():
    with pytest.raises(ValueError, match="Cannot find metric"):
        metric.create("no_such_metric")
    with pytest.raises(TypeError):
        metric.create(3.5)
    with pytest.raises(ValueError, match="2 label arrays but 1"):
        metric.Accuracy().update([np.array([0]), np.array([1])], [np.array([[0.2, 0.8]])])
    with pytest.raises(ValueError, match="labels"):
        metric.Accuracy().update(np.array([0, 1, 1]), np.array([[0.2, 0.8], [0.1, 0.9]]))
    with pytest.raises(ValueError, match="Shape of labels"):
        metric.MAE().update(np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="Shape of labels"):
        metric.PearsonCorrelation().update(np.array([1.0, 2.0]), np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="shape mismatch"):
        metric.CrossEntropy().update(np.array([0, 1]), np.array([[0.5, 0.5]]))
    with pytest.raises(IndexError, match="labels must lie"):
        metric.CrossEntropy().update(np.array([3]), np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="top_k"):
        metric.TopKAccuracy(top_k=1)
    with pytest.raises(ValueError, match="no more than 2 dims"):
        metric.TopKAccuracy(top_k=2).update(np.array([0]), np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="binary"):
        metric.F1().update(np.array([0, 2]), np.array([0.1, 0.9]))
    with pytest.raises(ValueError, match="wrong for binary"):
        metric.F1().update(np.array([0, 1]), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="class_type"):
        metric.F1(class_type="multi")
    with pytest.raises(ValueError, match="average"):
        metric.F1(average="weighted")
    with pytest.raises(ValueError, match="fewer classes"):
        metric.F1(class_type="multiclass").update(np.array([4]), np.zeros((1, 3)))
    with pytest.raises(TypeError, match="ndx array"):
        metric.MSE().update([[1.0, 2.0]], [[1.0, 2.0]])
    with pytest.raises(TypeError, match="axis"):
        metric.Accuracy(axis="1")


# ---- gluon.utils.clip_global_norm ---------------------------------------------------------


def test_clip_global_norm_matches_numpy():
    arrs = [RNG.normal(size=(3, 4)), RNG.normal(size=5), RNG.normal(size=(2, 2, 2))]
    total = math.sqrt(sum((a**2).sum() for a in arrs))
    for max_norm in (0.5 * total, 2 * total):
        xs = [np.array(a) for a in arrs]
        got = gluon.utils.clip_global_norm(xs, max_norm)
        assert isinstance(got, float) and math.isclose(got, total, rel_tol=1e-6)
        scale = min(1.0, max_norm / (total + 1e-8))
        for x, a in zip(xs, arrs):
            assert_almost_equal(x, a * scale, rtol=1e-6, atol=1e-7)
    xs = [np.array(a) for a in arrs]
    got = gluon.utils.clip_global_norm(xs, 1.0, check_isfinite=False)
    assert isinstance(got, np.ndarray) and got.shape == (1,)
    assert math.isclose(got.item(), total, rel_tol=1e-6)
    assert math.isclose(math.sqrt(sum(float((x**2).sum()) for x in xs)), 1.0, rel_tol=1e-5)


def test_clip_global_norm_nan_and_inf():
    xs = [np.array([1.0, float("nan")]), np.array([2.0])]
    with pytest.warns(UserWarning, match="nan or inf"):
        got = gluon.utils.clip_global_norm(xs, 1.0)
    assert math.isnan(got)
    assert onp.isnan(xs[0].asnumpy()).all() and onp.isnan(xs[1].asnumpy()).all()
    xs = [np.array([1.0, float("inf")])]
    with pytest.warns(UserWarning, match="nan or inf"):
        got = gluon.utils.clip_global_norm(xs, 1.0)
    assert got == float("inf")
    assert xs[0].asnumpy()[0] == 0.0  # scaled by max_norm / inf = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning when the check is off
        gluon.utils.clip_global_norm([np.array([float("nan")])], 1.0, check_isfinite=False)


def test_clip_global_norm_typed_errors():
    with pytest.raises(ValueError, match="empty"):
        gluon.utils.clip_global_norm([], 1.0)
    with pytest.raises(TypeError, match="list"):
        gluon.utils.clip_global_norm(np.ones(3), 1.0)
    with pytest.raises(TypeError, match=r"arrays\[1\]"):
        gluon.utils.clip_global_norm([np.ones(3), onp.ones(3)], 1.0)
    with pytest.raises(ValueError, match="max_norm"):
        gluon.utils.clip_global_norm([np.ones(3)], 0.0)
