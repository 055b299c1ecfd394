"""Parameter initializers: Uniform, Normal, Xavier, MSRAPrelu, Orthogonal, Bilinear, LSTMBias,
Zero, One, Constant and Mixed. The random ones draw from ndx's generator (np.random), so
ndx.random.seed / np.random.seed make them repeatable.

A subclass either implements values(shape), or, as MXNet's Initializer subclasses do,
_init_weight(name, arr) (and optionally _init_bias, _init_gamma, _init_beta), filling `arr`
in place; the parameter's name picks the method, as in MXNet."""
import math
import re

import numpy as _onp

from . import numpy as np

__all__ = ["Initializer", "InitDesc", "Uniform", "Normal", "Xavier", "MSRAPrelu", "Orthogonal",
           "Bilinear", "LSTMBias", "Zero", "One", "Constant", "Mixed", "create", "register"]


class InitDesc(str):
    """A parameter's name with its attributes, as MXNet's ``mx.init.InitDesc(name,
    attrs=None, global_init=None)``: ``init(InitDesc('fc_weight'), arr)`` fills arr."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


_NOT_WEIGHT = ("bias", "gamma", "beta", "running_mean", "moving_mean", "min", "running_var",
               "moving_var", "max")


def _fills(desc, arr):
    """Whether a call is MXNet's in-place form init(desc, arr)."""
    return isinstance(desc, str) and isinstance(arr, np.ndarray)


class Initializer:
    """Fills a new parameter of `shape` and `dtype` (named `name`, 'weight' when not told);
    subclasses implement `values` or MXNet's `_init_weight(name, arr)`.

    ``init(shape, dtype, device, name)`` returns a new array; MXNet's form ``init(desc,
    arr)`` (desc an InitDesc or a name) fills the array `arr` in place, picking the method
    by the name as MXNet does (``*bias`` zeros, ``*gamma`` ones, ...)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def __call__(self, shape, dtype="float32", device=None, name=None):
        if _fills(shape, dtype):
            desc, arr = shape, dtype
            name = str(desc)
            own = getattr(desc, "attrs", {}).get("__init__")
            if own:  # MXNet: a variable's own initializer fills it as a weight, by any name
                value = create(own)(arr.shape, arr.dtype, name="weight")
                arr[...] = value.to_device(arr.device)
                return None
            if not name.endswith(_NOT_WEIGHT + ("weight",)):
                # MXNet's: a name of no known pattern (an input such as 'data') is not filled
                raise ValueError(f"[initializer] unknown initialization pattern for '{name}': "
                                 f"the name must end in weight, bias, gamma, beta, "
                                 f"moving_mean / moving_var (or running_*), min or max")
            if type(self).values is not Initializer.values and name.endswith(_NOT_WEIGHT):
                value = self._init_by_name(name, arr.shape, arr.dtype)  # bias, gamma, ...
            else:
                value = self(arr.shape, arr.dtype, name=name)
            arr[...] = value.to_device(arr.device)
            return None
        shape = tuple(shape)
        if type(self).values is Initializer.values:
            return self._init_by_name(name or "weight", shape, dtype)
        v = self.values(shape)
        if isinstance(v, np.ndarray):
            return v.astype(dtype)
        return np.array(_onp.asarray(v), dtype=dtype)

    def values(self, shape):
        raise NotImplementedError(f"[initializer] {type(self).__name__} must implement "
                                  "values(shape) or _init_weight(name, arr)")

    def _init_by_name(self, name, shape, dtype):
        """MXNet's dispatch on the parameter's name: *bias, *beta, *running_mean and
        *moving_mean start at 0, *gamma, *running_var and *moving_var at 1 (unless the
        subclass overrides _init_bias / _init_gamma / _init_beta), the rest by
        _init_weight."""
        arr = np.zeros(shape, dtype=dtype)
        if name.endswith("bias"):
            self._init_bias(name, arr)
        elif name.endswith("gamma"):
            self._init_gamma(name, arr)
        elif name.endswith("beta"):
            self._init_beta(name, arr)
        elif name.endswith(("running_mean", "moving_mean", "min")):
            arr[...] = 0.0
        elif name.endswith(("running_var", "moving_var", "max")):
            arr[...] = 1.0
        else:
            self._init_weight(name, arr)
        return arr

    def _init_weight(self, name, arr):
        self.values(arr.shape)  # (raises: neither hook is implemented)

    def _init_bias(self, name, arr):
        arr[...] = 0.0

    def _init_gamma(self, name, arr):
        arr[...] = 1.0

    def _init_beta(self, name, arr):
        arr[...] = 0.0

    def dumps(self):
        """[name, kwargs] as JSON (MXNet's Initializer.dumps)."""
        import json

        def listed(value):  # an array argument (Constant's value) as nested lists, as MXNet
            value = value.asnumpy() if hasattr(value, "asnumpy") else value
            if hasattr(value, "tolist"):
                return value.tolist()
            raise TypeError(f"[initializer] dumps: {type(value).__name__} is not JSON")

        return json.dumps([type(self).__name__.lower(), getattr(self, "_kwargs", {})],
                          default=listed)

    def __repr__(self):
        return f"{type(self).__name__}()"


class Uniform(Initializer):
    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def values(self, shape):
        return np.random.uniform(-self.scale, self.scale, size=shape)


class Normal(Initializer):
    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def values(self, shape):
        return np.random.normal(0.0, self.sigma, size=shape)


class Constant(Initializer):
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def values(self, shape):
        return _onp.full(shape, self.value)


class Zero(Constant):
    def __init__(self):
        super().__init__(0.0)
        self._kwargs = {}  # (MXNet's dumps: '["zero", {}]')


class One(Constant):
    def __init__(self):
        super().__init__(1.0)
        self._kwargs = {}


class Xavier(Initializer):
    """Glorot: scale sqrt(magnitude / fan) with fan from factor_type ('avg', 'in', 'out')."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3.0):
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError(f"[Xavier] rnd_type must be 'uniform' or 'gaussian', got {rnd_type!r}")
        if factor_type not in ("avg", "in", "out"):
            raise ValueError(
                f"[Xavier] factor_type must be 'avg', 'in' or 'out', got {factor_type!r}")
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, magnitude

    def values(self, shape):
        if len(shape) < 2:
            raise ValueError(f"[Xavier] needs a parameter of at least 2 dims, got shape {shape}")
        receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        fan = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = math.sqrt(self.magnitude / fan)
        if self.rnd_type == "uniform":
            return np.random.uniform(-scale, scale, size=shape)
        return np.random.normal(0.0, scale, size=shape)


class MSRAPrelu(Xavier):
    """He et al.'s initialization for (P)ReLU networks: Xavier with rnd_type='gaussian' and
    magnitude 2 / (1 + slope^2)."""

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}  # (MXNet's dumps)
        self.slope = slope


class Orthogonal(Initializer):
    """A (scaled) orthogonal matrix (Saxe et al.): the weight, flattened to
    (shape[0], prod(shape[1:])), has orthonormal rows or columns, times `scale`. rand_type:
    'uniform' or 'normal', the distribution whose SVD gives the matrix."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        if rand_type not in ("uniform", "normal"):
            raise ValueError(f"[Orthogonal] rand_type must be 'uniform' or 'normal', got "
                             f"{rand_type!r}")
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale, self.rand_type = scale, rand_type

    def values(self, shape):
        if len(shape) < 2:
            raise ValueError(f"[Orthogonal] needs a parameter of at least 2 dims, got shape "
                             f"{shape}")
        rows, cols = shape[0], math.prod(shape[1:])
        if self.rand_type == "uniform":
            tmp = np.random.uniform(-1.0, 1.0, size=(rows, cols)).asnumpy()
        else:
            tmp = np.random.normal(0.0, 1.0, size=(rows, cols)).asnumpy()
        u, _, v = _onp.linalg.svd(tmp, full_matrices=False)
        q = u if u.shape == tmp.shape else v
        return (self.scale * q).reshape(shape)


class Bilinear(Initializer):
    """Weights of a bilinear upsampling kernel (for Conv2DTranspose / Deconvolution): each
    (kh, kw) slice is the outer product of two triangle filters."""

    def values(self, shape):
        if len(shape) < 3:
            raise ValueError(f"[Bilinear] needs a convolution weight of at least 3 dims, got "
                             f"shape {shape}")
        h, w = shape[-2], shape[-1]

        def tri(n):
            f = math.ceil(n / 2.0)
            c = (2 * f - 1 - f % 2) / (2.0 * f)
            return 1 - _onp.abs(_onp.arange(n) / f - c)
        kernel = _onp.outer(tri(h), tri(w))
        return _onp.broadcast_to(kernel, shape).copy()


class LSTMBias(Initializer):
    """An LSTM's bias (4 gates stacked: input, forget, cell, output): 0, except the forget
    gate's quarter, which is `forget_bias`."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def values(self, shape):
        if not shape or shape[0] % 4:
            raise ValueError(f"[LSTMBias] needs a bias whose first dim is 4 * hidden, got "
                             f"shape {shape}")
        out = _onp.zeros(shape)
        h = shape[0] // 4
        out[h:2 * h] = self.forget_bias
        return out


class Mixed(Initializer):
    """The first initializer whose pattern (a regular expression, matched from the start of
    the parameter's name) matches: Mixed(['bias', '.*'], [Zero(), Uniform(0.1)])."""

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ValueError(f"[Mixed] {len(patterns)} patterns but {len(initializers)} "
                             "initializers")
        self.map = [(re.compile(p), create(i)) for p, i in zip(patterns, initializers)]

    def __call__(self, shape, dtype="float32", device=None, name=None):
        if _fills(shape, dtype):
            # MXNet's init(desc, arr): the matching initializer fills arr itself, choosing
            # the fill by the name (a *bias of Mixed(['.*'], [Xavier()]) gets zeros)
            desc, arr = shape, dtype
            for pattern, init in self.map:
                if pattern.match(str(desc)):
                    return init(desc, arr)
            raise ValueError(f"[Mixed] parameter {str(desc)!r} matches none of the "
                             "patterns; add '.*' as a catch-all")
        name = name or "weight"
        for pattern, init in self.map:
            if pattern.match(name):
                return init(shape, dtype, device, name=name)
        raise ValueError(f"[Mixed] parameter {name!r} matches none of the patterns; add '.*' "
                         "as a catch-all")


_NAMES = {"zeros": Zero, "zero": Zero, "ones": One, "one": One, "constant": Constant,
          "uniform": Uniform, "normal": Normal, "xavier": Xavier, "msraprelu": MSRAPrelu,
          "orthogonal": Orthogonal, "bilinear": Bilinear, "lstmbias": LSTMBias}


def register(klass):
    """Registers an Initializer subclass under its lower-cased name, for create('name')
    and the string forms of initialize() / weight_initializer."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"[initializer] register expects an Initializer subclass, got "
                        f"{klass!r}")
    _NAMES[klass.__name__.lower()] = klass
    return klass


def create(init, /, **kwargs):
    """An Initializer from an instance, a name ('zeros', 'xavier', ...) with its keyword
    arguments (create('normal', sigma=0.5)), the JSON of Initializer.dumps() or None
    (Uniform), as MXNet's mx.init.create."""
    if init is None:
        return Uniform(**kwargs)
    if isinstance(init, Initializer):
        if kwargs:
            raise ValueError(f"[initializer] create: keyword arguments {sorted(kwargs)} "
                             "cannot be given with an Initializer instance")
        return init
    if isinstance(init, str) and init.startswith("[") and not kwargs:
        return _from_json(init)
    if isinstance(init, str) and init.lower() in _NAMES:
        return _NAMES[init.lower()](**kwargs)
    raise ValueError(f"[initializer] unknown initializer {init!r}; expected one of "
                     f"{sorted(_NAMES)} or an Initializer")


def _from_json(text):
    """The initializer a dumps() string describes: '["normal", {"sigma": 0.5}]'."""
    import json
    try:
        name, kwargs = json.loads(text)
    except (ValueError, TypeError):
        raise ValueError(f"[initializer] create: {text!r} is not an initializer's JSON "
                         "(Initializer.dumps(): '[name, {kwargs}]')") from None
    if not isinstance(name, str) or not isinstance(kwargs, dict):
        raise ValueError(f"[initializer] create: {text!r} is not an initializer's JSON "
                         "(Initializer.dumps(): '[name, {kwargs}]')")
    return create(name, **kwargs)
