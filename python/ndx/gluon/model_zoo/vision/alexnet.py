"""AlexNet in the one-GPU form of Krizhevsky's "One weird trick..." (arXiv 1404.5997), as in
MXNet's model zoo: 64-192-384-256-256 convolutions, two 4096-unit Dense layers with dropout."""
from ... import nn
from ...block import HybridBlock
from ._common import load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """AlexNet for 224x224 inputs; `classes` outputs."""

    def __init__(self, classes=1000):
        super().__init__()
        self.features = nn.HybridSequential()
        self.features.add(
            nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Conv2D(384, kernel_size=3, padding=1, activation="relu"),
            nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"),
            nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Flatten(),
            nn.Dense(4096, activation="relu"), nn.Dropout(0.5),
            nn.Dense(4096, activation="relu"), nn.Dropout(0.5))
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, device=None, root=None, ctx=None, **kwargs):
    """AlexNet; pretrained=True loads `alexnet` from root (see model_store)."""
    return load_pretrained(AlexNet(**kwargs), "alexnet", pretrained, root,
                           device if device is not None else ctx)
