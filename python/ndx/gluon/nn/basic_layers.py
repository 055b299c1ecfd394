"""Basic layers, written with ndx ops (their gradients come from the ops' registered ones)."""
import math

from ... import numpy as np
from ... import numpy_extension as npx
from ..block import Block, HybridBlock
from ..parameter import Parameter

ACTIVATIONS = (None, "relu", "sigmoid", "tanh", "softrelu")


def _check_activation(act):
    if act not in ACTIVATIONS:
        raise ValueError(f"[Activation] unknown activation {act!r}; expected 'relu', 'sigmoid', "
                         "'tanh' or 'softrelu'")


def _activation(x, act):
    if act is None:
        return x
    if act == "relu":
        return npx.relu(x) if hasattr(npx, "relu") else np.maximum(x, 0.0)
    if act == "sigmoid":
        return npx.sigmoid(x) if hasattr(npx, "sigmoid") else 1.0 / (1.0 + np.exp(-x))
    if act == "tanh":
        return np.tanh(x)
    if act == "softrelu":
        return np.log(1.0 + np.exp(x))
    _check_activation(act)


class Sequential(Block):
    """Children run in order."""

    def __init__(self):
        super().__init__()

    def add(self, *blocks):
        for b in blocks:
            self.register_child(b)
        return self

    def forward(self, x, *args):
        for child in self._children.values():
            x = child(x, *args) if args else child(x)
            args = ()
        return x

    def __len__(self):
        return len(self._children)

    def __getitem__(self, i):
        return list(self._children.values())[i]


class HybridSequential(HybridBlock):
    """Children run in order; hybridize() captures the whole chain as one graph."""

    add = Sequential.add
    forward = Sequential.forward
    __len__ = Sequential.__len__
    __getitem__ = Sequential.__getitem__


class Dense(HybridBlock):
    """out = activation(x @ weight.T + bias); x is flattened to 2-d unless flatten=False."""

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0):
        super().__init__()
        if units <= 0:
            raise ValueError(f"[Dense] units must be > 0, got {units}")
        self._units, self._act, self._flatten = units, activation, flatten
        _check_activation(activation)
        self.weight = Parameter("weight", shape=(units, in_units), dtype=dtype,
                                init=weight_initializer)
        self.bias = Parameter("bias", shape=(units,), dtype=dtype,
                              init=bias_initializer) if use_bias else None

    def _infer_params(self, x, *args):
        k = math.prod(x.shape[1:]) if self._flatten else x.shape[-1]
        self.weight._finish_deferred_init((self._units, k))
        if self.bias is not None:
            self.bias._finish_deferred_init((self._units,))

    def forward(self, x):
        self._infer_params(x)
        bias = self.bias.data() if self.bias is not None else None
        out = npx.fully_connected(x, self.weight.data(), bias, num_hidden=self._units,
                                  flatten=self._flatten)
        return _activation(out, self._act)

    def __repr__(self):
        return f"Dense({self.weight.shape[1] or None} -> {self._units}, {self._act})"


class Activation(HybridBlock):
    def __init__(self, activation):
        super().__init__()
        _check_activation(activation)
        self._act = activation

    def forward(self, x):
        return _activation(x, self._act)

    def __repr__(self):
        return f"Activation({self._act})"


class Dropout(HybridBlock):
    """Zeroes elements with probability `rate` in training mode (autograd.record()), scaling the
    rest by 1 / (1 - rate); the identity in predict mode."""

    def __init__(self, rate):
        super().__init__()
        if not 0 <= rate < 1:
            raise ValueError(f"[Dropout] rate must be in [0, 1), got {rate}")
        self._rate = rate

    def forward(self, x):
        if self._rate == 0:
            return x
        if not hasattr(npx, "dropout"):
            raise NotImplementedError("[Dropout] needs the npx.dropout op")
        return npx.dropout(x, p=self._rate)


class Flatten(HybridBlock):
    def forward(self, x):
        return x.reshape(x.shape[0], -1)


class Embedding(HybridBlock):
    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None):
        super().__init__()
        for what, v in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"[Embedding] {what} must be a positive int, got {v!r}")
        self._input_dim, self._output_dim = input_dim, output_dim
        self.weight = Parameter("weight", shape=(input_dim, output_dim), dtype=dtype,
                                init=weight_initializer)

    def forward(self, x):
        if not hasattr(npx, "embedding"):
            raise NotImplementedError("[Embedding] needs the npx.embedding op")
        return npx.embedding(x, self.weight.data(), input_dim=self._input_dim,
                             output_dim=self._output_dim)


class LayerNorm(HybridBlock):
    def __init__(self, axis=-1, epsilon=1e-5, in_channels=0):
        super().__init__()
        self._axis, self._eps = axis, epsilon
        self.gamma = Parameter("gamma", shape=(in_channels,), init="ones")
        self.beta = Parameter("beta", shape=(in_channels,), init="zeros")

    def forward(self, x):
        c = x.shape[self._axis]
        self.gamma._finish_deferred_init((c,))
        self.beta._finish_deferred_init((c,))
        if not hasattr(npx, "layer_norm"):
            raise NotImplementedError("[LayerNorm] needs the npx.layer_norm op")
        return npx.layer_norm(x, self.gamma.data(), self.beta.data(), axis=self._axis,
                              eps=self._eps)


class BatchNorm(HybridBlock):
    """Normalizes over the batch: in training mode (autograd.record()) with the batch's
    statistics, updating the running ones in place; in predict mode with the running ones."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, in_channels=0):
        super().__init__()
        self._axis, self._momentum, self._eps = axis, momentum, epsilon
        self._scale, self._global = scale, use_global_stats
        self.gamma = Parameter("gamma", shape=(in_channels,), init="ones",
                               grad_req="write" if scale else "null")
        self.beta = Parameter("beta", shape=(in_channels,), init="zeros",
                              grad_req="write" if center else "null")
        self.running_mean = Parameter("running_mean", shape=(in_channels,), init="zeros",
                                      grad_req="null", differentiable=False)
        self.running_var = Parameter("running_var", shape=(in_channels,), init="ones",
                                     grad_req="null", differentiable=False)

    def forward(self, x):
        c = x.shape[self._axis]
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p._finish_deferred_init((c,))
        return npx.batch_norm(x, self.gamma.data(), self.beta.data(), self.running_mean.data(),
                              self.running_var.data(), eps=self._eps, momentum=self._momentum,
                              axis=self._axis, fix_gamma=not self._scale,
                              use_global_stats=self._global)
