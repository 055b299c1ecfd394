"""Learning-rate schedulers: each sequence against values computed by hand from MXNet's
documented formulas (warmup included), state across calls, and typed errors."""
import math

import pytest

import ndx
from ndx import lr_scheduler


def _seq(sched, n, start=0):
    return [sched(t) for t in range(start, n)]


def _close(got, want):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-15), (i, got, want)


def test_exported_as_mxnet_lr_scheduler():
    assert ndx.lr_scheduler is lr_scheduler
    assert issubclass(ndx.lr_scheduler.FactorScheduler, ndx.lr_scheduler.LRScheduler)
    with pytest.raises(NotImplementedError):
        lr_scheduler.LRScheduler()(1)
    mx = ndx.compat.alias_as_mxnet("mxnet_lrs_alias")  # `import ndx as mxnet` code
    try:
        import mxnet_lrs_alias.lr_scheduler as mx_lrs
        from mxnet_lrs_alias.gluon.metric import Accuracy
        assert mx_lrs.FactorScheduler is lr_scheduler.FactorScheduler
        assert mx.lr_scheduler.CosineScheduler is lr_scheduler.CosineScheduler
        assert Accuracy is ndx.gluon.metric.Accuracy
    finally:
        ndx.compat.remove_alias("mxnet_lrs_alias")


def test_factor_scheduler():
    # drops after every 3 updates: num_update 1-3 -> 1, 4-6 -> 0.5, 7-9 -> 0.25
    s = lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=1.0)
    _close(_seq(s, 10, start=1), [1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25])


def test_factor_scheduler_stop_factor_and_jump():
    s = lr_scheduler.FactorScheduler(step=1, factor=0.1, stop_factor_lr=1e-3, base_lr=1.0)
    _close([s(1), s(2), s(3), s(4), s(5)], [1.0, 0.1, 0.01, 1e-3, 1e-3])
    # resuming at a later update applies every missed drop at once
    s = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    _close([s(7)], [0.125])


def test_factor_scheduler_linear_warmup():
    s = lr_scheduler.FactorScheduler(step=5, factor=0.5, base_lr=1.0, warmup_steps=4,
                                     warmup_begin_lr=0.2)
    # warmup: 0.2 + (1 - 0.2) * t / 4 for t < 4
    _close(_seq(s, 4), [0.2, 0.4, 0.6, 0.8])
    _close([s(4), s(5), s(6), s(11)], [1.0, 1.0, 0.5, 0.25])


def test_constant_warmup():
    s = lr_scheduler.MultiFactorScheduler(step=[5], factor=0.1, base_lr=0.5, warmup_steps=3,
                                          warmup_begin_lr=0.05, warmup_mode="constant")
    _close(_seq(s, 8), [0.05, 0.05, 0.05, 0.5, 0.5, 0.5, 0.05, 0.05])


def test_multifactor_scheduler():
    s = lr_scheduler.MultiFactorScheduler(step=[2, 5, 6], factor=0.5, base_lr=2.0)
    _close(_seq(s, 9, start=1), [2, 2, 1, 1, 1, 0.5, 0.25, 0.25])


def test_poly_scheduler():
    s = lr_scheduler.PolyScheduler(max_update=4, base_lr=1.0, pwr=2, final_lr=0.2)
    want = [0.2 + 0.8 * (1 - t / 4) ** 2 for t in range(5)]
    _close(_seq(s, 5), want)
    _close([s(9)], [0.2])  # held past max_update


def test_poly_scheduler_with_warmup():
    s = lr_scheduler.PolyScheduler(max_update=6, base_lr=1.0, pwr=1, warmup_steps=2,
                                   warmup_begin_lr=0.0)
    # warmup 0, 0.5; then 1 - (t - 2) / 4
    _close(_seq(s, 8), [0.0, 0.5, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0])


def test_cosine_scheduler():
    s = lr_scheduler.CosineScheduler(max_update=4, base_lr=1.0, final_lr=0.0)
    want = [(1 + math.cos(math.pi * t / 4)) / 2 for t in range(5)]
    _close(_seq(s, 5), want)
    _close([s(10)], [0.0])


def test_cosine_scheduler_with_warmup():
    s = lr_scheduler.CosineScheduler(max_update=12, base_lr=0.4, final_lr=0.1, warmup_steps=2,
                                     warmup_begin_lr=0.1)
    want = [0.1, 0.25] + [0.1 + 0.3 * (1 + math.cos(math.pi * (t - 2) / 10)) / 2
                          for t in range(2, 13)]
    _close(_seq(s, 13), want)


def test_base_lr_overwritten_by_optimizer():
    """MXNet: Factor decays from the optimizer's lr, Poly / Cosine from their own base_lr."""
    f = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    c = lr_scheduler.CosineScheduler(max_update=2, base_lr=1.0)
    with pytest.warns(UserWarning):
        ndx.optimizer.SGD(learning_rate=0.2, lr_scheduler=f)
    with pytest.warns(UserWarning):
        ndx.optimizer.SGD(learning_rate=0.2, lr_scheduler=c)
    _close([f(1), f(2)], [0.2, 0.1])
    _close([c(0), c(1)], [1.0, 0.5])


def test_typed_errors():
    with pytest.raises(ValueError, match="step"):
        lr_scheduler.FactorScheduler(step=0)
    with pytest.raises(ValueError, match="Factor"):
        lr_scheduler.FactorScheduler(step=2, factor=1.5)
    with pytest.raises(TypeError, match="step"):
        lr_scheduler.FactorScheduler(step=2.5)
    with pytest.raises(ValueError, match="increasing"):
        lr_scheduler.MultiFactorScheduler(step=[3, 2])
    with pytest.raises(TypeError, match="list"):
        lr_scheduler.MultiFactorScheduler(step=3)
    with pytest.raises(ValueError, match="strictly positive"):
        lr_scheduler.PolyScheduler(max_update=0)
    with pytest.raises(TypeError, match="max_update"):
        lr_scheduler.CosineScheduler(max_update=10.0)
    with pytest.raises(ValueError, match="warmup_steps"):
        lr_scheduler.CosineScheduler(max_update=5, warmup_steps=5)
    with pytest.raises(ValueError, match="warmup_mode"):
        lr_scheduler.FactorScheduler(step=2, warmup_steps=2, warmup_mode="exp")
    with pytest.raises(ValueError, match="warmup_begin_lr"):
        lr_scheduler.FactorScheduler(step=2, base_lr=0.1, warmup_begin_lr=0.5)
    with pytest.raises(ValueError, match="Warmup steps"):
        lr_scheduler.FactorScheduler(step=2, warmup_steps=-1)
    with pytest.raises(TypeError, match="warmup_steps"):
        lr_scheduler.FactorScheduler(step=2, warmup_steps=1.5)
