"""Losses: per-sample values (averaged over all axes but the batch axis)."""
from .. import numpy as np
from .. import numpy_extension as npx
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SoftmaxCrossEntropyLoss",
           "SigmoidBinaryCrossEntropyLoss"]


class Loss(HybridBlock):
    def __init__(self, weight=None, batch_axis=0):
        super().__init__()
        self._weight, self._batch_axis = weight, batch_axis

    def _finish(self, loss, sample_weight=None):
        if sample_weight is not None:
            loss = loss * sample_weight
        if self._weight is not None:
            loss = loss * self._weight
        axes = tuple(i for i in range(loss.ndim) if i != self._batch_axis)
        return np.mean(loss, axis=axes) if axes else loss


def _check_shapes(name, pred, label):
    if pred.shape[0] != label.shape[0]:
        raise ValueError(f"[{name}] pred has batch size {pred.shape[0]}, label {label.shape[0]}")


class L2Loss(Loss):
    """0.5 * (pred - label)^2."""

    def __init__(self, weight=1.0, batch_axis=0):
        super().__init__(weight, batch_axis)

    def forward(self, pred, label, sample_weight=None):
        _check_shapes("L2Loss", pred, label)
        label = label.reshape(pred.shape)
        return self._finish(np.square(pred - label) * 0.5, sample_weight)


class L1Loss(Loss):
    """|pred - label|."""

    def forward(self, pred, label, sample_weight=None):
        _check_shapes("L1Loss", pred, label)
        label = label.reshape(pred.shape)
        return self._finish(np.abs(pred - label), sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross entropy on logits (stable form) or on probabilities (from_sigmoid)."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0):
        super().__init__(weight, batch_axis)
        self._from_sigmoid = from_sigmoid

    def forward(self, pred, label, sample_weight=None):
        _check_shapes("SigmoidBinaryCrossEntropyLoss", pred, label)
        label = label.reshape(pred.shape)
        if self._from_sigmoid:
            eps = 1e-12
            loss = -(np.log(pred + eps) * label + np.log(1.0 - pred + eps) * (1.0 - label))
        else:
            loss = np.maximum(pred, 0.0) - pred * label + np.log(1.0 + np.exp(-np.abs(pred)))
        return self._finish(loss, sample_weight)


def _log_softmax(x, axis):
    if hasattr(npx, "log_softmax"):
        return npx.log_softmax(x, axis=axis)
    shifted = x - np.max(x, axis=axis, keepdims=True)  # stable: the max is subtracted
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _pick(x, index, axis):
    if hasattr(npx, "pick"):
        return npx.pick(x, index, axis=axis, keepdims=True)
    classes = x.shape[axis]
    shape = [1] * x.ndim
    shape[axis] = classes
    onehot = np.equal(np.arange(classes).reshape(shape),
                      index.astype("int64").reshape(index.shape + (1,) * (x.ndim - index.ndim)))
    return np.sum(x * onehot, axis=axis, keepdims=True)


class SoftmaxCrossEntropyLoss(Loss):
    """-log softmax(pred)[label]; labels are class indices (sparse_label) or distributions."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0):
        super().__init__(weight, batch_axis)
        self._axis, self._sparse, self._from_logits = axis, sparse_label, from_logits

    def forward(self, pred, label, sample_weight=None):
        _check_shapes("SoftmaxCrossEntropyLoss", pred, label)
        if not self._from_logits:
            pred = _log_softmax(pred, self._axis)
        if self._sparse:
            loss = -_pick(pred, label, self._axis)
        else:
            loss = -np.sum(pred * label, axis=self._axis, keepdims=True)
        return self._finish(loss, sample_weight)
