"""ResNet V1 (He et al. 2015, "Deep Residual Learning for Image Recognition") and V2 (He et al.
2016, "Identity Mappings in Deep Residual Networks"), with MXNet's model zoo layout: a
bottleneck V1 strides in its first 1x1 convolution, V2 blocks are pre-activation and V2 starts
with a BatchNorm without scale or centre."""
from .... import numpy_extension as npx
from ... import nn
from ...block import HybridBlock
from ._common import check_choice, load_pretrained

__all__ = ["BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2", "ResNetV1",
           "ResNetV2", "get_resnet"] + [f"resnet{n}_v{v}" for v in (1, 2)
                                       for n in (18, 34, 50, 101, 152)]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _projection(channels, stride, in_channels, with_bn):
    """The shortcut's 1x1 convolution (and BatchNorm in V1) when the shape changes."""
    conv = nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                     in_channels=in_channels)
    if not with_bn:
        return conv
    seq = nn.HybridSequential()
    seq.add(conv, nn.BatchNorm())
    return seq


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with BatchNorm, added to the shortcut, then relu (ResNet-18 / 34)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0):
        super().__init__()
        self.body = nn.HybridSequential()
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels, 1, channels), nn.BatchNorm())
        self.downsample = _projection(channels, stride, in_channels, True) if downsample else None

    def forward(self, x):
        residual = self.downsample(x) if self.downsample is not None else x
        return npx.relu(self.body(x) + residual)


class BottleneckV1(HybridBlock):
    """1x1 (strided), 3x3 and 1x1 convolutions to 4x the width, with BatchNorm; as in MXNet's
    zoo the 1x1 convolutions keep their biases (ResNet-50 / 101 / 152)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0):
        super().__init__()
        self.body = nn.HybridSequential()
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels // 4, 1, channels // 4),
                      nn.BatchNorm(), nn.Activation("relu"),
                      nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())
        self.downsample = _projection(channels, stride, in_channels, True) if downsample else None

    forward = BasicBlockV1.forward


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: BN, relu, conv, BN, relu, conv, plus the shortcut (taken
    after the first relu when it is projected)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0):
        super().__init__()
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = _projection(channels, stride, in_channels, False) if downsample else None

    def forward(self, x):
        return _preactivated(x, [(self.bn1, self.conv1), (self.bn2, self.conv2)],
                             self.downsample)


def _preactivated(x, layers, downsample):
    """x through (BatchNorm, relu, convolution) layers, plus the shortcut: x itself, or its
    projection taken after the first relu."""
    residual = x
    for i, (bn, conv) in enumerate(layers):
        x = npx.relu(bn(x))
        if i == 0 and downsample is not None:
            residual = downsample(x)
        x = conv(x)
    return x + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck: 1x1, 3x3 (strided) and 1x1 convolutions without biases."""

    def __init__(self, channels, stride, downsample=False, in_channels=0):
        super().__init__()
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = _projection(channels, stride, in_channels, False) if downsample else None

    def forward(self, x):
        return _preactivated(x, [(self.bn1, self.conv1), (self.bn2, self.conv2),
                                 (self.bn3, self.conv3)], self.downsample)


def _stem(features, channels, thumbnail):
    """7x7 / 2 convolution, BN, relu and 3x3 / 2 max pooling; a 3x3 convolution for
    thumbnail (32x32) inputs."""
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(),
                     nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))


def _stage(block, layers, channels, stride, in_channels):
    stage = nn.HybridSequential()
    stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels))
    for _ in range(layers - 1):
        stage.add(block(channels, 1, False, in_channels=channels))
    return stage


def _check_spec(layers, channels):
    if len(layers) != len(channels) - 1:
        raise ValueError(f"[ResNet] channels must have one more entry than layers, got "
                         f"{len(channels)} and {len(layers)}")


class ResNetV1(HybridBlock):
    """ResNet V1: stem, stages of `block` (the first of each stage but the first strides 2),
    global average pooling and a Dense classifier."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False):
        super().__init__()
        _check_spec(layers, channels)
        self.features = nn.HybridSequential()
        _stem(self.features, channels[0], thumbnail)
        for i, num in enumerate(layers):
            self.features.add(_stage(block, num, channels[i + 1], 1 if i == 0 else 2,
                                     channels[i]))
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.Dense(classes, in_units=channels[-1])

    def forward(self, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet V2: an input BatchNorm (no scale or centre), stem, pre-activation stages, a final
    BN and relu, global average pooling and a Dense classifier."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False):
        super().__init__()
        _check_spec(layers, channels)
        self.features = nn.HybridSequential()
        self.features.add(nn.BatchNorm(scale=False, center=False))
        _stem(self.features, channels[0], thumbnail)
        in_channels = channels[0]
        for i, num in enumerate(layers):
            self.features.add(_stage(block, num, channels[i + 1], 1 if i == 0 else 2,
                                     in_channels))
            in_channels = channels[i + 1]
        self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(),
                          nn.Flatten())
        self.output = nn.Dense(classes, in_units=in_channels)

    forward = ResNetV1.forward


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, device=None, root=None, ctx=None,
               **kwargs):
    """ResNet `version` (1 or 2) with num_layers in 18, 34, 50, 101, 152; kwargs go to the
    network (classes, thumbnail). pretrained=True loads `resnet<n>_v<version>` from root."""
    check_choice("num_layers", num_layers, resnet_spec)
    check_choice("version", version, (1, 2))
    block_type, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](resnet_block_versions[version - 1][block_type],
                                           layers, channels, **kwargs)
    return load_pretrained(net, f"resnet{num_layers}_v{version}", pretrained, root,
                           device if device is not None else ctx)


def _constructor(version, num_layers):
    def make(**kwargs):
        return get_resnet(version, num_layers, **kwargs)
    make.__name__ = f"resnet{num_layers}_v{version}"
    make.__doc__ = (f"ResNet-{num_layers} V{version}; pretrained, device, root and the "
                    f"network's classes / thumbnail as get_resnet's.")
    return make


for _v in (1, 2):
    for _n in resnet_spec:
        globals()[f"resnet{_n}_v{_v}"] = _constructor(_v, _n)
del _v, _n
