"""MobileNet (Howard et al., arXiv 1704.04861) and MobileNetV2 (Sandler et al., arXiv
1801.04381) as in MXNet's model zoo, with width multipliers 1.0, 0.75, 0.5 and 0.25: depthwise
separable convolutions with BatchNorm; V2's inverted residuals with relu6 and linear
bottlenecks, and a 1x1 convolution without bias as its classifier."""
from .... import numpy as np
from ... import nn
from ...block import HybridBlock
from ._common import load_pretrained

__all__ = ["LinearBottleneck", "MobileNet", "MobileNetV2", "RELU6", "get_mobilenet",
           "get_mobilenet_v2", "mobilenet0_25", "mobilenet0_5", "mobilenet0_75",
           "mobilenet1_0", "mobilenet_v2_0_25", "mobilenet_v2_0_5", "mobilenet_v2_0_75",
           "mobilenet_v2_1_0"]


class RELU6(HybridBlock):
    """min(max(x, 0), 6)."""

    def forward(self, x):
        return np.clip(x, 0, 6)


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False),
            nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels,
              relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


def _check_multiplier(multiplier):
    if not isinstance(multiplier, (int, float)) or isinstance(multiplier, bool) \
            or not multiplier >= 0.25:
        raise ValueError(f"[MobileNet] multiplier must be a number >= 0.25, got {multiplier!r}")


class LinearBottleneck(HybridBlock):
    """Expand 1x1 (t x), depthwise 3x3 (strided), project 1x1 without activation; the input
    is added back when the stride is 1 and the widths agree."""

    def __init__(self, in_channels, channels, t, stride):
        super().__init__()
        self.use_shortcut = stride == 1 and in_channels == channels
        self.out = nn.HybridSequential()
        _add_conv(self.out, in_channels * t, relu6=True)
        _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                  num_group=in_channels * t, relu6=True)
        _add_conv(self.out, channels, active=False, relu6=True)

    def forward(self, x):
        out = self.out(x)
        return out + x if self.use_shortcut else out


class MobileNet(HybridBlock):
    """MobileNet with channels scaled by `multiplier` (>= 0.25)."""

    def __init__(self, multiplier=1.0, classes=1000):
        super().__init__()
        _check_multiplier(multiplier)
        self.features = nn.HybridSequential()
        _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1, stride=2)
        dw_channels = [int(x * multiplier)
                       for x in [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
        channels = [int(x * multiplier)
                    for x in [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        for dwc, c, s in zip(dw_channels, channels, strides):
            _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
        self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNetV2 with channels scaled by `multiplier` (the last 1280 only when > 1)."""

    def __init__(self, multiplier=1.0, classes=1000):
        super().__init__()
        _check_multiplier(multiplier)
        self.features = nn.HybridSequential()
        _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1, relu6=True)
        in_group = [int(x * multiplier)
                    for x in [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3]
        out_group = [int(x * multiplier)
                     for x in [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
                     + [320]]
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        for in_c, c, t, s in zip(in_group, out_group, ts, strides):
            self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t, stride=s))
        last = int(1280 * multiplier) if multiplier > 1.0 else 1280
        _add_conv(self.features, last, relu6=True)
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, 1, use_bias=False), nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def _suffix(multiplier):
    """MXNet's file suffix: 1.0, 0.75, 0.5, 0.25."""
    s = f"{multiplier:.2f}"
    return s[:-1] if s in ("1.00", "0.50") else s


def get_mobilenet(multiplier, pretrained=False, device=None, root=None, ctx=None, **kwargs):
    """MobileNet with a width multiplier; pretrained=True loads `mobilenet<multiplier>`."""
    return load_pretrained(MobileNet(multiplier, **kwargs), f"mobilenet{_suffix(multiplier)}",
                           pretrained, root, device if device is not None else ctx)


def get_mobilenet_v2(multiplier, pretrained=False, device=None, root=None, ctx=None,
                     **kwargs):
    """MobileNetV2 with a width multiplier; pretrained=True loads `mobilenetv2_<multiplier>`."""
    return load_pretrained(MobileNetV2(multiplier, **kwargs),
                           f"mobilenetv2_{_suffix(multiplier)}", pretrained, root,
                           device if device is not None else ctx)


def mobilenet1_0(**kwargs):
    """MobileNet 1.0 (see get_mobilenet)."""
    return get_mobilenet(1.0, **kwargs)


def mobilenet0_75(**kwargs):
    """MobileNet 0.75 (see get_mobilenet)."""
    return get_mobilenet(0.75, **kwargs)


def mobilenet0_5(**kwargs):
    """MobileNet 0.5 (see get_mobilenet)."""
    return get_mobilenet(0.5, **kwargs)


def mobilenet0_25(**kwargs):
    """MobileNet 0.25 (see get_mobilenet)."""
    return get_mobilenet(0.25, **kwargs)


def mobilenet_v2_1_0(**kwargs):
    """MobileNetV2 1.0 (see get_mobilenet_v2)."""
    return get_mobilenet_v2(1.0, **kwargs)


def mobilenet_v2_0_75(**kwargs):
    """MobileNetV2 0.75 (see get_mobilenet_v2)."""
    return get_mobilenet_v2(0.75, **kwargs)


def mobilenet_v2_0_5(**kwargs):
    """MobileNetV2 0.5 (see get_mobilenet_v2)."""
    return get_mobilenet_v2(0.5, **kwargs)


def mobilenet_v2_0_25(**kwargs):
    """MobileNetV2 0.25 (see get_mobilenet_v2)."""
    return get_mobilenet_v2(0.25, **kwargs)
