"""Basic layers, written with ndx ops (their gradients come from the ops' registered ones)."""
import math

import numpy as _onp

from ... import _core
from ... import numpy as np
from ... import numpy_extension as npx
from ..block import Block, HybridBlock
from ..parameter import Parameter

# MXNet 2's act_types (npx.activation's)
ACTIVATIONS = (None, "relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish")


def _check_activation(act):
    if act not in ACTIVATIONS:
        raise ValueError(f"[Activation] unknown activation {act!r}; expected one of "
                         f"{', '.join(repr(a) for a in ACTIVATIONS[1:])}")


def _activation(x, act):
    if act is None:
        return x
    if act == "relu":
        return npx.relu(x) if hasattr(npx, "relu") else np.maximum(x, 0.0)
    if act == "sigmoid":
        return npx.sigmoid(x) if hasattr(npx, "sigmoid") else 1.0 / (1.0 + np.exp(-x))
    if act == "tanh":
        return np.tanh(x)
    _check_activation(act)
    # (softrelu without overflow: log(1 + exp(x)) gave inf from x = 89 in float32)
    return npx._activation_op(x, act_type=act)


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
        """The i-th child; a slice gives a new container of the same type holding those
        children (the same blocks, so their parameters are shared), as in MXNet."""
        picked = list(self._children.values())[i]
        if not isinstance(i, slice):
            return picked
        net = type(self)()
        if hasattr(self, "_axis"):  # (a Concatenate keeps its axis)
            object.__setattr__(net, "_axis", self._axis)
        net.add(*picked)
        return net


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
        # (MXNet's: the activation block's repr, 'linear' without one)
        act = f"Activation({self._act})" if self._act is not None else "linear"
        return f"Dense({self.weight.shape[1] or None} -> {self._units}, {act})"


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
    rest by 1 / (1 - rate); the identity in predict mode. With `axes`, one mask value is shared
    along those axes (variational dropout, e.g. axes=(1,) drops whole time steps' features
    alike over a (N, T, C) sequence), as MXNet's Dropout(rate, axes)."""

    def __init__(self, rate, axes=()):
        super().__init__()
        if not 0 <= rate < 1:
            raise ValueError(f"[Dropout] rate must be in [0, 1), got {rate}")
        self._rate = rate
        self._axes = () if axes is None else \
            tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)

    def forward(self, x):
        if self._rate == 0:
            return x
        if self._axes:
            return npx._dropout_op(x, p=self._rate, axes=self._axes)
        return npx._dropout_op(x, p=self._rate)

    def __repr__(self):
        return f"Dropout(p = {self._rate}, axes={self._axes})"


class Flatten(HybridBlock):
    """(N, ...) -> (N, product of the rest). Traced, it records npx.reshape's (-2, -1) codes,
    so a hybridized or exported graph serves every batch size (x.shape[0] would be baked in);
    imperatively, a plain reshape (npx.reshape's code parsing costs about 5 us a call)."""

    def forward(self, x):
        if x.ndim == 0:
            raise ValueError("[Flatten] expects an array with a batch dimension, got a 0-d one")
        if _core._is_tracing():
            return npx.reshape(x, (-2, -1))
        return x.reshape(x.shape[0], -1)


class Embedding(HybridBlock):
    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False):
        # (sparse_grad: MXNet's row_sparse gradient. ndx's gradient buffer stays dense; the
        # Trainer gives the optimizer its nonzero rows, so lazy_update skips the other rows)
        super().__init__()
        self._sparse_grad = bool(sparse_grad)
        for what, v in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"[Embedding] {what} must be a positive int, got {v!r}")
        self._input_dim, self._output_dim = input_dim, output_dim
        self.weight = Parameter("weight", shape=(input_dim, output_dim), dtype=dtype,
                                init=weight_initializer,
                                grad_stype="row_sparse" if sparse_grad else "default")

    def __repr__(self):
        return (f"{type(self).__name__}({self._input_dim} -> {self._output_dim}, "
                f"{_onp.dtype(self.weight.dtype).name})")

    def forward(self, x):
        if not hasattr(npx, "embedding"):
            raise NotImplementedError("[Embedding] needs the npx.embedding op")
        if self.weight.grad_stype == "row_sparse":  # (kept on the op: an export says so)
            return npx._embedding_op(x, self.weight.data(), input_dim=self._input_dim,
                                     output_dim=self._output_dim, sparse_grad=True)
        return npx._embedding_op(x, self.weight.data(), input_dim=self._input_dim,
                                 output_dim=self._output_dim)


class LayerNorm(HybridBlock):
    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0):
        super().__init__()
        self._axis, self._eps = axis, epsilon
        # (MXNet: scale=False / center=False keep gamma / beta, their grad_req 'null', so
        # they stay at their initial ones / zeros)
        self.gamma = Parameter("gamma", shape=(in_channels,), init=gamma_initializer,
                               grad_req="write" if scale else "null")
        self.beta = Parameter("beta", shape=(in_channels,), init=beta_initializer,
                              grad_req="write" if center else "null")

    def forward(self, x):
        c = x.shape[self._axis]
        self.gamma._finish_deferred_init((c,))
        self.beta._finish_deferred_init((c,))
        if not hasattr(npx, "layer_norm"):
            raise NotImplementedError("[LayerNorm] needs the npx.layer_norm op")
        return npx._layer_norm_op(x, self.gamma.data(), self.beta.data(), axis=self._axis,
                                  eps=self._eps)


class BatchNorm(HybridBlock):
    """Normalizes over the batch: in training mode (autograd.record()) with the batch's
    statistics, updating the running ones in place; in predict mode with the running ones."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, fuse_relu=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", in_channels=0):
        super().__init__()
        if fuse_relu and not isinstance(self, BatchNormReLU):
            raise ValueError("[BatchNorm] fuse_relu=True: use nn.BatchNormReLU for BatchNorm "
                             "followed by relu")
        self._axis, self._momentum, self._eps = axis, momentum, epsilon
        self._scale, self._global = scale, use_global_stats
        self.gamma = Parameter("gamma", shape=(in_channels,), init=gamma_initializer,
                               grad_req="write" if scale else "null")
        self.beta = Parameter("beta", shape=(in_channels,), init=beta_initializer,
                              grad_req="write" if center else "null")
        self.running_mean = Parameter("running_mean", shape=(in_channels,),
                                      init=running_mean_initializer, grad_req="null",
                                      differentiable=False)
        self.running_var = Parameter("running_var", shape=(in_channels,),
                                     init=running_variance_initializer, grad_req="null",
                                     differentiable=False)

    def cast(self, dtype):
        # MXNet: BatchNorm keeps float32 parameters and statistics in a float16 model (its
        # op takes float16 data with float32 parameters), so net.cast('float16') leaves them
        try:
            half = _onp.dtype(dtype) == _onp.float16
        except TypeError:  # ('bfloat16', which NumPy does not know)
            half = False
        if half:
            dtype = "float32"
        super().cast(dtype)

    def forward(self, x):
        c = x.shape[self._axis]
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p._finish_deferred_init((c,))
        # (float16 / bfloat16 data with the float32 parameters net.cast('float16') and AMP
        # leave: the op computes in float32 and returns the data's dtype, as MXNet's)
        return npx._batch_norm_op(x, self.gamma.data(), self.beta.data(),
                                  self.running_mean.data(), self.running_var.data(),
                                  eps=self._eps, momentum=self._momentum, axis=self._axis,
                                  fix_gamma=not self._scale, use_global_stats=self._global)


# ---------------------------------------------------------------- Lambda / HybridLambda
def _np_or_npx(layer, name):
    """The np (else npx) function called `name`."""
    if hasattr(np, name) and callable(getattr(np, name)):
        return getattr(np, name)
    if hasattr(npx, name) and callable(getattr(npx, name)):
        return getattr(npx, name)
    raise ValueError(f"[{layer}] function name {name!r} is not found in np or npx")


def _lambda_function(layer, function):
    if isinstance(function, str):
        return _np_or_npx(layer, function), function
    if callable(function):
        return function, getattr(function, "__name__", type(function).__name__)
    raise ValueError(f"[{layer}] function must be a callable or the name of an np / npx "
                     f"function, got {function!r} of type {type(function).__name__}")


def _takes_f(function):
    """Whether a HybridLambda function is MXNet 1.x's `function(F, x, *args)`."""
    import inspect
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0] == "F"


class Lambda(Block):
    """Wraps a function, or the name of an np / npx function, as a Block:
    Lambda('tanh'), Lambda(lambda x: npx.leaky_relu(x, slope=0.1))."""

    def __init__(self, function, prefix=None):
        super().__init__()
        self._func_impl, self._func_name = _lambda_function("Lambda", function)

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f"Lambda({self._func_name})"


class HybridLambda(HybridBlock):
    """Wraps a function of registered ops, or the name of an np / npx function, as a
    HybridBlock: HybridLambda('tanh'), HybridLambda(lambda x: npx.relu(x)). A function whose
    first parameter is named F (MXNet 1.x's function(F, x, *args)) gets hybrid_forward's F."""

    def __init__(self, function, prefix=None):
        super().__init__()
        self._func, self._func_name = _lambda_function("HybridLambda", function)
        self._with_f = not isinstance(function, str) and _takes_f(function)

    def forward(self, x, *args):
        if self._with_f:
            from ..block import F
            return self._func(F, x, *args)
        return self._func(x, *args)

    def __repr__(self):
        return f"HybridLambda({self._func_name})"


# ---------------------------------------------------------------- pixel shuffle / padding
def _factors(layer, factor, n):
    try:
        fs = (int(factor),) * n if not isinstance(factor, (tuple, list)) else tuple(
            int(f) for f in factor)
    except (TypeError, ValueError):
        raise TypeError(f"[{layer}] factor must be an int or {n} ints, got {factor!r}") from None
    if len(fs) != n or any(f < 1 for f in fs):
        raise ValueError(f"[{layer}] factor must be {n} positive int(s), got {factor!r}")
    return fs


class _PixelShuffle(HybridBlock):
    """(N, C * f1 * ... * fn, d1, ..., dn) -> (N, C, d1 * f1, ..., dn * fn): the channels of
    each output pixel block come from consecutive input channels (MXNet's / PyTorch's order)."""

    def __init__(self, factor, ndim):
        super().__init__()
        self._ndim = ndim
        self._factors = _factors(type(self).__name__, factor, ndim)

    def forward(self, x):
        n, fs = self._ndim, self._factors
        name = type(self).__name__
        if x.ndim != n + 2:
            raise ValueError(f"[{name}] expects {n + 2}-d input (N, C, {n} spatial dims), got "
                             f"shape {tuple(x.shape)}")
        block = math.prod(fs)
        if x.shape[1] % block:
            raise ValueError(f"[{name}] the {x.shape[1]} channels are not divisible by the "
                             f"product of the factors {fs} ({block})")
        batch, c, spatial = x.shape[0], x.shape[1] // block, tuple(x.shape[2:])
        x = x.reshape((batch, c) + fs + spatial)  # (N, C, f1..fn, d1..dn)
        # interleave: (N, C, d1, f1, d2, f2, ...)
        order = (0, 1) + tuple(a for i in range(n) for a in (2 + n + i, 2 + i))
        x = np.transpose(x, order)
        return x.reshape((batch, c) + tuple(d * f for d, f in zip(spatial, fs)))

    def __repr__(self):
        f = self._factors[0] if self._ndim == 1 else self._factors
        return f"{type(self).__name__}({f})"


class PixelShuffle1D(_PixelShuffle):
    """(N, f * C, W) -> (N, C, W * f)."""

    def __init__(self, factor):
        super().__init__(factor, 1)


class PixelShuffle2D(_PixelShuffle):
    """(N, f1 * f2 * C, H, W) -> (N, C, H * f1, W * f2); factor: an int or (f1, f2)."""

    def __init__(self, factor):
        super().__init__(factor, 2)


class PixelShuffle3D(_PixelShuffle):
    """(N, f1 * f2 * f3 * C, D, H, W) -> (N, C, D * f1, H * f2, W * f3)."""

    def __init__(self, factor):
        super().__init__(factor, 3)


def _reflect(x, axis, before, after):
    """x padded along axis with its mirror image (edge not repeated), widths < the axis length:
    reversed slices and one concatenation, differentiable and traceable (np.pad's fast path
    writes into a new array, which a hybridize trace cannot record)."""
    if not before and not after:
        return x
    n = x.shape[axis]

    def part(start, stop):
        key = [slice(None)] * x.ndim
        key[axis] = slice(start, stop if stop >= 0 else None, -1)
        return x[tuple(key)]

    parts = ([part(before, 0)] if before else []) + [x] + (
        [part(n - 2, n - 2 - after)] if after else [])
    return np.concatenate(parts, axis=axis)


class ReflectionPad2D(HybridBlock):
    """Pads the last two axes of (N, C, H, W) input with their reflection (the edge value not
    repeated, NumPy's mode='reflect'). padding: an int for all four sides, or MXNet's 8-tuple
    of (before, after) widths per axis, whose first four (N and C) must be 0."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if not isinstance(padding, (tuple, list)) or len(padding) != 8 or not all(
                isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in padding):
            raise ValueError(f"[ReflectionPad2D] padding must be an int >= 0 or 8 such ints "
                             f"((before, after) per axis of NCHW), got {padding!r}")
        if any(padding[:4]):
            raise ValueError(f"[ReflectionPad2D] pads H and W only: the first four widths (N "
                             f"and C) must be 0, got {tuple(padding)}")
        self._padding = tuple(padding)

    def forward(self, x):
        if x.ndim != 4:
            raise ValueError(f"[ReflectionPad2D] expects 4-d input (N, C, H, W), got shape "
                             f"{tuple(x.shape)}")
        p = self._padding
        for axis, (before, after) in ((2, p[4:6]), (3, p[6:8])):
            if max(before, after) >= x.shape[axis]:
                raise ValueError(f"[ReflectionPad2D] padding {max(before, after)} must be less "
                                 f"than the size {x.shape[axis]} of axis {axis}")
        return _reflect(_reflect(x, 2, *p[4:6]), 3, *p[6:8])

    def __repr__(self):
        return f"ReflectionPad2D({self._padding})"


# ---------------------------------------------------------------- GroupNorm / InstanceNorm
class _ChannelNorm(HybridBlock):
    """gamma and beta of one value per channel (axis 1), deferred until the input is seen."""

    def __init__(self, center, scale, beta_initializer, gamma_initializer, in_channels):
        super().__init__()
        self.gamma = Parameter("gamma", grad_req="write" if scale else "null",
                               shape=(in_channels,), init=gamma_initializer)
        self.beta = Parameter("beta", grad_req="write" if center else "null",
                              shape=(in_channels,), init=beta_initializer)

    def _channels(self, x, axis):
        name = type(self).__name__
        if x.ndim < 2:
            raise ValueError(f"[{name}] expects (N, C, ...) input, got shape {tuple(x.shape)}")
        c = x.shape[axis]
        self.gamma._finish_deferred_init((c,))
        self.beta._finish_deferred_init((c,))
        return c

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args}, in_channels={self.gamma.shape[0]})"


class GroupNorm(_ChannelNorm):
    """Group normalization (Wu and He, 2018) of (N, C, ...) input: each sample's channels in
    num_groups groups, each group normalized, then scaled and shifted per channel."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0):
        if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups < 1:
            raise ValueError(f"[GroupNorm] num_groups must be a positive int, got "
                             f"{num_groups!r}")
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels)
        self._num_groups, self._epsilon = num_groups, epsilon
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}

    def forward(self, x):
        self._channels(x, 1)
        return npx.group_norm(x, self.gamma.data(), self.beta.data(),
                              num_groups=self._num_groups, eps=self._epsilon)


class InstanceNorm(_ChannelNorm):
    """Instance normalization (Ulyanov et al., 2016): each channel (`axis`) of each sample
    normalized over the remaining axes, then scaled and shifted per channel. MXNet's defaults:
    center=True, scale=False."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0):
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels)
        self._axis, self._epsilon = axis, epsilon
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}

    def forward(self, x):
        if x.ndim < 3:
            raise ValueError(f"[InstanceNorm] expects (N, C, spatial...) input, at least 3-d, "
                             f"got shape {tuple(x.shape)}")
        if not -x.ndim <= self._axis < x.ndim:
            raise ValueError(f"[InstanceNorm] axis {self._axis} is out of range for "
                             f"{x.ndim}-d input")
        axis = self._axis % x.ndim
        self._channels(x, axis)
        if axis != 1:
            x = np.swapaxes(x, 1, axis)
        out = npx.instance_norm(x, self.gamma.data(), self.beta.data(), eps=self._epsilon)
        return np.swapaxes(out, 1, axis) if axis != 1 else out


# ---------------------------------------------------------------- containers and aliases
def _concat_init(block, axis):
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"[{type(block).__name__}] axis must be an int, got {axis!r}")
    block._axis = axis


class Concatenate(Sequential):
    """Runs every child on the same input and concatenates their outputs along `axis`
    (MXNet 2's nn.Concatenate; gluon.contrib.nn.Concurrent in MXNet 1.x)."""

    def __init__(self, axis=-1, prefix=None, params=None):  # prefix / params: MXNet 1.x's
        super().__init__()
        _concat_init(self, axis)

    def forward(self, x):
        if not self._children:
            raise ValueError(f"[{type(self).__name__}] has no children to concatenate")
        return np.concatenate([child(x) for child in self._children.values()], axis=self._axis)


class HybridConcatenate(HybridBlock):
    """Concatenate, hybridizable (MXNet 2's nn.HybridConcatenate; HybridConcurrent in 1.x)."""

    def __init__(self, axis=-1, prefix=None, params=None):  # prefix / params: MXNet 1.x's
        super().__init__()
        _concat_init(self, axis)

    add = Sequential.add
    forward = Concatenate.forward
    __len__ = Sequential.__len__
    __getitem__ = Sequential.__getitem__


class Identity(HybridBlock):
    """Returns its input (a branch of a Concatenate that passes the input through)."""

    def forward(self, x):
        return x


class SyncBatchNorm(BatchNorm):
    """MXNet's cross-device BatchNorm. ndx runs a block on one device, where the batch's
    statistics are the device's own, so this is BatchNorm; num_devices is checked and kept."""

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, **kwargs):
        if num_devices is not None and (not isinstance(num_devices, int) or num_devices < 1):
            raise ValueError(f"[SyncBatchNorm] num_devices must be an int >= 1, got "
                             f"{num_devices!r}")
        super().__init__(momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, in_channels=in_channels, **kwargs)
        self.num_devices = num_devices


class BatchNormReLU(BatchNorm):
    """BatchNorm followed by relu (MXNet's fused nn.BatchNormReLU)."""

    def forward(self, x):
        return npx.relu(super().forward(x))
