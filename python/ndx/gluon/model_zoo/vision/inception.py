"""Inception v3 (Szegedy et al., arXiv 1512.00567) as in MXNet's model zoo, for 299x299
inputs: convolutions without bias followed by BatchNorm (epsilon 1e-3) and relu, the A-E
mixed blocks as concatenated branches, 8x8 average pooling, dropout and a Dense classifier (no
auxiliary head)."""
from ... import nn
from ...block import HybridBlock
from ._common import load_pretrained

__all__ = ["Inception3", "inception_v3"]


def _basic_conv(**kwargs):
    out = nn.HybridSequential()
    out.add(nn.Conv2D(use_bias=False, **kwargs), nn.BatchNorm(epsilon=0.001),
            nn.Activation("relu"))
    return out


def _branch(pool, *convs):
    """An optional pooling ('avg': 3x3 / 1 padded, 'max': 3x3 / 2) and basic convolutions
    given as (channels, kernel_size, strides, padding), None keeping the default."""
    out = nn.HybridSequential()
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    names = ("channels", "kernel_size", "strides", "padding")
    for setting in convs:
        out.add(_basic_conv(**{k: v for k, v in zip(names, setting) if v is not None}))
    return out


def _concat(*branches):
    out = nn.HybridConcatenate(axis=1)
    out.add(*branches)
    return out


def _make_a(pool_features):
    return _concat(_branch(None, (64, 1, None, None)),
                   _branch(None, (48, 1, None, None), (64, 5, None, 2)),
                   _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
                   _branch("avg", (pool_features, 1, None, None)))


def _make_b():
    return _concat(_branch(None, (384, 3, 2, None)),
                   _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
                   _branch("max"))


def _make_c(c7):
    return _concat(
        _branch(None, (192, 1, None, None)),
        _branch(None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                (192, (7, 1), None, (3, 0))),
        _branch(None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                (192, (1, 7), None, (0, 3))),
        _branch("avg", (192, 1, None, None)))


def _make_d():
    return _concat(
        _branch(None, (192, 1, None, None), (320, 3, 2, None)),
        _branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
        _branch("max"))


def _split_1x3_3x1():
    return _concat(_branch(None, (384, (1, 3), None, (0, 1))),
                   _branch(None, (384, (3, 1), None, (1, 0))))


def _make_e():
    branch_3x3 = nn.HybridSequential()
    branch_3x3.add(_branch(None, (384, 1, None, None)), _split_1x3_3x1())
    branch_3x3dbl = nn.HybridSequential()
    branch_3x3dbl.add(_branch(None, (448, 1, None, None), (384, 3, None, 1)), _split_1x3_3x1())
    return _concat(_branch(None, (320, 1, None, None)), branch_3x3, branch_3x3dbl,
                   _branch("avg", (192, 1, None, None)))


class Inception3(HybridBlock):
    """Inception v3 for 299x299 inputs; `classes` outputs."""

    def __init__(self, classes=1000):
        super().__init__()
        self.features = nn.HybridSequential()
        self.features.add(
            _basic_conv(channels=32, kernel_size=3, strides=2),
            _basic_conv(channels=32, kernel_size=3),
            _basic_conv(channels=64, kernel_size=3, padding=1),
            nn.MaxPool2D(pool_size=3, strides=2),
            _basic_conv(channels=80, kernel_size=1),
            _basic_conv(channels=192, kernel_size=3),
            nn.MaxPool2D(pool_size=3, strides=2),
            _make_a(32), _make_a(64), _make_a(64), _make_b(),
            _make_c(128), _make_c(160), _make_c(160), _make_c(192), _make_d(),
            _make_e(), _make_e(),
            nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, device=None, root=None, ctx=None, **kwargs):
    """Inception v3; pretrained=True loads `inceptionv3` from root (see model_store)."""
    return load_pretrained(Inception3(**kwargs), "inceptionv3", pretrained, root,
                           device if device is not None else ctx)
