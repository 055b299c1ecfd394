"""VGG (Simonyan and Zisserman, arXiv 1409.1556) with MXNet's model zoo initializers: Xavier
(gaussian, fan-out, magnitude 2) convolutions, normal Dense weights, zero biases; optional
BatchNorm after each convolution."""
from .... import initializer
from ... import nn
from ...block import HybridBlock
from ._common import check_choice, load_pretrained

__all__ = ["VGG", "get_vgg"] + [f"vgg{n}{bn}" for bn in ("", "_bn") for n in (11, 13, 16, 19)]


class VGG(HybridBlock):
    """Blocks of 3x3 convolutions (`layers[i]` of `filters[i]` channels) each ending in 2x2
    max pooling, then Dense 4096, dropout, Dense 4096, dropout and the classifier."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False):
        super().__init__()
        if len(layers) != len(filters):
            raise ValueError(f"[VGG] layers and filters must have one length, got "
                             f"{len(layers)} and {len(filters)}")
        self.features = nn.HybridSequential()
        conv_init = initializer.Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)
        for num, width in zip(layers, filters):
            for _ in range(num):
                self.features.add(nn.Conv2D(width, kernel_size=3, padding=1,
                                            weight_initializer=conv_init,
                                            bias_initializer="zeros"))
                if batch_norm:
                    self.features.add(nn.BatchNorm())
                self.features.add(nn.Activation("relu"))
            self.features.add(nn.MaxPool2D(strides=2))
        for _ in range(2):
            self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                       bias_initializer="zeros"),
                              nn.Dropout(rate=0.5))
        self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros")

    def forward(self, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, device=None, root=None, ctx=None, **kwargs):
    """VGG-num_layers (11, 13, 16, 19); batch_norm=True for the _bn variants."""
    check_choice("num_layers", num_layers, vgg_spec)
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    suffix = "_bn" if kwargs.get("batch_norm") else ""
    return load_pretrained(net, f"vgg{num_layers}{suffix}", pretrained, root,
                           device if device is not None else ctx)


def _constructor(num_layers, batch_norm):
    def make(**kwargs):
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(num_layers, **kwargs)
    make.__name__ = f"vgg{num_layers}{'_bn' if batch_norm else ''}"
    make.__doc__ = f"VGG-{num_layers}{' with BatchNorm' if batch_norm else ''} (see get_vgg)."
    return make


for _n in vgg_spec:
    for _bn in (False, True):
        globals()[f"vgg{_n}{'_bn' if _bn else ''}"] = _constructor(_n, _bn)
del _n, _bn
