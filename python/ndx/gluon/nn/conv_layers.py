"""Convolution, transposed convolution and pooling layers over npx.convolution /
npx.deconvolution / npx.pooling, 1-d (NCW), 2-d (NCHW) and 3-d (NCDHW), with MXNet 2.0's
signatures and defaults. Other layouts (NWC, NHWC, NDHWC) raise NotImplementedError."""
from ... import numpy_extension as npx
from ..block import HybridBlock
from ..parameter import Parameter
from .basic_layers import _activation, _check_activation

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _tuple(v, n, name, what="argument"):
    """An int or a sequence of n ints as an n-tuple."""
    if isinstance(v, bool):
        raise TypeError(f"[{name}] {what} must be an int or a tuple of {n} ints, got {v!r}")
    t = (v,) * n if isinstance(v, int) else tuple(v)
    if len(t) != n or not all(isinstance(i, int) and not isinstance(i, bool) for i in t):
        raise ValueError(f"[{name}] {what} must be an int or a tuple of {n} ints, got {v!r}")
    return t


def _check_layout(layout, ndim, name):
    want = _LAYOUTS[ndim]
    if layout != want:
        raise NotImplementedError(f"[{name}] layout {layout!r} is not supported; ndx runs "
                                  f"{ndim}-d layers in layout {want!r} only")


def _check_input(x, ndim, name):
    if x.ndim != ndim + 2:
        raise ValueError(f"[{name}] expects {ndim + 2}-d input ({_LAYOUTS[ndim]}), got shape "
                         f"{tuple(x.shape)}")


class _Conv(HybridBlock):
    """An n-d convolution (transpose=False) or transposed convolution (transpose=True)."""

    def _alias(self):
        return "conv"  # MXNet 1.x's prefix base ('conv0_')

    def __init__(self, ndim, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels, activation, use_bias, weight_initializer, bias_initializer,
                 output_padding=None):
        super().__init__()
        transpose = output_padding is not None
        name = f"Conv{ndim}D" + ("Transpose" if transpose else "")
        self._name = name
        _check_layout(layout, ndim, name)
        for what, v, low in (("channels", channels, 1), ("groups", groups, 1),
                             ("in_channels", in_channels, 0)):
            if not isinstance(v, int) or isinstance(v, bool) or v < low:
                raise ValueError(f"[{name}] {what} must be an int >= {low}, got {v!r}")
        if transpose and channels % groups:
            raise ValueError(f"[{name}] channels {channels} are not divisible by groups {groups}")
        if in_channels % groups:
            raise ValueError(f"[{name}] in_channels {in_channels} are not divisible by groups "
                             f"{groups}")
        _check_activation(activation)
        self._ndim, self._transpose = ndim, transpose
        self._kernel = _tuple(kernel_size, ndim, name, "kernel_size")
        self._kwargs = {
            "kernel": self._kernel, "stride": _tuple(strides, ndim, name, "strides"),
            "dilate": _tuple(dilation, ndim, name, "dilation"),
            "pad": _tuple(padding, ndim, name, "padding"), "num_filter": channels,
            "num_group": groups, "no_bias": not use_bias, "layout": layout}
        if transpose:
            self.outpad = _tuple(output_padding, ndim, name, "output_padding")
            self._kwargs["adj"] = self.outpad
        self._channels, self._groups, self._act = channels, groups, activation
        self._in_channels = in_channels
        self.weight = Parameter("weight", shape=self._weight_shape(in_channels),
                                init=weight_initializer)
        self.bias = (Parameter("bias", shape=(channels,), init=bias_initializer) if use_bias
                     else None)

    def _weight_shape(self, in_channels):
        if self._transpose:  # (in, out / groups, *kernel)
            return (in_channels, self._channels // self._groups) + self._kernel
        return (self._channels, in_channels // self._groups) + self._kernel

    def _infer_params(self, x, *args):
        _check_input(x, self._ndim, self._name)
        c = x.shape[1]
        if c % self._groups:
            raise ValueError(f"[{self._name}] the {c} input channels (input shape "
                             f"{tuple(x.shape)}) are not divisible by groups {self._groups}")
        self.weight._finish_deferred_init(self._weight_shape(c))
        if self.bias is not None:
            self.bias._finish_deferred_init((self._channels,))

    def forward(self, x):
        self._infer_params(x)
        args = (x, self.weight.data()) + ((self.bias.data(),) if self.bias is not None else ())
        op = npx.deconvolution if self._transpose else npx.convolution
        out = op(*args, **self._kwargs)
        return _activation(out, self._act)

    def __repr__(self):
        shape = self.weight.shape
        c_in = shape[0] if self._transpose else shape[1] * self._groups
        s = (f"{self._name}({c_in or None} -> {self._channels}, kernel_size={self._kernel}, "
             f"stride={self._kwargs['stride']}")
        if any(self._kwargs["pad"]):
            s += f", padding={self._kwargs['pad']}"
        if any(d != 1 for d in self._kwargs["dilate"]):
            s += f", dilation={self._kwargs['dilate']}"
        if self._transpose and any(self.outpad):
            s += f", output_padding={self.outpad}"
        if self._groups != 1:
            s += f", groups={self._groups}"
        if self.bias is None:
            s += ", bias=False"
        if self._act:
            s += f", Activation({self._act})"
        return s + ")"


class Conv1D(_Conv):
    """1-d convolution over (N, C, W) input; out_width = floor((width + 2 * padding -
    dilation * (kernel_size - 1) - 1) / strides) + 1."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout="NCW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0):
        super().__init__(1, channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer)


class Conv2D(_Conv):
    """2-d convolution over (N, C, H, W) input."""

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, layout="NCHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0):
        super().__init__(2, channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer)


class Conv3D(_Conv):
    """3-d convolution over (N, C, D, H, W) input."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout="NCDHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0):
        super().__init__(3, channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer)


class Conv1DTranspose(_Conv):
    """Transposed 1-d convolution (deconvolution) over (N, C, W) input; the weight is
    (in_channels, channels / groups, kernel) and out_width = (width - 1) * strides - 2 *
    padding + dilation * (kernel_size - 1) + 1 + output_padding (output_padding < strides)."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0):
        super().__init__(1, channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding)


class Conv2DTranspose(_Conv):
    """Transposed 2-d convolution (deconvolution) over (N, C, H, W) input."""

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0):
        super().__init__(2, channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding)


class Conv3DTranspose(_Conv):
    """Transposed 3-d convolution (deconvolution) over (N, C, D, H, W) input."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout="NCDHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0):
        super().__init__(3, channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding)


class _Pool(HybridBlock):
    """n-d pooling: pool_type 'max' or 'avg'; strides None means pool_size; ceil_mode picks
    the 'full' output convention; global_pool pools each channel over all positions."""

    def _alias(self):
        return "pool"  # MXNet 1.x's prefix base ('pool0_')

    def __init__(self, ndim, pool_type, pool_size, strides, padding, ceil_mode, global_pool,
                 layout, count_include_pad=True):
        super().__init__()
        kind = "Global" if global_pool else ""
        name = f"{kind}{pool_type.capitalize()}Pool{ndim}D"
        self._name, self._ndim = name, ndim
        _check_layout(layout, ndim, name)
        kernel = _tuple(pool_size, ndim, name, "pool_size")
        self._kwargs = {
            "kernel": kernel,
            "stride": _tuple(strides if strides is not None else kernel, ndim, name, "strides"),
            "pad": _tuple(padding, ndim, name, "padding"), "global_pool": global_pool,
            "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid",
            "count_include_pad": count_include_pad}

    def forward(self, x):
        _check_input(x, self._ndim, self._name)
        return npx._pooling_op(x, **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        if k["global_pool"]:
            return f"{self._name}(layout={k['layout']})"
        return (f"{self._name}(size={k['kernel']}, stride={k['stride']}, padding={k['pad']}, "
                f"ceil_mode={k['pooling_convention'] == 'full'}, layout={k['layout']})")


class MaxPool1D(_Pool):
    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False):
        super().__init__(1, "max", pool_size, strides, padding, ceil_mode, False, layout)


class MaxPool2D(_Pool):
    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False):
        super().__init__(2, "max", pool_size, strides, padding, ceil_mode, False, layout)


class MaxPool3D(_Pool):
    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW"):
        super().__init__(3, "max", pool_size, strides, padding, ceil_mode, False, layout)


class AvgPool1D(_Pool):
    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 count_include_pad=True):
        super().__init__(1, "avg", pool_size, strides, padding, ceil_mode, False, layout,
                         count_include_pad)


class AvgPool2D(_Pool):
    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCHW", count_include_pad=True):
        super().__init__(2, "avg", pool_size, strides, padding, ceil_mode, False, layout,
                         count_include_pad)


class AvgPool3D(_Pool):
    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", count_include_pad=True):
        super().__init__(3, "avg", pool_size, strides, padding, ceil_mode, False, layout,
                         count_include_pad)


class GlobalMaxPool1D(_Pool):
    """The maximum of each channel over all positions: (N, C, W) -> (N, C, 1)."""

    def __init__(self, layout="NCW"):
        super().__init__(1, "max", (1,), None, 0, True, True, layout)


class GlobalMaxPool2D(_Pool):
    """(N, C, H, W) -> (N, C, 1, 1)."""

    def __init__(self, layout="NCHW"):
        super().__init__(2, "max", (1, 1), None, 0, True, True, layout)


class GlobalMaxPool3D(_Pool):
    """(N, C, D, H, W) -> (N, C, 1, 1, 1)."""

    def __init__(self, layout="NCDHW"):
        super().__init__(3, "max", (1, 1, 1), None, 0, True, True, layout)


class GlobalAvgPool1D(_Pool):
    """The average of each channel over all positions: (N, C, W) -> (N, C, 1)."""

    def __init__(self, layout="NCW"):
        super().__init__(1, "avg", (1,), None, 0, True, True, layout)


class GlobalAvgPool2D(_Pool):
    """Averages each channel over all positions; the output is (N, C, 1, 1)."""

    def __init__(self, layout="NCHW"):
        super().__init__(2, "avg", (1, 1), None, 0, True, True, layout)


class GlobalAvgPool3D(_Pool):
    """(N, C, D, H, W) -> (N, C, 1, 1, 1)."""

    def __init__(self, layout="NCDHW"):
        super().__init__(3, "avg", (1, 1, 1), None, 0, True, True, layout)
