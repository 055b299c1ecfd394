"""MXNet's vision model zoo: AlexNet, DenseNet, Inception v3, ResNet V1 / V2, SqueezeNet, VGG,
MobileNet and MobileNetV2, with MXNet 2's parameter names (features.*, output.*). Weights start
from the layers' initializers; pretrained=True reads MXNet's parameter file from root
(model_store), as ndx downloads nothing.

    from ndx.gluon.model_zoo import vision
    net = vision.resnet18_v1(classes=10)
    net = vision.get_model("mobilenetv2_0.5")
"""
from . import alexnet as _alexnet
from . import densenet as _densenet
from . import inception as _inception
from . import mobilenet as _mobilenet
from . import resnet as _resnet
from . import squeezenet as _squeezenet
from . import vgg as _vgg
from .alexnet import *  # noqa: F401, F403
from .densenet import *  # noqa: F401, F403
from .inception import *  # noqa: F401, F403
from .mobilenet import *  # noqa: F401, F403
from .resnet import *  # noqa: F401, F403
from .squeezenet import *  # noqa: F401, F403
from .vgg import *  # noqa: F401, F403


def _models():
    m = {f"resnet{n}_v{v}": getattr(_resnet, f"resnet{n}_v{v}")
         for v in (1, 2) for n in (18, 34, 50, 101, 152)}
    m.update({f"vgg{n}{bn}": getattr(_vgg, f"vgg{n}{bn}")
              for n in (11, 13, 16, 19) for bn in ("", "_bn")})
    m.update({f"densenet{n}": getattr(_densenet, f"densenet{n}") for n in (121, 161, 169, 201)})
    m.update({"alexnet": _alexnet.alexnet, "squeezenet1.0": _squeezenet.squeezenet1_0,
              "squeezenet1.1": _squeezenet.squeezenet1_1,
              "inceptionv3": _inception.inception_v3})
    for name, suffix in (("1.0", "1_0"), ("0.75", "0_75"), ("0.5", "0_5"), ("0.25", "0_25")):
        m[f"mobilenet{name}"] = getattr(_mobilenet, f"mobilenet{suffix}")
        m[f"mobilenetv2_{name}"] = getattr(_mobilenet, f"mobilenet_v2_{suffix}")
    return m


def get_model(name, **kwargs):
    """The network called `name` (as MXNet's get_model: 'resnet50_v1', 'vgg16_bn',
    'densenet121', 'squeezenet1.1', 'inceptionv3', 'mobilenet0.5', 'mobilenetv2_1.0', ...);
    kwargs: pretrained, classes, device / ctx, root and the network's own."""
    if not isinstance(name, str):
        raise TypeError(f"[get_model] name must be a str, got {name!r}")
    models = _models()
    key = name.lower()
    if key not in models:
        raise ValueError(f"[get_model] model {name!r} is not supported; available: "
                         f"{', '.join(sorted(models))}")
    return models[key](**kwargs)
