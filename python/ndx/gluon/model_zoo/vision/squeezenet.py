"""SqueezeNet 1.0 (Iandola et al., arXiv 1602.07360) and 1.1 (the authors' repository: 2.4x less
computation), as in MXNet's model zoo: fire modules (a 1x1 squeeze, then 1x1 and 3x3 expands
concatenated), ceil-mode pooling, a 1x1 convolution classifier and 13x13 average pooling."""
from ... import nn
from ...block import HybridBlock
from ._common import check_choice, load_pretrained

__all__ = ["SqueezeNet", "get_squeezenet", "squeezenet1_0", "squeezenet1_1"]


def _fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential()
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _fire(squeeze, expand1x1, expand3x3):
    out = nn.HybridSequential()
    out.add(_fire_conv(squeeze, 1))
    paths = nn.HybridConcatenate(axis=1)
    paths.add(_fire_conv(expand1x1, 1), _fire_conv(expand3x3, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """SqueezeNet `version` '1.0' or '1.1' for 224x224 inputs."""

    def __init__(self, version, classes=1000):
        super().__init__()
        check_choice("version", version, ("1.0", "1.1"))
        f = self.features = nn.HybridSequential()
        if version == "1.0":
            f.add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), _pool(),
                  _fire(16, 64, 64), _fire(16, 64, 64), _fire(32, 128, 128), _pool(),
                  _fire(32, 128, 128), _fire(48, 192, 192), _fire(48, 192, 192),
                  _fire(64, 256, 256), _pool(), _fire(64, 256, 256))
        else:
            f.add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), _pool(),
                  _fire(16, 64, 64), _fire(16, 64, 64), _pool(), _fire(32, 128, 128),
                  _fire(32, 128, 128), _pool(), _fire(48, 192, 192), _fire(48, 192, 192),
                  _fire(64, 256, 256), _fire(64, 256, 256))
        f.add(nn.Dropout(0.5))
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                        nn.AvgPool2D(13), nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, device=None, root=None, ctx=None, **kwargs):
    """SqueezeNet '1.0' or '1.1'; pretrained=True loads `squeezenet<version>` from root."""
    return load_pretrained(SqueezeNet(version, **kwargs), f"squeezenet{version}", pretrained,
                           root, device if device is not None else ctx)


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0 (see get_squeezenet)."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1 (see get_squeezenet)."""
    return get_squeezenet("1.1", **kwargs)
