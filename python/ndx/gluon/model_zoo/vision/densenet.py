"""DenseNet-BC (Huang et al., arXiv 1608.06993) as in MXNet's model zoo: dense layers BN, relu,
1x1 conv (bn_size x growth), BN, relu, 3x3 conv (growth) concatenated to their input;
transitions halve the channels and pool 2x2; a final BN, relu and 7x7 average pooling."""
from ... import nn
from ...block import HybridBlock
from ._common import check_choice, load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "get_densenet"]


def _dense_layer(growth_rate, bn_size, dropout):
    new = nn.HybridSequential()
    new.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False),
            nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new.add(nn.Dropout(dropout))
    out = nn.HybridConcatenate(axis=1)
    out.add(nn.Identity(), new)
    return out


def _dense_block(num_layers, bn_size, growth_rate, dropout):
    out = nn.HybridSequential()
    for _ in range(num_layers):
        out.add(_dense_layer(growth_rate, bn_size, dropout))
    return out


def _transition(channels):
    out = nn.HybridSequential()
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(channels, kernel_size=1, use_bias=False),
            nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet-BC for 224x224 inputs: num_init_features stem channels, growth_rate per dense
    layer, block_config layers per dense block."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000):
        super().__init__()
        self.features = nn.HybridSequential()
        self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                    use_bias=False),
                          nn.BatchNorm(), nn.Activation("relu"),
                          nn.MaxPool2D(pool_size=3, strides=2, padding=1))
        channels = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add(_dense_block(num_layers, bn_size, growth_rate, dropout))
            channels += num_layers * growth_rate
            if i != len(block_config) - 1:
                channels //= 2
                self.features.add(_transition(channels))
        self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7),
                          nn.Flatten())
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, device=None, root=None, ctx=None, **kwargs):
    """DenseNet-num_layers (121, 161, 169, 201); pretrained=True loads `densenet<n>`."""
    check_choice("num_layers", num_layers, densenet_spec)
    net = DenseNet(*densenet_spec[num_layers], **kwargs)
    return load_pretrained(net, f"densenet{num_layers}", pretrained, root,
                           device if device is not None else ctx)


def densenet121(**kwargs):
    """DenseNet-121 (see get_densenet)."""
    return get_densenet(121, **kwargs)


def densenet161(**kwargs):
    """DenseNet-161 (see get_densenet)."""
    return get_densenet(161, **kwargs)


def densenet169(**kwargs):
    """DenseNet-169 (see get_densenet)."""
    return get_densenet(169, **kwargs)


def densenet201(**kwargs):
    """DenseNet-201 (see get_densenet)."""
    return get_densenet(201, **kwargs)
