"""Losses for training (MXNet 2.0's mxnet.gluon.loss): HybridBlocks composing registered ops.

Every loss takes MXNet 2.0's constructor arguments and inputs. `weight` is a global scalar and
`sample_weight` an array broadcast against the elementwise loss (per-sample or per-class
weights); most losses then average every axis but `batch_axis`, giving shape (batch_size,).
Losses run imperatively, under autograd and hybridized; optional inputs may be left out or
passed as None (or by keyword) in every mode.
"""
import inspect
import math
import numbers

import numpy as onp

from .. import _core
from .. import numpy as np
from .. import numpy_extension as npx
from .block import Block, HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]


# ------------------------------------------------------------------------------- helpers
def _check_weight(name, weight):
    if weight is not None and (isinstance(weight, bool) or
                               not isinstance(weight, numbers.Real)):
        raise TypeError(f"[{name}] weight must be a number or None (a global scalar weight; "
                        f"per-sample or per-class weights go in sample_weight), got "
                        f"{type(weight).__name__}")


def _broadcasts_to(shape, target):
    try:
        return onp.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
    except ValueError:
        return False


def _check_sample_weight(name, loss, sample_weight):
    """sample_weight as an array that broadcasts to loss's shape. A weight whose broadcast
    with the loss is larger than the loss ((N,) against an (N, 1) loss gives (N, N)) would
    silently average every sample's loss with every sample's weight, so it is an error."""
    if not isinstance(sample_weight, np.ndarray):
        sample_weight = np.array(sample_weight, dtype=loss.dtype, device=loss.device)
    if loss.ndim == 1 and sample_weight.size in (1, loss.size) and \
            sum(d != 1 for d in sample_weight.shape) <= 1:
        # a loss already reduced to (batch_size,): per-sample weights may come as (N, 1)
        sample_weight = sample_weight.reshape(-1)
    if not _broadcasts_to(sample_weight.shape, loss.shape):
        raise ValueError(f"[{name}] sample_weight of shape {tuple(sample_weight.shape)} does "
                         f"not broadcast to the elementwise loss's shape "
                         f"{tuple(loss.shape)} (per-sample weights: batch_size along the batch "
                         f"axis, 1 elsewhere)")
    return sample_weight


def _apply_weighting(loss, weight=None, sample_weight=None, name="Loss"):
    """loss * sample_weight (broadcast) * weight, as MXNet's _apply_weighting."""
    if sample_weight is not None:
        loss = loss * _check_sample_weight(name, loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _reduce_all_but(name, reducer, loss, batch_axis):
    """reducer over every axis of loss but batch_axis (MXNet's _batch_mean / _batch_sum)."""
    if loss.ndim == 0:
        raise ValueError(f"[{name}] the loss is 0-d: the inputs need a batch axis")
    if not isinstance(batch_axis, numbers.Integral) or not -loss.ndim <= batch_axis < loss.ndim:
        raise ValueError(f"[{name}] batch_axis {batch_axis!r} is out of range for a loss of "
                         f"shape {tuple(loss.shape)}")
    keep = batch_axis % loss.ndim
    axes = tuple(i for i in range(loss.ndim) if i != keep)
    return reducer(loss, axis=axes) if axes else loss


def _batch_mean(name, loss, batch_axis):
    return _reduce_all_but(name, np.mean, loss, batch_axis)


def _batch_sum(name, loss, batch_axis):
    return _reduce_all_but(name, np.sum, loss, batch_axis)


def _reshape_like(name, x, like, what):
    """x with like's shape (MXNet's reshape_like: the sizes must agree) and, when x is not a
    float array, like's dtype, so integer labels do not promote the loss to float64."""
    if not isinstance(x, np.ndarray):
        x = np.array(x, dtype=like.dtype, device=like.device)
    if x.size != like.size:
        raise ValueError(f"[{name}] {what} has shape {tuple(x.shape)} ({x.size} elements), "
                         f"expected {like.size} elements like pred (shape {tuple(like.shape)})")
    if x.shape != like.shape:
        x = x.reshape(like.shape)
    if x.dtype.kind != "f" and like.dtype.kind == "f":
        x = x.astype(like.dtype)
    return x


def _eps(x, value):
    """value, or 1.6e-5 where value rounds to 0 in float16: there 0 * log(0 + eps) would be
    nan (MXNet's 1e-12 and 1e-8 underflow in half precision). 1.6e-5 is about the smallest eps
    whose reciprocal, the gradient of log(p + eps) at p = 0, float16 still holds (65504): a
    smaller one made that gradient inf, a larger one biases losses near 0 and 1 more (it moves
    -log(p) at p = 2e-4 by 8%, float16's smallest normal 6e-5 moved it by 26%)."""
    if x.dtype == onp.float16:
        return max(value, 1.6e-5)
    return value


def _softrelu(x):
    return npx._activation_op(x, act_type="softrelu")


def _static_key(value):
    """A hashable stand-in for a non-array argument in a hybridized graph's cache key."""
    try:
        hash(value)
        return (type(value).__name__, value)
    except TypeError:
        return (type(value).__name__, repr(value))


# ---------------------------------------------------------------------------------- base
class Loss(HybridBlock):
    """Base class for losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(**kwargs)
        _check_weight(type(self).__name__, weight)
        self._weight = weight
        self._batch_axis = batch_axis
        object.__setattr__(self, "_call_key", None)

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def __call__(self, *args, **kwargs):
        """As HybridBlock's, and optional inputs may be None or given by keyword: a hybridized
        loss keeps one graph per set of inputs given (and per value of the other arguments)."""
        if not self._active or _core._is_tracing():
            return Block.__call__(self, *args, **kwargs)
        if not kwargs and all(isinstance(a, np.ndarray) for a in args):
            return super().__call__(*args)
        if getattr(self, "_forward_pre_hooks", None) or getattr(self, "_forward_hooks", None):
            return self._call_hooked(self._call_captured, args, kwargs)
        return self._call_captured(*args, **kwargs)

    def _call_captured(self, *args, **kwargs):
        """The captured graph for these arguments: arrays become graph inputs, everything
        else (None, numbers) is fixed in the graph and part of its cache key."""
        bound = inspect.signature(self.forward).bind(*args, **kwargs)
        arrays, static = {}, {}
        for name, value in bound.arguments.items():
            (arrays if isinstance(value, np.ndarray) else static)[name] = value
        kinds = inspect.signature(self.forward).parameters
        if any(kinds[n].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
               for n in static):
            return self.forward(*args, **kwargs)  # arrays inside *args: run imperatively
        names = tuple(arrays)
        forward = type(self).forward

        def traced_forward(*xs):
            return forward(self, **dict(zip(names, xs)), **static)

        object.__setattr__(self, "_call_key",
                           (names, tuple(sorted((k, _static_key(v)) for k, v in static.items()))))
        object.__setattr__(self, "forward", traced_forward)
        try:
            return self._call_graph(*arrays.values())
        finally:
            object.__delattr__(self, "forward")
            object.__setattr__(self, "_call_key", None)

    def _signature(self, args, fmt=None):
        return super()._signature(args, fmt) + (getattr(self, "_call_key", None),)


# -------------------------------------------------------------------------- regression
class L2Loss(Loss):
    r"""Half the squared error: L = 1/2 * (label - pred)^2, averaged over all axes but the
    batch axis. `label` may have any shape with pred's number of elements."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred, label, sample_weight=None):
        label = _reshape_like("L2Loss", label, pred, "label")
        loss = np.square(label - pred)
        loss = _apply_weighting(loss, self._weight / 2, sample_weight,
                                type(self).__name__)
        return _batch_mean("L2Loss", loss, self._batch_axis)


class L1Loss(Loss):
    r"""Absolute error: L = |label - pred|, averaged over all axes but the batch axis."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred, label, sample_weight=None):
        label = _reshape_like("L1Loss", label, pred, "label")
        loss = _apply_weighting(np.abs(label - pred), self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("L1Loss", loss, self._batch_axis)


class HuberLoss(Loss):
    r"""Smoothed L1: 0.5 / rho * (label - pred)^2 where |label - pred| <= rho, else
    |label - pred| - 0.5 * rho.

    Parameters
    ----------
    rho : float, default 1
        Threshold for trimmed mean estimator.
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if not isinstance(rho, numbers.Real) or not rho > 0:
            raise ValueError(f"[HuberLoss] rho must be a positive number, got {rho!r}")
        self._rho = rho

    def forward(self, pred, label, sample_weight=None):
        label = _reshape_like("HuberLoss", label, pred, "label")
        err = np.abs(label - pred)
        loss = np.where(err > self._rho, err - 0.5 * self._rho,
                        (0.5 / self._rho) * np.square(err))
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("HuberLoss", loss, self._batch_axis)


class PoissonNLLLoss(Loss):
    r"""Negative log likelihood of target under Poisson(pred):
    exp(pred) - target * pred (from_logits, pred is the log rate) or
    pred - target * log(pred + epsilon); compute_full adds Stirling's approximation of
    log(target!), target * log(target) - target + 0.5 * log(2 * pi * target), where target > 1.
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def forward(self, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like("PoissonNLLLoss", target, pred, "target")
        if self._from_logits:
            loss = np.exp(pred) - target * pred
        else:
            loss = pred - target * np.log(pred + _eps(pred, epsilon))
        if self._compute_full:
            # The factor only counts where target > 1; there it is evaluated on a copy of
            # target clipped to >= 1, so 0 * log(0) never turns the loss into nan.
            t = np.maximum(target, 1.0)
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * math.pi * t)
            loss = loss + np.where(target > 1, stirling, 0.0)
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("PoissonNLLLoss", loss, self._batch_axis)


# ---------------------------------------------------------------------- classification
class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross entropy: -(label * log(p) * pos_weight + (1 - label) * log(1 - p)) with
    p = sigmoid(pred) computed stably from logits, or p = pred when from_sigmoid.
    pos_weight (forward input, broadcast against pred) weighs the positive term.
    (alias: SigmoidBCELoss)"""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def forward(self, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like("SigmoidBinaryCrossEntropyLoss", label, pred, "label")
        if not self._from_sigmoid:
            if pos_weight is None:
                # max(x, 0) - x * z + log(1 + exp(-|x|)): no overflow for any x
                loss = npx.relu(pred) - pred * label + _softrelu(-np.abs(pred))
            else:
                # x - x * z + (1 + (pw - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))
                log_weight = 1 + (pos_weight - 1) * label
                loss = pred - pred * label + log_weight * (_softrelu(-np.abs(pred)) +
                                                           npx.relu(-pred))
        else:
            eps = _eps(pred, 1e-12)
            pos = np.log(pred + eps) * label
            if pos_weight is not None:
                pos = pos * pos_weight
            loss = -(pos + np.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("SigmoidBinaryCrossEntropyLoss", loss, self._batch_axis)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


def _sparse_label(name, pred, label, axis):
    """Class indices of pred's shape without `axis` (or with it kept as 1)."""
    if not isinstance(label, np.ndarray):
        label = np.array(label, device=pred.device)
    if not -pred.ndim <= axis < pred.ndim:
        raise ValueError(f"[{name}] axis {axis} is out of range for pred of shape "
                         f"{tuple(pred.shape)}")
    ax = axis % pred.ndim
    without = tuple(s for i, s in enumerate(pred.shape) if i != ax)
    kept = tuple(1 if i == ax else s for i, s in enumerate(pred.shape))
    if label.shape == kept and kept != without:
        label = label.reshape(without)
    elif label.shape != without:
        raise ValueError(f"[{name}] sparse label has shape {tuple(label.shape)}, expected "
                         f"{without} (pred's shape {tuple(pred.shape)} without axis {axis})")
    return label


class SoftmaxCrossEntropyLoss(Loss):
    r"""Softmax cross entropy. With sparse_label (default), label holds class indices of
    pred's shape without `axis` and L = -log softmax(pred)[label]; else label is a
    distribution of pred's shape and L = -sum(label * log softmax(pred), axis). from_logits:
    pred already holds log probabilities. Class weights: pass sample_weight, e.g.
    class_weight[label] reshaped to (batch_size, 1). (alias: SoftmaxCELoss)"""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def forward(self, pred, label, sample_weight=None):
        name = "SoftmaxCrossEntropyLoss"
        if not self._from_logits:
            pred = npx.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            label = _sparse_label(name, pred, label, self._axis)
            loss = -npx._pick_op(pred, label, axis=self._axis, keepdims=True)
            if isinstance(sample_weight, np.ndarray) and \
                    not _broadcasts_to(sample_weight.shape, loss.shape) and \
                    _broadcasts_to(sample_weight.shape, label.shape):
                # MXNet documents sample_weight as broadcastable to label's shape; the loss
                # keeps the class axis, so put it back into the weight.
                sample_weight = np.expand_dims(np.broadcast_to(sample_weight, label.shape),
                                               self._axis)
        else:
            label = _reshape_like(name, label, pred, "label")
            loss = -np.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean(name, loss, self._batch_axis)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence: L = label * (log(label) - pred), pred being log
    probabilities (from_logits, default) or made so by log_softmax along `axis`."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def forward(self, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = npx.log_softmax(pred, axis=self._axis)
        label = _reshape_like("KLDivLoss", label, pred, "label")
        loss = label * (np.log(label + _eps(label, 1e-12)) - pred)
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("KLDivLoss", loss, self._batch_axis)


class HingeLoss(Loss):
    r"""Hinge loss of SVMs: L = max(0, margin - pred * label), labels -1 or 1."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, pred, label, sample_weight=None):
        label = _reshape_like("HingeLoss", label, pred, "label")
        loss = npx.relu(self._margin - pred * label)
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("HingeLoss", loss, self._batch_axis)


class SquaredHingeLoss(Loss):
    r"""Soft-margin loss of SVMs: L = max(0, margin - pred * label)^2, labels -1 or 1."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, pred, label, sample_weight=None):
        label = _reshape_like("SquaredHingeLoss", label, pred, "label")
        loss = np.square(npx.relu(self._margin - pred * label))
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("SquaredHingeLoss", loss, self._batch_axis)


class LogisticLoss(Loss):
    r"""Logistic loss: L = log(1 + exp(-pred * label)) for labels -1 / 1 (label_format
    'signed'), or the same with labels 0 / 1 mapped to -1 / 1 ('binary')."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"[LogisticLoss] label_format can only be 'signed' or 'binary', "
                             f"got {label_format!r}")
        self._label_format = label_format

    def forward(self, pred, label, sample_weight=None):
        label = _reshape_like("LogisticLoss", label, pred, "label")
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0  # to 0 / 1
        # max(x, 0) - x * z + log(1 + exp(-|x|)), stable for any x
        loss = npx.relu(pred) - pred * label + _softrelu(-np.abs(pred))
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean("LogisticLoss", loss, self._batch_axis)


# ---------------------------------------------------------------------- embeddings
class TripletLoss(Loss):
    r"""Triplet loss: L = max(sum(|positive - pred|^2) - sum(|negative - pred|^2) + margin, 0),
    the sums over all axes but the batch axis."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, pred, positive, negative, sample_weight=None):
        positive = _reshape_like("TripletLoss", positive, pred, "positive")
        negative = _reshape_like("TripletLoss", negative, pred, "negative")
        loss = _batch_sum("TripletLoss", np.square(positive - pred) - np.square(negative - pred),
                          self._batch_axis)
        loss = npx.relu(loss + self._margin)
        return _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)


class CosineEmbeddingLoss(Loss):
    r"""Cosine embedding loss: 1 - cos_sim(input1, input2) where label is 1, else
    max(0, cos_sim - margin) (clipped to 1 - margin), cos_sim taken along the last axis."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, input1, input2, label, sample_weight=None):
        name = "CosineEmbeddingLoss"
        input1 = _reshape_like(name, input1, input2, "input1")
        cos_sim = self._cosine_similarity(input1, input2)
        label = _reshape_like(name, label, cos_sim, "label")
        loss = np.where(label == 1, 1 - cos_sim,
                        np.clip(cos_sim - self._margin, 0, 1 - self._margin))
        loss = _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
        return _batch_mean(name, loss, self._batch_axis)

    @staticmethod
    def _cosine_similarity(x, y, axis=-1):
        x_norm = np.sqrt(np.sum(np.square(x), axis=axis)).reshape((-1, 1))
        y_norm = np.sqrt(np.sum(np.square(y), axis=axis)).reshape((-1, 1))
        x_dot_y = np.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / np.maximum(x_norm * y_norm, _eps(x_dot_y, 1e-12))


class SDMLLoss(Loss):
    r"""Batchwise Smoothed Deep Metric Learning loss: x1[i] and x2[i] are positive pairs and
    every other row of the batch a negative. KL divergence between log_softmax(-distances)
    (squared euclidean distances of every pair) and the identity smoothed by
    smoothing_parameter, times `weight`."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_labels(self, batch_size, like):
        gold = np.eye(batch_size, dtype=like.dtype, device=like.device)
        off = self.smoothing_parameter / max(batch_size - 1, 1)
        return gold * (1 - self.smoothing_parameter) + (1 - gold) * off

    def forward(self, x1, x2):
        if x1.ndim != 2 or x1.shape != x2.shape:
            raise ValueError(f"[SDMLLoss] x1 and x2 must be (batch_size, vector_dim) of the "
                             f"same shape, got {tuple(x1.shape)} and {tuple(x2.shape)}")
        distances = np.sum(np.square(np.expand_dims(x1, 1) - np.expand_dims(x2, 0)), axis=2)
        log_probabilities = npx.log_softmax(-distances, axis=1)
        labels = self._compute_labels(x1.shape[0], distances)
        return _apply_weighting(self.kl_loss(log_probabilities, labels), self._weight)


# ----------------------------------------------------------------------------- CTC
class CTCLoss(Loss):
    r"""Connectionist Temporal Classification loss (npx.ctc_loss with blank_label='last').

    Parameters
    ----------
    layout : str, default 'NTC'
        Layout of pred: 'NTC' (batch, time, alphabet) or 'TNC'.
    label_layout : str, default 'NT'
        Layout of label: 'NT' or 'TN'.
    weight : float or None
        Global scalar weight for loss.

    Inputs: pred (unnormalized activations; channel alphabet_size - 1 is the blank), label
    (zero-based, padded with -1), optional pred_lengths and label_lengths (batch_size,) and
    sample_weight. Output: (batch_size,).
    """

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"[CTCLoss] layout (of pred) must be 'NTC' or 'TNC', got {layout!r}")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"[CTCLoss] label_layout must be 'NT' or 'TN', got {label_layout!r}")
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def forward(self, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        if pred.ndim != 3:
            raise ValueError(f"[CTCLoss] pred must be 3-d ({self._layout}), got shape "
                             f"{tuple(pred.shape)}")
        if label.ndim != 2:
            raise ValueError(f"[CTCLoss] label must be 2-d ({self._label_layout}), got shape "
                             f"{tuple(label.shape)}")
        if self._layout == "NTC":
            pred = np.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = np.swapaxes(label, 0, 1)
        loss = npx.ctc_loss(pred, label, pred_lengths, label_lengths,
                            use_data_lengths=pred_lengths is not None,
                            use_label_lengths=label_lengths is not None,
                            blank_label="last")
        return _apply_weighting(loss, self._weight, sample_weight,
                                type(self).__name__)
