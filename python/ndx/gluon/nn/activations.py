"""Activation layers (MXNet 2.0's gluon.nn.activations): LeakyReLU, PReLU, ELU, SELU, GELU,
Swish and SiLU, over npx.leaky_relu and npx.sigmoid (registered ops, so their gradients are
the ops' and hybridize() captures them)."""
from ... import initializer
from ... import numpy_extension as npx
from ..block import HybridBlock
from ..parameter import Parameter

__all__ = ["ELU", "GELU", "LeakyReLU", "PReLU", "SELU", "SiLU", "Swish"]


def _number(layer, what, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"[{layer}] {what} must be a number, got {type(v).__name__}")
    return float(v)


class LeakyReLU(HybridBlock):
    """x for x >= 0, alpha * x below: npx.leaky_relu(x, act_type='leaky', slope=alpha)."""

    def __init__(self, alpha, **kwargs):
        super().__init__(**kwargs)
        alpha = _number("LeakyReLU", "alpha", alpha)
        if alpha < 0:
            raise ValueError(f"[LeakyReLU] alpha (the slope for x < 0) must be >= 0, got {alpha}")
        self._alpha = alpha

    def forward(self, x):
        return npx.leaky_relu(x, act_type="leaky", slope=self._alpha)

    def __repr__(self):
        return f"LeakyReLU({self._alpha})"


class PReLU(HybridBlock):
    """Leaky ReLU with learned slopes `alpha`: one (in_channels=1) or one per channel along
    axis 1 (in_channels=C), initialized by alpha_initializer (0.25 by default, as MXNet)."""

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(in_channels, bool) or not isinstance(in_channels, int) or in_channels < 1:
            raise ValueError(f"[PReLU] in_channels must be a positive int, got {in_channels!r}")
        self.alpha = Parameter("alpha", shape=(in_channels,), init=alpha_initializer)

    def forward(self, x):
        return npx.leaky_relu(x, gamma=self.alpha.data(), act_type="prelu")

    def __repr__(self):
        return f"PReLU(in_channels={self.alpha.shape[0]})"


class ELU(HybridBlock):
    """x for x > 0, alpha * (exp(x) - 1) below (Clevert et al., 2016)."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = _number("ELU", "alpha", alpha)

    def forward(self, x):
        return npx.leaky_relu(x, act_type="elu", slope=self._alpha)

    def __repr__(self):
        return f"ELU({self._alpha})"


class SELU(HybridBlock):
    """lambda * (x > 0 ? x : alpha * (exp(x) - 1)) with SELU's constants (Klambauer et al.,
    2017)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def forward(self, x):
        return npx.leaky_relu(x, act_type="selu")

    def __repr__(self):
        return "SELU()"


class GELU(HybridBlock):
    """x * Phi(x) (approximation='erf', exact) or its tanh approximation ('tanh')."""

    def __init__(self, approximation="erf", **kwargs):
        super().__init__(**kwargs)
        if approximation not in ("erf", "tanh"):
            raise ValueError(f"[GELU] approximation must be 'erf' or 'tanh', got "
                             f"{approximation!r}")
        self._act_type = "gelu_" + approximation

    def forward(self, x):
        return npx.leaky_relu(x, act_type=self._act_type)

    def __repr__(self):
        return f"GELU({self._act_type[len('gelu_'):]})"


class Swish(HybridBlock):
    """x * sigmoid(beta * x) (Ramachandran et al., 2017)."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = _number("Swish", "beta", beta)

    def forward(self, x):
        return x * npx.sigmoid(self._beta * x)

    def __repr__(self):
        return f"Swish({self._beta})"


class SiLU(HybridBlock):
    """x * sigmoid(x)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def forward(self, x):
        return x * npx.sigmoid(x)

    def __repr__(self):
        return "SiLU()"
