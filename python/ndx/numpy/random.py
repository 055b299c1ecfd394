"""ndx.numpy.random: NumPy's (and MXNet's) random sampling over ndx's counter-based generator.

Every draw comes from Philox-4x32-10 (src/kernel/random.h): element i of a call's output
depends only on the call's seed and i, so results do not depend on the thread count, and one
seed gives the same numbers on every run. ``seed(s)`` seeds the global generator that hands
each call its own seed; ``default_rng(s)`` / ``Generator`` keep an independent stream of
calls, as NumPy 2 code expects. Floats default to float32 (``dtype=`` changes it); the
distributions themselves are C++ functors (operator/math/random-inl.h)."""
import math
import operator as _operator
import os as _os

import numpy as _onp

from .. import _core
from .._registry import internal_function
from .._registry import ops as _ops

__all__ = [
    "seed", "uniform", "normal", "randn", "rand", "randint", "random", "random_sample",
    "ranf", "sample", "standard_normal", "standard_exponential", "standard_gamma", "choice",
    "shuffle", "permutation", "multinomial", "multivariate_normal", "gamma", "beta",
    "chisquare", "exponential", "f", "gumbel", "laplace", "logistic", "lognormal", "pareto",
    "power", "rayleigh", "weibull", "default_rng", "Generator", "poisson", "binomial",
    "negative_binomial", "geometric", "zipf", "logseries", "wald", "vonmises",
    "noncentral_chisquare", "noncentral_f", "standard_cauchy", "standard_t", "triangular",
    "dirichlet", "hypergeometric", "bytes",
]

def _np():
    from .. import numpy as np
    return np


def _op_functions(name):
    """(scalar-parameter, array-parameter) callables of the op _npi_<name>."""
    return (internal_function("_npi_" + name, with_inputs=False),
            internal_function("_npi_" + name))


def _is_scalar(v):
    return (isinstance(v, (int, float, _onp.generic))
            and not isinstance(v, (complex, _onp.complexfloating)))


def _size(size, fn):
    if size is None:
        return None
    if isinstance(size, (list, tuple)):
        return tuple(_index(s, fn, "size") for s in size)
    return (_index(size, fn, "size"),)


def _index(v, fn, what):
    try:
        return _operator.index(v)
    except TypeError:
        raise TypeError(f"[{fn}] {what} must be an integer or a tuple of integers, "
                        f"got {type(v).__name__}") from None


def _host(v):
    """v (a number, a sequence or an array) as host values, for checking parameters."""
    return v.asnumpy() if hasattr(v, "asnumpy") else v


def _place(x, device, ctx):
    device = device if device is not None else ctx
    return x if device is None else x.to_device(device)


class _Stream:
    """Where calls get their seeds: the global generator (None) or a Generator's own key."""

    def __init__(self, key=None):
        self._key = key
        self._count = 0

    def _next_seed(self):
        if self._key is None:
            return None
        self._count += 1
        z = (self._key + self._count * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF  # splitmix64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        z ^= z >> 31
        return z - (1 << 64) if z >= 1 << 63 else z

    def _draw(self, name, params, size=None, dtype=None, device=None, ctx=None, out=None):
        kwargs = {}
        if size is not None:
            kwargs["size"] = _size(size, name)
        if dtype is not None:
            kwargs["dtype"] = dtype
        s = self._next_seed()
        if s is not None:
            kwargs["seed"] = s
        if out is not None:
            kwargs["out"] = out
        scalar_fn, array_fn = _op_functions(name)
        target = device if device is not None else ctx
        if all(_is_scalar(v) for v in params.values()):
            values = {k: float(v) for k, v in params.items()}
            if target is not None and out is None:  # drawn on its device (a GPU draws itself)
                return _core._invoke(_ops()["_npi_" + name].handle, (), {**values, **kwargs},
                                     None, target)
            r = scalar_fn(**values, **kwargs)
        else:
            np = _np()
            # Scalar parameters join the arrays on their device.
            where = next((v.device for v in params.values() if isinstance(v, np.ndarray)), None)
            arrays = [v if isinstance(v, np.ndarray)
                      else np.asarray(v, dtype="float64", device=where)
                      for v in params.values()]
            r = array_fn(*arrays, num_args=len(arrays), **kwargs)
        return _place(r, device, ctx)

    # ---- continuous distributions ----
    def uniform(self, low=0.0, high=1.0, size=None, dtype=None, device=None, ctx=None,
                out=None):
        """Samples from [low, high) uniformly."""
        return self._draw("uniform", {"low": low, "high": high}, size, dtype, device, ctx, out)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None, device=None, ctx=None,
               out=None):
        """Samples from N(loc, scale**2)."""
        return self._draw("normal", {"loc": loc, "scale": scale}, size, dtype, device, ctx, out)

    def standard_normal(self, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from N(0, 1)."""
        return self.normal(0.0, 1.0, size, dtype, device, ctx, out)

    def lognormal(self, mean=0.0, sigma=1.0, size=None, dtype=None, device=None, ctx=None,
                  out=None):
        """Samples exp(N(mean, sigma**2))."""
        return self._draw("lognormal", {"mean": mean, "sigma": sigma}, size, dtype, device,
                          ctx, out)

    def gamma(self, shape=1.0, scale=1.0, size=None, dtype=None, device=None, ctx=None,
              out=None):
        """Samples from Gamma(shape, scale)."""
        return self._draw("gamma", {"shape": shape, "scale": scale}, size, dtype, device, ctx,
                          out)

    def standard_gamma(self, shape, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from Gamma(shape, 1)."""
        return self.gamma(shape, 1.0, size, dtype, device, ctx, out)

    def beta(self, a, b, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from Beta(a, b)."""
        return self._draw("beta", {"a": a, "b": b}, size, dtype, device, ctx, out)

    def chisquare(self, df, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the chi-square distribution with df degrees of freedom."""
        return self._draw("chisquare", {"df": df}, size, dtype, device, ctx, out)

    def f(self, dfnum, dfden, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the F distribution."""
        return self._draw("f", {"dfnum": dfnum, "dfden": dfden}, size, dtype, device, ctx, out)

    def exponential(self, scale=1.0, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the exponential distribution with mean scale."""
        return self._draw("exponential", {"scale": scale}, size, dtype, device, ctx, out)

    def standard_exponential(self, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the exponential distribution with mean 1."""
        return self.exponential(1.0, size, dtype, device, ctx, out)

    def gumbel(self, loc=0.0, scale=1.0, size=None, dtype=None, device=None, ctx=None,
               out=None):
        """Samples from the Gumbel distribution."""
        return self._draw("gumbel", {"loc": loc, "scale": scale}, size, dtype, device, ctx, out)

    def laplace(self, loc=0.0, scale=1.0, size=None, dtype=None, device=None, ctx=None,
                out=None):
        """Samples from the Laplace distribution."""
        return self._draw("laplace", {"loc": loc, "scale": scale}, size, dtype, device, ctx,
                          out)

    def logistic(self, loc=0.0, scale=1.0, size=None, dtype=None, device=None, ctx=None,
                 out=None):
        """Samples from the logistic distribution."""
        return self._draw("logistic", {"loc": loc, "scale": scale}, size, dtype, device, ctx,
                          out)

    def pareto(self, a, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the Pareto II (Lomax) distribution, as numpy.random.pareto."""
        return self._draw("pareto", {"a": a}, size, dtype, device, ctx, out)

    def power(self, a, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the power distribution on [0, 1] with exponent a - 1."""
        return self._draw("powerd", {"a": a}, size, dtype, device, ctx, out)

    def rayleigh(self, scale=1.0, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the Rayleigh distribution."""
        return self._draw("rayleigh", {"scale": scale}, size, dtype, device, ctx, out)

    def weibull(self, a, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the Weibull distribution with shape a and scale 1."""
        return self._draw("weibull", {"a": a}, size, dtype, device, ctx, out)

    def bernoulli(self, prob=None, logit=None, size=None, dtype=None, device=None, ctx=None,
                  out=None):
        """1 with probability prob (or sigmoid(logit)), else 0 (MXNet's npx.random.bernoulli)."""
        if (prob is None) == (logit is None):
            raise ValueError("[bernoulli] give exactly one of prob and logit")
        if prob is None:
            if _is_scalar(logit):
                prob = float(1 / (1 + _onp.exp(-float(logit))))
            else:
                np = _np()
                logit = logit if isinstance(logit, np.ndarray) else np.asarray(logit)
                prob = 1 / (1 + np.exp(-logit.astype("float64")))
        return self._draw("bernoulli", {"prob": prob}, size, dtype, device, ctx, out)

    # ---- counts (int64 by default) ----
    def poisson(self, lam=1.0, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the Poisson distribution with expectation lam."""
        return self._draw("poisson", {"lam": lam}, size, dtype, device, ctx, out)

    def binomial(self, n, p, size=None, dtype=None, device=None, ctx=None, out=None):
        """Successes of n trials (n truncated to an integer, as NumPy) of probability p."""
        return self._draw("binomial", {"n": n, "p": p}, size, dtype, device, ctx, out)

    def negative_binomial(self, n, p, size=None, dtype=None, device=None, ctx=None, out=None):
        """Failures before the n-th success, each trial succeeding with probability p."""
        return self._draw("negative_binomial", {"n": n, "p": p}, size, dtype, device, ctx, out)

    def geometric(self, p, size=None, dtype=None, device=None, ctx=None, out=None):
        """The trial (1, 2, ...) of the first success of probability p."""
        return self._draw("geometric", {"p": p}, size, dtype, device, ctx, out)

    def hypergeometric(self, ngood, nbad, nsample, size=None, dtype=None, device=None,
                       ctx=None, out=None):
        """Good items among nsample drawn without replacement from ngood good and nbad bad
        ones (the counts truncated to integers, as NumPy's)."""
        params = {}
        for name, v in (("ngood", ngood), ("nbad", nbad), ("nsample", nsample)):
            if _is_scalar(v):
                params[name] = int(v) if _onp.isfinite(v) else v
            else:
                np = _np()
                v = v if isinstance(v, np.ndarray) else np.asarray(v)
                params[name] = np.trunc(v.astype("float64"))
        return self._draw("hypergeometric", params, size, dtype, device, ctx, out)

    def zipf(self, a, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the Zipf distribution with exponent a > 1."""
        return self._draw("zipf", {"a": a}, size, dtype, device, ctx, out)

    def logseries(self, p, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the logarithmic series distribution with shape p in [0, 1)."""
        return self._draw("logseries", {"p": p}, size, dtype, device, ctx, out)

    # ---- more continuous distributions ----
    def wald(self, mean, scale, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from the Wald (inverse Gaussian) distribution."""
        return self._draw("wald", {"mean": mean, "scale": scale}, size, dtype, device, ctx, out)

    def vonmises(self, mu, kappa, size=None, dtype=None, device=None, ctx=None, out=None):
        """Angles in [-pi, pi) from the von Mises distribution (mode mu, concentration
        kappa)."""
        return self._draw("vonmises", {"mu": mu, "kappa": kappa}, size, dtype, device, ctx,
                          out)

    def noncentral_chisquare(self, df, nonc, size=None, dtype=None, device=None, ctx=None,
                             out=None):
        """Samples from the non-central chi-square distribution."""
        return self._draw("noncentral_chisquare", {"df": df, "nonc": nonc}, size, dtype,
                          device, ctx, out)

    def _broadcast_size(self, fn, size, *params):
        """size, else the broadcast shape of the parameters (as NumPy's); a size the
        parameters do not broadcast to is NumPy's ValueError."""
        np = _np()
        shapes = [v.shape if isinstance(v, np.ndarray) else _onp.shape(v) for v in params]
        params_shape = tuple(_onp.broadcast_shapes(*shapes)) if shapes else ()
        if size is None:
            return params_shape
        shape = _size(size, fn)
        try:
            fits = _onp.broadcast_shapes(params_shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"[{fn}] Output size {shape} is not compatible with broadcast "
                             f"dimensions of inputs {params_shape}.")
        return shape

    def noncentral_f(self, dfnum, dfden, nonc, size=None, dtype=None, device=None, ctx=None):
        """(noncentral_chisquare(dfnum, nonc) / dfnum) / (chisquare(dfden) / dfden)."""
        for name, v, ok in (("dfnum", dfnum, "> 0"), ("dfden", dfden, "> 0")):
            if _onp.any(_onp.asarray(_host(v)) <= 0) or _onp.any(_onp.isnan(_host(v))):
                raise ValueError(f"[noncentral_f] {name} <= 0")
        shape = self._broadcast_size("noncentral_f", size, dfnum, dfden, nonc)
        num = self.noncentral_chisquare(dfnum, nonc, size=shape, dtype="float64")
        den = self.chisquare(dfden, size=shape, dtype="float64")
        return _place(((num * dfden) / (den * dfnum)).astype(dtype or _core._default_float()),
                      device, ctx)

    def standard_cauchy(self, size=None, dtype=None, device=None, ctx=None):
        """Samples from the standard Cauchy distribution: the ratio of two standard
        normals."""
        shape = _size(size, "standard_cauchy") or ()
        num = self.normal(0.0, 1.0, size=shape, dtype="float64")
        den = self.normal(0.0, 1.0, size=shape, dtype="float64")
        return _place((num / den).astype(dtype or _core._default_float()), device, ctx)

    def standard_t(self, df, size=None, dtype=None, device=None, ctx=None):
        """Student's t with df degrees of freedom: Z / sqrt(chisquare(df) / df)."""
        if _onp.any(_onp.asarray(_host(df)) <= 0) or _onp.any(_onp.isnan(_host(df))):
            raise ValueError("[standard_t] df <= 0")
        shape = self._broadcast_size("standard_t", size, df)
        z = self.normal(0.0, 1.0, size=shape, dtype="float64")
        chi2 = self.chisquare(df, size=shape, dtype="float64")
        return _place((z / _np().sqrt(chi2 / df)).astype(dtype or _core._default_float()),
                      device, ctx)

    def triangular(self, left, mode, right, size=None, dtype=None, device=None, ctx=None):
        """Samples from the triangular distribution on [left, right] peaking at mode, by
        inverting its distribution function."""
        lo, mo, hi = (_onp.asarray(_host(v), dtype=_onp.float64) for v in (left, mode, right))
        if _onp.any(lo > mo):
            raise ValueError("[triangular] left > mode")
        if _onp.any(mo > hi):
            raise ValueError("[triangular] mode > right")
        if _onp.any(lo == hi):
            raise ValueError("[triangular] left == right")
        np = _np()
        shape = self._broadcast_size("triangular", size, left, mode, right)
        u = self.uniform(0.0, 1.0, size=shape, dtype="float64")
        lo, mo, hi = (np.asarray(v, dtype="float64") for v in (lo, mo, hi))
        width, left_part, right_part = hi - lo, mo - lo, hi - mo
        cut = left_part / width
        rising = lo + np.sqrt(u * width * left_part)
        falling = hi - np.sqrt((1 - u) * width * right_part)
        return _place(np.where(u <= cut, rising, falling).astype(dtype or _core._default_float()),
                      device, ctx)

    def dirichlet(self, alpha, size=None, dtype=None):
        """Samples from the Dirichlet distribution: independent Gamma(alpha_i) draws divided by
        their sum; shape size + (len(alpha),)."""
        a = _onp.asarray(_host(alpha), dtype=_onp.float64)
        if a.ndim != 1 or a.size == 0:
            raise ValueError("[dirichlet] alpha must be a non-empty 1-D sequence")
        if _onp.any(a <= 0) or _onp.any(_onp.isnan(a)):
            raise ValueError("[dirichlet] alpha <= 0")
        shape = (_size(size, "dirichlet") or ()) + (a.size,)
        np = _np()
        # In logarithms, so small alphas do not underflow every Gamma draw to 0 (and the row to
        # 0 / 0): Gamma(a) = Gamma(a + 1) U^(1 / a) for a < 1, then a softmax of the logs.
        small = a < 1
        log_g = np.log(self.gamma(np.asarray(_onp.where(small, a + 1, a)), 1.0, size=shape,
                                  dtype="float64"))
        if small.any():
            u = self.uniform(0.0, 1.0, size=shape, dtype="float64")
            log_g = log_g + np.where(np.asarray(small), np.log(u) / np.asarray(a), 0.0)
        e = np.exp(log_g - np.max(log_g, axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(dtype or _core._default_float())

    # ---- uniform shortcuts ----
    def random(self, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from [0, 1) uniformly."""
        return self.uniform(0.0, 1.0, size, dtype, device, ctx, out)

    def rand(self, *size, dtype=None, device=None, ctx=None):
        """Uniform [0, 1) samples of shape size (given as separate integers)."""
        return self.uniform(0.0, 1.0, size or None, dtype, device, ctx)

    def randn(self, *size, dtype=None, device=None, ctx=None):
        """Standard normal samples of shape size (given as separate integers)."""
        return self.normal(0.0, 1.0, size or None, dtype, device, ctx)

    # ---- integers ----
    def randint(self, low, high=None, size=None, dtype=None, device=None, ctx=None, out=None):
        """Integers from [low, high) (from [0, low) when high is None); int64 by default."""
        if high is None:
            low, high = 0, low
        if dtype is not None and _onp.dtype(dtype).kind not in "iub":
            raise TypeError(f"[randint] dtype must be an integer dtype; got {dtype}")
        if (all(isinstance(v, (int, _onp.integer)) for v in (low, high))
                and max(abs(int(low)), abs(int(high)), int(high) - int(low)) > 2**53):
            return self._randint_wide(int(low), int(high), size, dtype, device, ctx, out)
        return self._draw("randint", {"low": low, "high": high}, size, dtype, device, ctx, out)

    def _randint_wide(self, low, high, size, dtype, device, ctx, out):
        """randint for bounds or a span past 2**53, which the op's double parameters cannot
        hold exactly: 64 random bits an element (two exact draws of 32), an unbiased span by
        rejection (Lemire's threshold: accept u < 2**64 - 2**64 % span), added to low in
        uint64 arithmetic that wraps as two's complement."""
        np = _np()
        t = _onp.dtype("int64" if dtype is None else dtype)
        info = _onp.iinfo(t)
        if low < info.min:
            raise ValueError(f"[randint] low is out of bounds for {t}")
        if high > info.max + 1:
            raise ValueError(f"[randint] high is out of bounds for {t}")
        if low >= high:
            raise ValueError("[randint] low >= high")
        shape = () if size is None else _size(size, "randint")
        n = math.prod(shape)
        span = high - low
        limit = 2**64 - (2**64 % span)  # a multiple of span: u below it is uniform mod span
        u64 = _onp.dtype("uint64")

        def words(k):
            w = self._draw("randint", {"low": 0, "high": 2**32}, (2, k), "int64", device, ctx)
            return np.bitwise_or(np.left_shift(w[0].astype(u64), 32), w[1].astype(u64))

        u = words(n)
        if limit < 2**64:
            bound = np.array(limit, dtype=u64, device=u.device)
            bad = np.flatnonzero(np.greater_equal(u, bound))
            while bad.size:  # each draw is rejected with probability below 1/2
                u[bad] = words(bad.size)
                bad = bad[np.greater_equal(u[bad], bound)]
            u = np.remainder(u, np.array(span, dtype=u64, device=u.device))
        r = np.add(u, np.array(low % 2**64, dtype=u64, device=u.device)).astype(t)
        r = r.reshape(shape)
        if out is not None:
            out[...] = r
            return out
        return r

    # ---- permutations and choices ----
    def permutation(self, x):
        """A permuted copy of x along its first axis, or a permutation of arange(x)."""
        np = _np()
        if _is_scalar(x) and not isinstance(x, float):
            return self._perm(_index(x, "permutation", "x"))
        x = x if isinstance(x, np.ndarray) else np.asarray(x)
        if x.ndim == 0:
            raise ValueError("[permutation] x must be an integer or at least 1-dimensional")
        return x[self._perm(x.shape[0])]

    def shuffle(self, x):
        """Shuffles x in place along its first axis."""
        np = _np()
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                raise ValueError("[shuffle] x must be at least 1-dimensional")
            x[...] = x[self._perm(x.shape[0])]
            return None
        if isinstance(x, list):
            perm = self._perm(len(x)).asnumpy().tolist()
            x[:] = [x[i] for i in perm]
            return None
        raise TypeError(f"[shuffle] x must be an ndarray or a list, got {type(x).__name__}")

    def permuted(self, x, axis=None, out=None):
        """x with each slice along axis shuffled independently (all elements when axis is
        None), as NumPy's Generator.permuted: argsort of uniform keys, one per element."""
        np = _np()
        x = x if isinstance(x, np.ndarray) else np.asarray(x)
        if axis is None:
            flat = x.reshape(-1)
            r = flat[self._perm(flat.shape[0])].reshape(x.shape)
        else:
            axis = _index(axis, "permuted", "axis")
            if not -x.ndim <= axis < max(x.ndim, 1) or x.ndim == 0:
                from ..base import AxisError
                raise AxisError(f"[permuted] axis {axis} is out of bounds for array of "
                                   f"dimension {x.ndim}")
            keys = self.uniform(0.0, 1.0, size=x.shape, dtype="float64")
            r = np.take_along_axis(x, np.argsort(keys, axis=axis), axis=axis)
        if out is not None:
            out[...] = r
            return out
        return r

    def bytes(self, length):
        """length random bytes."""
        n = _index(length, "bytes", "length")
        if n < 0:
            raise ValueError(f"[bytes] length must be non-negative; got {n}")
        return self.randint(0, 256, size=n, dtype="uint8").asnumpy().tobytes()

    def _perm(self, n):
        if n < 0:
            raise ValueError(f"[permutation] n must be non-negative; got {n}")
        kwargs = {"n": n}
        s = self._next_seed()
        if s is not None:
            kwargs["seed"] = s
        return _op_functions("permutation")[0](**kwargs)

    def choice(self, a, size=None, replace=True, p=None, device=None, ctx=None, out=None):
        """Samples from a (an integer n: arange(n); else a 1-D array), with or without
        replacement, uniformly or with probabilities p."""
        np = _np()
        if _is_scalar(a) and not isinstance(a, float):
            n, pool = _index(a, "choice", "a"), None
            if n <= 0:
                raise ValueError("[choice] a must be a positive integer unless no samples are "
                                 "taken")
        else:
            pool = a if isinstance(a, np.ndarray) else np.asarray(a)
            if pool.ndim != 1:
                raise ValueError(f"[choice] a must be 1-dimensional; got {pool.ndim} dims")
            n = pool.shape[0]
        shape = _size(size, "choice") or ()
        k = int(_onp.prod(shape)) if shape else 1
        if n == 0 and k > 0:
            raise ValueError("[choice] a cannot be empty unless no samples are taken")
        if p is not None:
            p = p if isinstance(p, np.ndarray) else np.asarray(p, dtype="float64")
            p = p.astype("float64")
            if p.ndim != 1 or p.shape[0] != n:
                raise ValueError(f"[choice] p must be 1-dimensional of length {n}; got shape "
                                 f"{p.shape}")
            ph = p.asnumpy()
            if not _onp.all(ph >= 0) or not _onp.all(_onp.isfinite(ph)):
                raise ValueError("[choice] probabilities are not non-negative")
            if abs(ph.sum() - 1) > _onp.sqrt(_onp.finfo(_onp.float64).eps):
                raise ValueError("[choice] probabilities do not sum to 1")
        if replace:
            if p is None:
                idx = self.randint(0, max(n, 1), size=shape)
            else:
                cdf = np.cumsum(p)
                u = self.uniform(0.0, 1.0, size=shape, dtype="float64") * cdf[-1]
                idx = np.minimum(np.searchsorted(cdf, u, side="right"), n - 1)
        else:
            if k > n:
                raise ValueError("[choice] cannot take a larger sample than population when "
                                 "replace is False")
            if p is None:
                idx = self._perm(n)[:k]
            else:
                if int((ph > 0).sum()) < k:
                    raise ValueError("[choice] fewer non-zero entries in p than size")
                # Exponential races: the k smallest E_i / p_i are a sample without
                # replacement in proportion to p.
                keys = self.exponential(1.0, size=(n,), dtype="float64") / p
                idx = np.argsort(keys)[:k]
            idx = idx.reshape(shape)
        r = idx if pool is None else pool[idx]
        if out is not None:
            out[...] = r
            r = out
        return _place(r, device, ctx)

    # ---- multivariate ----
    def multinomial(self, n, pvals, size=None):
        """Counts of n trials over len(pvals) outcomes (the last probability is whatever the
        others leave), shape size + (len(pvals),), int64."""
        np = _np()
        n = _index(n, "multinomial", "n")
        if n < 0:
            raise ValueError(f"[multinomial] n < 0 ({n})")
        ph = _onp.asarray(pvals.asnumpy() if isinstance(pvals, np.ndarray) else pvals,
                          dtype=_onp.float64)
        if ph.ndim != 1 or ph.size == 0:
            raise ValueError("[multinomial] pvals must be a non-empty 1-D sequence")
        if _onp.any(ph < 0) or _onp.any(ph > 1) or _onp.any(_onp.isnan(ph)):
            raise ValueError("[multinomial] pvals must be in [0, 1]")
        if ph[:-1].sum() > 1.0 + 1e-12:
            raise ValueError("[multinomial] sum(pvals[:-1]) > 1.0")
        ph = _onp.append(ph[:-1], max(0.0, 1.0 - ph[:-1].sum()))
        shape = _size(size, "multinomial") or ()
        kinds = len(ph)
        draws = self.choice(kinds, size=shape + (n,), p=ph / ph.sum())
        hits = np.expand_dims(draws, -1) == np.arange(kinds)
        return hits.sum(axis=-2).astype("int64")

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8,
                            dtype=None):
        """Samples from N(mean, cov): mean + z @ A.T with cov = A A.T from cov's
        eigendecomposition (so a singular positive semi-definite cov works, as in NumPy)."""
        np = _np()
        mean = mean if isinstance(mean, np.ndarray) else np.asarray(mean, dtype="float64")
        cov = cov if isinstance(cov, np.ndarray) else np.asarray(cov, dtype="float64")
        if mean.ndim != 1:
            raise ValueError("[multivariate_normal] mean must be 1 dimensional")
        d = mean.shape[0]
        if cov.shape != (d, d):
            raise ValueError("[multivariate_normal] mean and cov must have same length; cov "
                             f"must be ({d}, {d}), got {cov.shape}")
        if check_valid not in ("warn", "raise", "ignore"):
            raise ValueError("[multivariate_normal] check_valid must equal 'warn', 'raise', or "
                             "'ignore'")
        w, v = np.linalg.eigh(cov.astype("float64"))
        if check_valid != "ignore":
            wh = w.asnumpy()
            if wh.size and wh.min() < -tol * max(1.0, abs(wh).max()):
                msg = "covariance is not symmetric positive-semidefinite."
                if check_valid == "raise":
                    raise ValueError("[multivariate_normal] " + msg)
                import warnings
                warnings.warn(msg, RuntimeWarning, stacklevel=2)
        a = v * np.sqrt(np.maximum(w, 0.0))
        shape = _size(size, "multivariate_normal") or ()
        z = self.normal(0.0, 1.0, size=shape + (d,), dtype="float64")
        r = mean + np.matmul(z, a.T)
        return r.astype(dtype or _core._default_float())


class Generator(_Stream):
    """NumPy 2's Generator over ndx's counter-based stream: calls on one Generator draw from
    seeds derived from its own key, independent of the global seed and of other Generators."""

    def __init__(self, seed=None):
        if seed is None:
            seed = int.from_bytes(_os.urandom(8), "little")
        elif isinstance(seed, Generator):
            seed = seed._key
        else:
            seed = _index(seed, "Generator", "seed")
            if seed < 0:
                raise ValueError(f"[Generator] seed must be non-negative; got {seed}")
        super().__init__(seed & 0xFFFFFFFFFFFFFFFF)

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False):
        """Integers from [low, high) ([low, high] with endpoint=True; [0, low) when high is
        None)."""
        if high is None:
            low, high = 0, low
        if endpoint:
            high = high + 1
        return self.randint(low, high, size=size, dtype=dtype)

    def __repr__(self):
        return "Generator(Philox)"


def default_rng(seed=None):
    """A new Generator seeded with seed (fresh entropy when None)."""
    return Generator(seed)


_global = _Stream()


def seed(seed=None):
    """Seeds the global generator: calls after seed(s) draw the same numbers on every run."""
    if seed is None:
        seed = int.from_bytes(_os.urandom(8), "little")
    seed = _index(seed, "seed", "seed")
    if seed < 0:
        raise ValueError(f"[seed] seed must be non-negative; got {seed}")
    _core.random_seed(seed & 0xFFFFFFFFFFFFFFFF)


uniform = _global.uniform
normal = _global.normal
standard_normal = _global.standard_normal
lognormal = _global.lognormal
gamma = _global.gamma
standard_gamma = _global.standard_gamma
beta = _global.beta
chisquare = _global.chisquare
f = _global.f
exponential = _global.exponential
standard_exponential = _global.standard_exponential
gumbel = _global.gumbel
laplace = _global.laplace
logistic = _global.logistic
pareto = _global.pareto
power = _global.power
rayleigh = _global.rayleigh
weibull = _global.weibull
random = _global.random
random_sample = ranf = sample = _global.random
rand = _global.rand
randn = _global.randn
randint = _global.randint
permutation = _global.permutation
shuffle = _global.shuffle
choice = _global.choice
multinomial = _global.multinomial
multivariate_normal = _global.multivariate_normal
poisson = _global.poisson
binomial = _global.binomial
negative_binomial = _global.negative_binomial
geometric = _global.geometric
zipf = _global.zipf
logseries = _global.logseries
wald = _global.wald
vonmises = _global.vonmises
noncentral_chisquare = _global.noncentral_chisquare
noncentral_f = _global.noncentral_f
standard_cauchy = _global.standard_cauchy
standard_t = _global.standard_t
triangular = _global.triangular
dirichlet = _global.dirichlet
hypergeometric = _global.hypergeometric
bytes = _global.bytes  # noqa: A001  (NumPy's name)
