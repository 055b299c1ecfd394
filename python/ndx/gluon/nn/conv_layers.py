"""Convolution and pooling layers over npx.convolution / npx.pooling (NCW and NCHW layouts)."""
from ... import numpy_extension as npx
from ..block import HybridBlock
from ..parameter import Parameter
from .basic_layers import _activation, _check_activation


def _tuple(v, n, name):
    t = (v,) * n if isinstance(v, int) else tuple(v)
    if len(t) != n:
        raise ValueError(f"[{name}] expected {n} values, got {t}")
    return t


class _Conv(HybridBlock):
    def __init__(self, ndim, channels, kernel_size, strides, padding, dilation, groups,
                 activation, use_bias, in_channels, weight_initializer, bias_initializer):
        super().__init__()
        name = f"Conv{ndim}D"
        if channels <= 0:
            raise ValueError(f"[{name}] channels must be > 0, got {channels}")
        _check_activation(activation)
        self._kernel = _tuple(kernel_size, ndim, name)
        self._stride = _tuple(strides, ndim, name)
        self._pad = _tuple(padding, ndim, name)
        self._dilate = _tuple(dilation, ndim, name)
        self._channels, self._groups, self._act = channels, groups, activation
        self._in = in_channels
        in_per_group = in_channels // groups if in_channels else 0
        self.weight = Parameter("weight", shape=(channels, in_per_group) + self._kernel,
                                init=weight_initializer)
        self.bias = (Parameter("bias", shape=(channels,), init=bias_initializer) if use_bias
                     else None)

    def forward(self, x):
        c = x.shape[1]
        self.weight._finish_deferred_init((self._channels, c // self._groups) + self._kernel)
        if self.bias is not None:
            self.bias._finish_deferred_init((self._channels,))
        args = (x, self.weight.data()) + ((self.bias.data(),) if self.bias is not None else ())
        out = npx.convolution(*args, kernel=self._kernel, stride=self._stride, pad=self._pad,
                              dilate=self._dilate, num_filter=self._channels,
                              num_group=self._groups, no_bias=self.bias is None)
        return _activation(out, self._act)


class Conv1D(_Conv):
    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 activation=None, use_bias=True, in_channels=0, weight_initializer=None,
                 bias_initializer="zeros"):
        super().__init__(1, channels, kernel_size, strides, padding, dilation, groups, activation,
                         use_bias, in_channels, weight_initializer, bias_initializer)


class Conv2D(_Conv):
    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, activation=None, use_bias=True, in_channels=0,
                 weight_initializer=None, bias_initializer="zeros"):
        super().__init__(2, channels, kernel_size, strides, padding, dilation, groups, activation,
                         use_bias, in_channels, weight_initializer, bias_initializer)


class _Pool(HybridBlock):
    def __init__(self, pool_type, pool_size, strides, padding, global_pool, ndim=2,
                 count_include_pad=True, ceil_mode=False):
        super().__init__()
        name = f"{pool_type.capitalize()}Pool{ndim}D"
        self._type, self._global = pool_type, global_pool
        self._kernel = _tuple(pool_size, ndim, name)
        self._stride = _tuple(strides if strides is not None else pool_size, ndim, name)
        self._pad = _tuple(padding, ndim, name)
        self._count_include_pad = count_include_pad
        self._convention = "full" if ceil_mode else "valid"

    def forward(self, x):
        return npx.pooling(x, kernel=self._kernel, pool_type=self._type, stride=self._stride,
                           pad=self._pad, global_pool=self._global,
                           count_include_pad=self._count_include_pad,
                           pooling_convention=self._convention)


class MaxPool2D(_Pool):
    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False):
        super().__init__("max", pool_size, strides, padding, False, ceil_mode=ceil_mode)


class AvgPool2D(_Pool):
    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__("avg", pool_size, strides, padding, False,
                         count_include_pad=count_include_pad, ceil_mode=ceil_mode)


class GlobalAvgPool2D(_Pool):
    """Averages each channel over all positions; the output is (N, C, 1, 1)."""

    def __init__(self):
        super().__init__("avg", (1, 1), (1, 1), 0, True)
