"""ndx.numpy.random: NumPy's (and MXNet's) random sampling over ndx's counter-based generator.

Every draw comes from Philox-4x32-10 (src/kernel/random.h): element i of a call's output
depends only on the call's seed and i, so results do not depend on the thread count, and one
seed gives the same numbers on every run. ``seed(s)`` seeds the global generator (the C++
std::mt19937_64 that hands each call its own seed); ``RandomState(s)`` is NumPy's legacy class
over the same scheme (it draws what the global stream draws after ``seed(s)``), and
``get_state`` / ``set_state`` save and restore either. ``default_rng(s)`` / ``Generator`` keep
an independent stream of calls (keyed by an int or a ``SeedSequence``, NumPy's own hash), as
NumPy 2 code expects. None of these reproduce NumPy's numbers (ndx has no MT19937 or PCG64).
Floats default to float32 (``dtype=`` changes it); the distributions themselves are C++
functors (operator/math/random-inl.h)."""
import collections.abc as _abc
import math
import operator as _operator
import os as _os
import threading as _threading

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
    "dirichlet", "hypergeometric", "bytes", "random_integers", "get_state", "set_state",
    "RandomState", "SeedSequence", "BitGenerator", "Philox", "MT19937", "PCG64", "PCG64DXSM",
    "SFC64",
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


class _RangeError(OverflowError, ValueError):
    """NumPy's OverflowError (a range past what a float holds, a count past a C integer),
    still a ValueError as ndx raised before."""


class _NoBitGeneratorError(TypeError, AttributeError):
    """Generator given something that is not a bit generator: a TypeError, and the
    AttributeError NumPy 2.4 raises (it asks the object for its capsule)."""


# Distributions whose NaN parameters NumPy passes through (NaN samples, no error) though
# ndx's C++ op refuses them: the draw is redone with the NaNs replaced (1.0 is valid for
# every parameter of these) and NaN put back where a parameter was NaN.
_NAN_PASSES = frozenset({"gamma", "beta", "chisquare", "f", "wald", "vonmises",
                         "noncentral_chisquare"})

# Generator methods NumPy gives a dtype= take float32 or float64 only (TypeError else).
_GEN_FLOATS = (_onp.dtype(_onp.float32), _onp.dtype(_onp.float64))


def _size(size, fn):
    if size is None:
        return None
    if hasattr(size, "asnumpy"):
        size = size.asnumpy()
    if isinstance(size, _onp.ndarray) and size.ndim <= 1 and size.dtype.kind in "iu":
        size = size.tolist()  # (NumPy takes an integer array as a shape)
    if isinstance(size, (list, tuple)):
        return tuple(_index(s, fn, "size") for s in size)
    return (_index(size, fn, "size"),)


def _float_dtype(dtype, fn):
    """dtype checked as NumPy's Generator checks it: float32 or float64 (None: ndx's
    default float)."""
    if dtype is None:
        return None
    try:
        dt = _onp.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in _GEN_FLOATS:
        raise TypeError(f"[{fn}] Unsupported dtype {dtype!r} for {fn.split('.')[-1]}: "
                        "float32 or float64")
    return dt


def _check_out(out, size, dtype, fn):
    """NumPy's Generator: out's dtype must be the dtype asked for (TypeError) and its shape
    size when both are given (ValueError)."""
    if out is None:
        return
    if dtype is not None and _onp.dtype(out.dtype) != _onp.dtype(dtype):
        raise TypeError(f"[{fn}] Supplied output array has the wrong type. Expected "
                        f"{_onp.dtype(dtype)}, got {_onp.dtype(out.dtype)}")
    if size is not None and tuple(out.shape) != _size(size, fn):
        raise ValueError(f"[{fn}] size must match out.shape when used together")


def _index(v, fn, what):
    try:
        return _operator.index(v)
    except TypeError:
        raise TypeError(f"[{fn}] {what} must be an integer or a tuple of integers, "
                        f"got {type(v).__name__}") from None


def _host(v):
    """v (a number, a sequence or an array) as host values, for checking parameters."""
    return v.asnumpy() if hasattr(v, "asnumpy") else v


def _host_floats(v):
    """v as float64 host values (NumPy's errors: ValueError for a string, TypeError for a
    complex number)."""
    v = _host(v)
    if not isinstance(v, str) and _onp.iscomplexobj(v):
        raise TypeError("float() argument must be a string or a real number, not 'complex'")
    return _onp.asarray(v, dtype=_onp.float64)


def _check_int_array(v, fn, what):
    """NumPy casts an array of counts to int64 safely: a float (or uint64) array is its
    TypeError, though a float number or a list of floats is truncated."""
    dt = getattr(v, "dtype", None) if isinstance(v, _onp.ndarray) or hasattr(v, "asnumpy") \
        else None
    if dt is not None:
        dt = _onp.dtype(dt)
        if dt.kind not in "iub" or (dt.kind == "u" and dt.itemsize == 8):
            raise TypeError(f"[{fn}] {what}: Cannot cast array data from {dt!r} to "
                            "dtype('int64') according to the rule 'safe'")


def _shuffle_host(x, perm, axis):
    """Reorders x (a NumPy array or a mutable sequence) in place by perm along axis."""
    if isinstance(x, _onp.ndarray):
        x[...] = _onp.take(x, perm, axis=axis)
        return
    items = [x[i] for i in perm.tolist()]
    for i, v in enumerate(items):
        x[i] = v


def _exact_ints(v):
    """v as a host array; a sequence of Python ints that NumPy would make float64 (one past
    int64 with one that is not uint64) is kept exact, as an object array."""
    a = _onp.asarray(_host(v))
    if a.dtype.kind == "f" and isinstance(v, (list, tuple)):
        b = _onp.array(v, dtype=object)
        if all(isinstance(x, (int, _onp.integer)) for x in b.flat):
            return b
    return a


def _randint_array_bounds(low, high, dtype):
    """randint's array bounds checked against dtype's range, as NumPy checks them (the op
    checks only numbers): (low, high, wide). wide: some integer bound is past 2**52, so a
    bound or a span may be past what the op's double parameters hold exactly; low and high
    are then object arrays of exact ints (object arrays of ints are float64 otherwise)."""
    t = _onp.dtype("int64" if dtype is None else dtype)
    lo, hi = (_exact_ints(v) for v in (low, high))
    if lo.dtype.kind not in "iubfO" or hi.dtype.kind not in "iubfO":
        return low, high, False  # (the op's own errors)
    vmin, vmax = (0, 1) if t.kind == "b" else (int(_onp.iinfo(t).min), int(_onp.iinfo(t).max))
    if lo.size and lo.min() < vmin:
        raise ValueError(f"[randint] low is out of bounds for {t}")
    if hi.size and hi.max() > vmax + 1:
        raise ValueError(f"[randint] high is out of bounds for {t}")
    if all(v.dtype.kind in "iubO" for v in (lo, hi)) and any(
            v.size and (v.min() < -2**52 or v.max() > 2**52) for v in (lo, hi)):
        return lo.astype(object), hi.astype(object), True
    low, high = (v.astype(_onp.float64) if v.dtype == object else w
                 for v, w in ((lo, low), (hi, high)))
    return low, high, False


def _inclusive_high(low, high):
    """high + 1 for Generator.integers(endpoint=True), exactly: a uint64 or int64 high at
    its dtype's maximum must not wrap (so its ints become Python ints); low > high is
    NumPy's ValueError."""
    lo_h, hi_h = _onp.asarray(_host(low)), _onp.asarray(_host(high))
    # (rounding to a common float type keeps low <= high, so this finds no false case)
    if lo_h.dtype.kind in "iubf" and hi_h.dtype.kind in "iubf" and _onp.any(lo_h > hi_h):
        raise ValueError("[integers] low > high")
    if isinstance(high, (int, _onp.integer)):
        return int(high) + 1
    if _is_scalar(high):
        return high + 1
    h = _onp.asarray(_host(high))
    if h.dtype.kind in "iu":
        return h.astype(object) + 1
    return h + 1


def _place(x, device, ctx):
    device = device if device is not None else ctx
    return x if device is None else x.to_device(device)


# A Generator or RandomState shared by threads hands each call a seed of its own (NumPy's bit
# generators lock too): the count's increment and read are one step.
_SEED_LOCK = _threading.Lock()


def _new_seed_lock():  # a forked child (a DataLoader worker) must not inherit a held lock
    global _SEED_LOCK
    _SEED_LOCK = _threading.Lock()


_os.register_at_fork(after_in_child=_new_seed_lock)


class _Stream:
    """Where calls get their seeds: the global generator (None) or a Generator's own key."""

    def __init__(self, key=None):
        self._key = key
        self._count = 0

    def _next_seed(self):
        if self._key is None:
            return None
        with _SEED_LOCK:
            self._count += 1
            count = self._count
        z = (self._key + count * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF  # splitmix64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        z ^= z >> 31
        return z - (1 << 64) if z >= 1 << 63 else z

    def _mark(self):
        return self._count

    def _rewind(self, mark):
        self._count = mark

    def _draw(self, name, params, size=None, dtype=None, device=None, ctx=None, out=None):
        for k, v in params.items():
            if v is None:  # (as NumPy: None is no number)
                raise TypeError(f"[{name}] {k} must be a number or an array, not None")
        mark = self._mark()
        try:  # A call that fails draws nothing, from any stream.
            return self._draw_once(name, params, size, dtype, device, ctx, out)
        except ValueError as e:
            self._rewind(mark)
            if name not in _NAN_PASSES or "must not be NaN" not in str(e):
                raise
        except Exception:
            self._rewind(mark)
            raise
        return self._draw_nan(name, params, size, dtype, device, ctx, out)

    def _draw_nan(self, name, params, size, dtype, device, ctx, out):
        """The draw with NaN parameters replaced by 1.0, NaN where any parameter was NaN
        (as NumPy's samplers pass NaN through)."""
        np = _np()
        clean, nan_masks = {}, []
        for k, v in params.items():
            if _is_scalar(v):
                if _onp.isnan(v):
                    nan_masks.append(True)
                    v = 1.0
                clean[k] = v
            else:
                v = v if isinstance(v, np.ndarray) else np.asarray(v, dtype="float64")
                m = np.isnan(v)
                nan_masks.append(m)
                clean[k] = np.where(m, 1.0, v)
        r = self._draw_once(name, clean, size, dtype, device, ctx, None)
        mask = nan_masks[0]
        for m in nan_masks[1:]:
            mask = mask | m
        r = np.where(mask, _onp.nan, r).astype(r.dtype)
        if out is not None:
            out[...] = r
            return out
        return r

    def _draw_once(self, name, params, size=None, dtype=None, device=None, ctx=None,
                   out=None):
        if out is not None and isinstance(out, _np().ndarray):  # out= alone: its shape, dtype
            size = out.shape if size is None else size
            dtype = out.dtype if dtype is None else dtype
        kwargs = {}
        if size is not None:
            kwargs["size"] = _size(size, name)
        if dtype is not None:
            kwargs["dtype"] = dtype
        s = self._next_seed()
        if s is not None and not _core._is_tracing():
            # (A traced draw keeps no seed: a seed in the graph's attributes would repeat the
            # same numbers on every call of a hybridized block; the op's random resource
            # draws afresh each run, as MXNet's graphs do.)
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
        """Samples from [low, high) uniformly. A high - low that is not finite (infinite
        or NaN bounds) is NumPy's OverflowError (a ValueError too)."""
        try:
            return self._draw("uniform", {"low": low, "high": high}, size, dtype, device, ctx,
                              out)
        except ValueError as e:
            if "must be finite" in str(e) or "must not be NaN" in str(e):
                raise _RangeError(f"[uniform] high - low range exceeds valid bounds ({e})"
                                  ) from None
            raise

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
        _check_int_array(n, "binomial", "n")
        return self._draw("binomial", {"n": n, "p": p}, size, dtype, device, ctx, out)

    def _binomial(self, n, p, size):  # (n a float array of whole numbers)
        return self._draw("binomial", {"n": n, "p": p}, size)

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
        for name, v in (("ngood", ngood), ("nbad", nbad), ("nsample", nsample)):
            _check_int_array(v, "hypergeometric", name)
            if isinstance(v, (str, complex)):  # NumPy's int(v): ValueError, TypeError
                _host_floats(v)
        return self._hypergeometric(ngood, nbad, nsample, size, dtype, device, ctx, out)

    def _hypergeometric(self, ngood, nbad, nsample, size=None, dtype=None, device=None,
                        ctx=None, out=None):
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
        for name, v in (("dfnum", dfnum), ("dfden", dfden)):  # (NaN passes, as NumPy's)
            if _onp.any(_host_floats(v) <= 0):
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
        if _onp.any(_host_floats(df) <= 0):  # (a NaN df gives NaN, as NumPy's)
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

    # NumPy's Generator.dirichlet takes alpha >= 0 (a 0 gives 0s); the legacy one alpha > 0.
    _dirichlet_zeros = False

    def dirichlet(self, alpha, size=None, dtype=None):
        """Samples from the Dirichlet distribution: independent Gamma(alpha_i) draws divided by
        their sum; shape size + (len(alpha),). An empty alpha gives an empty last axis and a
        NaN in alpha NaN everywhere, as NumPy's."""
        np = _np()
        fn = "dirichlet"
        if _is_scalar(alpha) or _onp.ndim(_host(alpha)) == 0:
            raise TypeError(f"[{fn}] alpha must be a sequence, not {type(alpha).__name__}")
        a = _host_floats(alpha)
        if a.ndim != 1:
            raise ValueError(f"[{fn}] alpha must be a one-dimensional sequence; got {a.ndim} "
                             "dimensions")
        if self._dirichlet_zeros:
            if _onp.any(a < 0):
                raise ValueError(f"[{fn}] alpha < 0")
        elif _onp.any(a <= 0):
            raise ValueError(f"[{fn}] alpha <= 0")
        shape = (_size(size, fn) or ()) + (a.size,)
        out_dtype = dtype or _core._default_float()
        if _onp.isnan(a).any():
            return np.full(shape, _onp.nan, dtype=out_dtype)
        zero = a == 0
        if zero.all():  # (an empty alpha, or only zeros: nothing to draw)
            return np.zeros(shape, dtype=out_dtype)
        a = _onp.where(zero, 1.0, a)
        # In logarithms, so small alphas do not underflow every Gamma draw to 0 (and the row to
        # 0 / 0): Gamma(a) = Gamma(a + 1) U^(1 / a) for a < 1, then a softmax of the logs.
        small = a < 1
        log_g = np.log(self.gamma(np.asarray(_onp.where(small, a + 1, a)), 1.0, size=shape,
                                  dtype="float64"))
        if small.any():
            u = self.uniform(0.0, 1.0, size=shape, dtype="float64")
            log_g = log_g + np.where(np.asarray(small), np.log(u) / np.asarray(a), 0.0)
        if zero.any():
            log_g = np.where(np.asarray(zero), -_onp.inf, log_g)
        e = np.exp(log_g - np.max(log_g, axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(out_dtype)

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
        if not (_is_scalar(low) and _is_scalar(high)):
            low, high, wide = _randint_array_bounds(low, high, dtype)
            if wide:
                return self._randint_wide_arrays(low, high, size, dtype, device, ctx, out)
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
        if span < 2**64:  # (a power-of-two span needs no rejection, but still the remainder)
            u = np.remainder(u, np.array(span, dtype=u64, device=u.device))
        r = np.add(u, np.array(low % 2**64, dtype=u64, device=u.device)).astype(t)
        r = r.reshape(shape)
        if out is not None:
            out[...] = r
            return out
        return r

    def _randint_wide_arrays(self, lo, hi, size, dtype, device, ctx, out):
        """randint for array bounds past 2**53 (object arrays of exact ints): as
        _randint_wide, element by element on the host, since the op would round them."""
        np = _np()
        t = _onp.dtype("int64" if dtype is None else dtype)
        shape = self._broadcast_size("randint", size, lo, hi)
        lo, hi = (_onp.broadcast_to(v, shape).reshape(-1) for v in (lo, hi))
        if _onp.any(lo >= hi):
            raise ValueError("[randint] low >= high")
        u64 = _onp.uint64
        span = ((hi - lo) % 2**64).astype(u64)  # 0 stands for a span of 2**64
        whole = span == 0
        # Lemire's threshold: u > MAX - 2**64 % span is rejected, so u % span is uniform.
        with _onp.errstate(divide="ignore"):
            rest = _onp.where(whole, u64(0), (u64(0) - span) % _onp.where(whole, u64(1), span))
        cutoff = u64(_MASK64) - rest

        def words(k):
            w = self._draw("randint", {"low": 0, "high": 2**32}, (2, k), "int64", device, ctx)
            w = w.asnumpy().astype(u64)
            return (w[0] << u64(32)) | w[1]

        u = words(lo.size)
        bad = _onp.flatnonzero(u > cutoff)
        while bad.size:  # each draw is rejected with probability below 1/2
            u[bad] = words(bad.size)
            bad = bad[u[bad] > cutoff[bad]]
        u = _onp.where(whole, u, u % _onp.where(whole, u64(1), span))
        r = (u + (lo % 2**64).astype(u64)).astype(t).reshape(shape)
        r = _place(np.asarray(r), device, ctx)
        if out is not None:
            out[...] = r
            return out
        return r

    # ---- permutations and choices ----
    def permutation(self, x):
        """A permuted copy of x along its first axis, or a permutation of arange(x)."""
        np = _np()
        if _is_scalar(x) and not isinstance(x, float):
            return self._perm_of_range(_index(x, "permutation", "x"))
        x = x if isinstance(x, np.ndarray) else np.asarray(x)
        if x.ndim == 0:  # AxisError: a ValueError, and the IndexError NumPy's legacy raises
            raise _core.AxisError("[permutation] x must be an integer or at least "
                                  "1-dimensional")
        return x[self._perm(x.shape[0])]

    def shuffle(self, x):
        """Shuffles x in place along its first axis."""
        np = _np()
        if isinstance(x, np.ndarray):
            if x.ndim == 0:  # (NumPy's TypeError: a 0-d array has no len())
                raise TypeError("[shuffle] x must be at least 1-dimensional")
            x[...] = x[self._perm(x.shape[0])]
            return None
        if isinstance(x, _onp.ndarray) and x.ndim == 0:
            raise TypeError("[shuffle] x must be at least 1-dimensional")
        if isinstance(x, (_onp.ndarray, _abc.MutableSequence)):
            # (NumPy shuffles its own arrays and any mutable sequence in place, too)
            _shuffle_host(x, self._perm(len(x)).asnumpy(), 0)
            return None
        raise TypeError(f"[shuffle] x must be an ndarray or a mutable sequence, got "
                        f"{type(x).__name__}")

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

    def _perm_of_range(self, n):
        """A permutation of arange(n): empty for n <= 0, as NumPy's (nothing drawn)."""
        if n <= 0:
            return _np().zeros((0,), dtype="int64")
        return self._perm(n)

    def _distinct(self, n, k):
        """k distinct integers of range(n) in random order (NumPy's legacy way: a
        permutation of n)."""
        return self._perm(n)[:k]

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
        shape = _size(size, "choice") or ()
        k = int(_onp.prod(shape)) if shape else 1
        if _is_scalar(a) and not isinstance(a, float):
            n, pool = _index(a, "choice", "a"), None
            if n <= 0 and k > 0:  # (no samples from any a, as NumPy)
                raise ValueError("[choice] a must be a positive integer unless no samples are "
                                 "taken")
        else:
            pool = a if isinstance(a, np.ndarray) else np.asarray(a)
            if pool.ndim != 1:
                raise ValueError(f"[choice] a must be 1-dimensional; got {pool.ndim} dims")
            n = pool.shape[0]
        if n == 0 and k > 0:
            raise ValueError("[choice] a cannot be empty unless no samples are taken")
        if p is not None:
            p = p if isinstance(p, np.ndarray) else np.asarray(p, dtype="float64")
            # NumPy's tolerance on the sum: sqrt(eps) of float64, or of p's own float type
            # when that is coarser (float32 p summing to 1 within rounding is fine)
            atol = _onp.sqrt(_onp.finfo(_onp.float64).eps)
            if p.dtype.kind == "f":
                atol = max(atol, float(_onp.sqrt(_onp.finfo(p.dtype).eps)))
            p = p.astype("float64")
            if p.ndim != 1 or p.shape[0] != n:
                raise ValueError(f"[choice] p must be 1-dimensional of length {n}; got shape "
                                 f"{p.shape}")
            ph = p.asnumpy()
            if not _onp.all(ph >= 0) or not _onp.all(_onp.isfinite(ph)):
                raise ValueError("[choice] probabilities are not non-negative")
            if abs(ph.sum() - 1) > atol:
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
                idx = self._distinct(n, k)
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
    # NumPy's Generator.multinomial takes an array n and pvals with leading dimensions.
    _multinomial_arrays = False

    def multinomial(self, n, pvals, size=None):
        """Counts of n trials over pvals.shape[-1] outcomes (the last probability is whatever
        the others leave), int64. The legacy form takes one n and a 1-D pvals: shape
        size + (len(pvals),). A Generator's n may be an array and pvals have leading
        dimensions: they broadcast together (to size, when given)."""
        np = _np()
        fn = "multinomial"
        ph = _host_floats(pvals)
        if ph.ndim == 0 or ph.shape[-1] == 0:
            raise ValueError(f"[{fn}] pvals must have at least 1 dimension and a non-empty "
                             "last axis")
        if ph.ndim != 1 and not self._multinomial_arrays:
            raise ValueError(f"[{fn}] pvals must be a 1-d sequence")
        if _onp.any(ph < 0) or _onp.any(ph > 1) or _onp.any(_onp.isnan(ph)):
            raise ValueError(f"[{fn}] pvals < 0, pvals > 1 or pvals contains NaNs")
        if _onp.any(ph[..., :-1].sum(axis=-1) > 1.0 + 1e-12):
            raise ValueError(f"[{fn}] sum(pvals[:-1]) > 1.0")
        nh = _host(n)
        if _is_scalar(nh) or (isinstance(nh, _onp.ndarray) and nh.ndim == 0
                              and nh.dtype.kind in "iubf"):
            nh = float(nh)
            if _onp.isnan(nh):
                raise ValueError(f"[{fn}] cannot convert float NaN to integer")
            nh = _onp.asarray(math.trunc(nh), dtype=_onp.int64)
        elif not self._multinomial_arrays:
            raise TypeError(f"[{fn}] n must be an integer, got {type(n).__name__}")
        else:
            _check_int_array(n, fn, "n")
            nh = _onp.trunc(_host_floats(nh)).astype(_onp.int64)
        if _onp.any(nh < 0):
            raise ValueError(f"[{fn}] n < 0")
        batch = tuple(_onp.broadcast_shapes(nh.shape, ph.shape[:-1]))
        if size is None:
            shape = batch
        else:
            shape = _size(size, fn)
            try:
                fits = _onp.broadcast_shapes(batch, shape) == shape
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(f"[{fn}] shape mismatch: n and pvals (broadcast to {batch}) "
                                 f"cannot be broadcast to size {shape}")
        kinds = ph.shape[-1]
        rest = _onp.maximum(0.0, 1.0 - ph[..., :-1].sum(axis=-1, keepdims=True))
        ph = _onp.concatenate([ph[..., :-1], rest], axis=-1)
        if nh.ndim == 0 and ph.ndim == 1 and math.prod(shape) * int(nh) * kinds <= 2**24:
            # One choice per trial (ndx's original way, kept for the streams it gives).
            draws = self.choice(kinds, size=shape + (int(nh),), p=ph / ph.sum())
            hits = np.expand_dims(draws, -1) == np.arange(kinds)
            return hits.sum(axis=-2).astype("int64")
        return self._multinomial_binomials(nh, ph, shape)

    def _multinomial_binomials(self, nh, ph, shape):
        """Counts as a chain of binomials: outcome i takes Binomial(trials left,
        p_i / (probability left)) of the trials the ones before it did not take."""
        np = _np()
        kinds = ph.shape[-1]
        left = 1.0 - _onp.concatenate([_onp.zeros(ph.shape[:-1] + (1,)),
                                       _onp.cumsum(ph, axis=-1)[..., :-1]], axis=-1)
        with _onp.errstate(divide="ignore", invalid="ignore"):
            cond = _onp.where(left > 0, _onp.clip(ph / left, 0.0, 1.0), 0.0)
        remaining = np.broadcast_to(np.asarray(nh.astype(_onp.float64)), shape)
        counts = []
        for i in range(kinds - 1):
            if math.prod(shape) == 0:
                x = np.zeros(shape, dtype="int64")
            else:
                x = self._binomial(remaining, np.asarray(cond[..., i]), shape)
            counts.append(x.astype("int64"))
            remaining = remaining - x.astype("float64")
        counts.append(remaining.astype("int64"))
        return np.stack(counts, axis=-1)

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8,
                            dtype=None, *, method="svd"):
        """Samples from N(mean, cov): mean + z @ A.T with cov = A A.T. method 'svd' (the
        default) and 'eigh' take A from cov's eigendecomposition (for a symmetric positive
        semi-definite cov its SVD is that, so a singular cov works, as in NumPy; 'svd' also
        counts an asymmetric cov as invalid, as NumPy's check does), 'cholesky' from its
        Cholesky factor (a cov that is not positive definite is LinAlgError)."""
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
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError("[multivariate_normal] method must be one of {'eigh', 'svd', "
                             "'cholesky'}")
        shape = _size(size, "multivariate_normal") or ()
        if method == "cholesky":
            a = np.linalg.cholesky(cov.astype("float64"))
            z = self.normal(0.0, 1.0, size=shape + (d,), dtype="float64")
            return (mean + np.matmul(z, a.T)).astype(dtype or _core._default_float())
        w, v = np.linalg.eigh(cov.astype("float64"))
        if check_valid != "ignore":
            wh = w.asnumpy()
            ch = cov.asnumpy().astype(_onp.float64)
            if (wh.size and wh.min() < -tol * max(1.0, abs(wh).max())) or (
                    method == "svd" and not _onp.allclose(ch, ch.T, rtol=tol, atol=tol)):
                msg = "covariance is not symmetric positive-semidefinite."
                if check_valid == "raise":
                    raise ValueError("[multivariate_normal] " + msg)
                import warnings
                warnings.warn(msg, RuntimeWarning, stacklevel=2)
        a = v * np.sqrt(np.maximum(w, 0.0))
        z = self.normal(0.0, 1.0, size=shape + (d,), dtype="float64")
        r = mean + np.matmul(z, a.T)
        return r.astype(dtype or _core._default_float())


_MASK64 = 0xFFFFFFFFFFFFFFFF


def _signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


class _MT64:
    """std::mt19937_64 (the C++ standard pins its algorithm), the generator that hands the
    global stream's calls their seeds (src/op/imperative.cc): a RandomState keyed k gives its
    calls the seeds the global stream gives after seed(k)."""

    _N, _M = 312, 156

    def __init__(self, key):
        self.key = key
        mt = [key & _MASK64]
        for i in range(1, self._N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & _MASK64)
        self._mt, self._i, self.pos = mt, self._N, 0

    def _twist(self):
        mt, n, m = self._mt, self._N, self._M
        for i in range(n):
            x = (mt[i] & 0xFFFFFFFF80000000) | (mt[(i + 1) % n] & 0x7FFFFFFF)
            xa = (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
            mt[i] = mt[(i + m) % n] ^ xa
        self._i = 0

    def next(self):
        if self._i >= self._N:
            self._twist()
        y = self._mt[self._i]
        self._i += 1
        self.pos += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y

    def advance(self, n):
        """Skips n outputs, a whole twist (312 outputs) at a time."""
        while n > 0:
            if self._i >= self._N:
                self._twist()
            step = min(n, self._N - self._i)
            self._i += step
            self.pos += step
            n -= step
        return self

    def snapshot(self):
        return list(self._mt), self._i, self.pos

    def restore(self, snap):
        mt, self._i, self.pos = snap
        self._mt = list(mt)


def _entropy_key():
    return int.from_bytes(_os.urandom(8), "little")


def _legacy_key(seed, fn, limit):
    """The 64-bit key of a legacy seed: None (fresh entropy), an int in [0, limit) (any
    non-negative int, mod 2**64, when limit is None), or a
    non-empty sequence of ints in [0, 2**32) (mixed by NumPy's SeedSequence hash, so [5] and
    5 key different streams, as init_by_array and init_genrand do in NumPy)."""
    if seed is None:
        return _entropy_key()
    if not isinstance(seed, (int, _onp.integer)) and hasattr(seed, "asnumpy"):
        seed = seed.asnumpy()
    arr = _onp.asarray(seed) if isinstance(seed, (list, tuple, _onp.ndarray)) else None
    if arr is not None and arr.ndim == 0:
        seed, arr = arr.item(), None
    if arr is None:
        try:
            seed = _operator.index(seed)
        except TypeError:
            raise TypeError(f"[{fn}] seed must be None, an integer or a sequence of integers, "
                            f"got {type(seed).__name__}") from None
        if limit is None:  # np.random.seed: any non-negative int, taken mod 2**64
            if seed < 0:
                raise ValueError(f"[{fn}] seed must be non-negative; got {seed}")
            return seed & _MASK64
        if not 0 <= seed < limit:
            raise ValueError(f"[{fn}] seed must be between 0 and 2**32 - 1, got {seed}")
        return seed
    if arr.ndim != 1:
        raise ValueError(f"[{fn}] seed array must be 1-d, got {arr.ndim} dimensions")
    if arr.size == 0:
        raise ValueError(f"[{fn}] seed must be non-empty")
    if arr.dtype.kind not in "iu" and not (arr.dtype == object and all(
            isinstance(v, (int, _onp.integer)) and not isinstance(v, bool) for v in arr.flat)):
        raise TypeError(f"[{fn}] seed must be None, an integer or a sequence of integers, "
                        f"got an array of {arr.dtype}")
    words = [int(v) for v in arr.reshape(-1)]
    if any(not 0 <= v < 2**32 for v in words):
        raise ValueError(f"[{fn}] seed must be between 0 and 2**32 - 1")
    ss = _onp.random.SeedSequence(words)
    return int(ss.generate_state(1, _onp.uint64)[0])


def _check_word(v, fn, what, limit):
    if hasattr(v, "asnumpy"):
        v = v.asnumpy()
    if isinstance(v, _onp.ndarray) and v.size == 1 and v.dtype.kind in "iu":
        v = v.reshape(-1)[0]
    if isinstance(v, bool) or not isinstance(v, (int, _onp.integer)):
        raise TypeError(f"[{fn}] state {what} must be an integer, got {type(v).__name__}")
    v = int(v)
    if not 0 <= v < limit:
        raise ValueError(f"[{fn}] state {what} must be in [0, {limit}), got {v}")
    return v


def _legacy_state(key, pos, legacy):
    if legacy:
        return ("Philox", key, pos, 0, 0.0)
    return {"bit_generator": "Philox", "state": {"key": key, "pos": pos}, "has_gauss": 0,
            "gauss": 0.0}


def _parse_legacy_state(state, fn):
    """(key, pos) of a state get_state made; NumPy's MT19937 states and other generators' are
    ValueErrors, anything that is not a tuple or dict a TypeError."""
    if isinstance(state, dict):
        name = state.get("bit_generator")
        inner = state.get("state")
        if name == "Philox" and isinstance(inner, dict) and "counter" in inner:
            raise ValueError(f"[{fn}] this is a Generator's bit_generator state; a legacy "
                             "state holds 'key' and 'pos' (from get_state())")
        if name is not None and name != "Philox":
            raise ValueError(f"[{fn}] state is for the bit generator {name!r}, but ndx's "
                             "generator is Philox (not NumPy's MT19937): only states from "
                             "ndx's get_state() can be restored")
        if name is None or not isinstance(inner, dict) or not {"key", "pos"} <= inner.keys():
            raise ValueError(f"[{fn}] state dictionary is not valid: expected "
                             "{'bit_generator': 'Philox', 'state': {'key': ..., 'pos': ...}}")
        key, pos = inner["key"], inner["pos"]
    elif isinstance(state, (tuple, list)):
        if len(state) not in (3, 5):
            raise ValueError(f"[{fn}] state must be a tuple of 3 or 5 items, as get_state() "
                             f"returns; got {len(state)}")
        if isinstance(state[0], str) and state[0] == "MT19937":
            raise ValueError(f"[{fn}] state is NumPy's MT19937 state, but ndx's generator is "
                             "Philox-based, not MT19937: NumPy's states cannot be restored")
        if state[0] != "Philox":
            raise ValueError(f"[{fn}] state[0] must be 'Philox', got {state[0]!r}")
        key, pos = state[1], state[2]
    else:
        raise TypeError(f"[{fn}] state must be a dict or a tuple, got {type(state).__name__}")
    return _check_word(key, fn, "key", 2**64), _check_word(pos, fn, "pos", 2**63)


class _Legacy(_Stream):
    """NumPy's legacy (RandomState) methods that Generator lacks."""

    def random_sample(self, size=None, dtype=None, device=None, ctx=None, out=None):
        """Samples from [0, 1) uniformly."""
        return self.uniform(0.0, 1.0, size, dtype, device, ctx, out)

    ranf = sample = random_sample

    def random_integers(self, low, high=None, size=None):
        """Integers from [low, high] ([1, low] when high is None). Deprecated, as in NumPy:
        warns and calls randint."""
        import warnings
        if high is None:
            msg = f"Please call randint(1, {low} + 1) instead"
            low, high = 1, low
        else:
            msg = f"Please call randint({low}, {high} + 1) instead"
        warnings.warn("This function is deprecated. " + msg, DeprecationWarning, stacklevel=2)
        return self.randint(low, _index(high, "random_integers", "high") + 1, size=size)

    def tomaxint(self, size=None):
        """Integers from [0, 2**63 - 1] (NumPy's C long on 64-bit Linux), int64."""
        return self.randint(0, 2**63, size=size, dtype="int64")


class RandomState(_Legacy):
    """NumPy's legacy RandomState over ndx's generator. Its calls take their Philox seeds from
    an std::mt19937_64 keyed by the seed, as the global stream does, so RandomState(s) draws
    what np.random draws after np.random.seed(s). The numbers are not NumPy's (ndx has no
    MT19937); floats default to float32, as everywhere in ndx."""

    def __init__(self, seed=None):
        super().__init__()
        self.seed(seed)

    def seed(self, seed=None):
        """Reseeds: seed is None (fresh entropy), an int in [0, 2**32) or a non-empty
        sequence of them (as NumPy's legacy seed)."""
        self._key = _legacy_key(seed, "RandomState.seed", 2**32)
        self._mt = _MT64(self._key)

    def _next_seed(self):
        with _SEED_LOCK:
            return _signed64(self._mt.next())

    # A call that fails draws nothing from the global generator: nor does it here.
    def _mark(self):
        return self._mt.snapshot()

    def _rewind(self, mark):
        self._mt.restore(mark)

    def _perm(self, n):
        snap = self._mt.snapshot()
        try:
            return super()._perm(n)
        except Exception:
            self._mt.restore(snap)
            raise

    def get_state(self, legacy=True):
        """('Philox', key, pos, 0, 0.0), or a dict {'bit_generator': 'Philox', 'state':
        {'key': key, 'pos': pos}, 'has_gauss': 0, 'gauss': 0.0} when legacy is False: key is
        the 64-bit seed and pos the calls drawn since (ndx keeps no cached Gaussian)."""
        return _legacy_state(self._key, self._mt.pos, legacy)

    def set_state(self, state):
        """Restores a state from get_state() (this RandomState's, another's or the global
        stream's); NumPy's MT19937 states are a ValueError."""
        key, pos = _parse_legacy_state(state, "RandomState.set_state")
        self._key = key
        self._mt = _MT64(key).advance(pos)

    def __getstate__(self):
        return self.get_state()

    def __setstate__(self, state):
        _Stream.__init__(self)
        self.set_state(state)

    def __repr__(self):
        return "RandomState(Philox)"


class SeedSequence:
    """NumPy's SeedSequence (entropy pool, spawn keys and hash are NumPy's own, so
    generate_state gives NumPy's words). generate_state returns a NumPy array: seed words for
    host-side generators."""

    def __init__(self, entropy=None, *, spawn_key=(), pool_size=4, n_children_spawned=0):
        # ndx arrays are taken as NumPy's arrays are (their host values).
        entropy, spawn_key = _host(entropy), _host(spawn_key)
        try:
            self._ss = _onp.random.SeedSequence(entropy, spawn_key=spawn_key,
                                                pool_size=pool_size,
                                                n_children_spawned=n_children_spawned)
        except (TypeError, ValueError, OverflowError) as e:
            kind = TypeError if isinstance(e, TypeError) else ValueError
            raise kind(f"[SeedSequence] {e}") from None

    @classmethod
    def _wrap(cls, ss):
        self = cls.__new__(cls)
        self._ss = ss
        return self

    entropy = property(lambda self: self._ss.entropy)
    spawn_key = property(lambda self: self._ss.spawn_key)
    pool_size = property(lambda self: self._ss.pool_size)
    n_children_spawned = property(lambda self: self._ss.n_children_spawned)
    state = property(lambda self: self._ss.state)
    pool = property(lambda self: self._ss.pool)

    def generate_state(self, n_words, dtype=_onp.uint32):
        """n_words words (uint32 or uint64) of the pool's hash, as NumPy's."""
        n = _index(n_words, "SeedSequence.generate_state", "n_words")
        try:
            dt = _onp.dtype(dtype)
        except TypeError:
            dt = None
        if dt not in (_onp.dtype(_onp.uint32), _onp.dtype(_onp.uint64)):
            raise ValueError("[SeedSequence.generate_state] dtype must be uint32 or uint64, "
                             f"got {dtype}")
        if n < 0:
            raise ValueError(f"[SeedSequence.generate_state] n_words must be non-negative; "
                             f"got {n}")
        return self._ss.generate_state(n, dt)

    def spawn(self, n_children):
        """n_children child SeedSequences (continuing from the ones spawned before)."""
        n = _index(n_children, "SeedSequence.spawn", "n_children")
        if n < 0:
            raise ValueError(f"[SeedSequence.spawn] n_children must be non-negative; got {n}")
        return [SeedSequence._wrap(c) for c in self._ss.spawn(n)]

    def __repr__(self):
        return repr(self._ss)


def _as_seed_sequence(seed):
    if isinstance(seed, SeedSequence):
        return seed
    if isinstance(seed, _onp.random.SeedSequence):
        return SeedSequence._wrap(seed)
    return None


class BitGenerator:
    """Base of ndx's bit generators (NumPy's numpy.random.BitGenerator); Philox is the one
    ndx has."""

    def __init__(self, seed=None):
        raise TypeError("[BitGenerator] BitGenerator is a base class; use Philox")


class Philox(BitGenerator):
    """ndx's bit generator: a key and a counter; call c of a Generator draws Philox-4x32-10
    with the seed splitmix64(key + c * golden ratio). Not NumPy's Philox stream (the values
    differ), though Generator(Philox(s)) is as repeatable. seed is None (fresh entropy), an
    int >= 0 (the key itself), a sequence of ints or a SeedSequence (keyed by its hash)."""

    def __init__(self, seed=None):
        ss = _as_seed_sequence(seed)
        self._seed_seq = ss if ss is not None else self._seed_sequence_of(seed)
        self._key = self._key_of(self._seed_seq)
        self._count = 0

    @staticmethod
    def _seed_sequence_of(seed):
        if seed is None:
            return SeedSequence()
        if isinstance(seed, (list, tuple, _onp.ndarray)) or hasattr(seed, "asnumpy"):
            try:
                return SeedSequence(_onp.asarray(_host(seed)).tolist())
            except (TypeError, ValueError) as e:
                raise type(e)(str(e).replace("[SeedSequence]", "[Philox]", 1)) from None
        try:
            s = _operator.index(seed)
        except TypeError:
            kind = type(seed).__module__ + "." + type(seed).__name__
            raise TypeError(f"[Philox] seed must be None, an int, a sequence of ints or a "
                            f"SeedSequence, got {kind}") from None
        if s < 0:
            raise ValueError(f"[Philox] seed must be non-negative; got {s}")
        return SeedSequence(s)

    @staticmethod
    def _key_of(ss):
        # A plain int seed keys the stream itself, so default_rng(s) and
        # default_rng(SeedSequence(s)) draw alike, as in NumPy.
        e = ss.entropy
        if (isinstance(e, int) and 0 <= e and not ss.spawn_key and ss.pool_size == 4):
            return e & _MASK64
        return int(ss.generate_state(1, _onp.uint64)[0])

    @property
    def seed_seq(self):
        return self._seed_seq

    @property
    def state(self):
        """{'bit_generator': 'Philox', 'state': {'key': key, 'counter': calls drawn}};
        assigning a state from .state restores the stream."""
        return {"bit_generator": "Philox", "state": {"key": self._key, "counter": self._count}}

    @state.setter
    def state(self, value):
        fn = "Philox.state"
        if not isinstance(value, dict):
            raise TypeError(f"[{fn}] state must be a dict, got {type(value).__name__}")
        name = value.get("bit_generator")
        if name != "Philox":
            raise ValueError(f"[{fn}] state is for the bit generator {name!r}, but ndx's is "
                             "Philox: only states from ndx's Philox.state can be restored")
        inner = value.get("state")
        if not isinstance(inner, dict) or not {"key", "counter"} <= inner.keys():
            raise ValueError(f"[{fn}] state dictionary is not valid: expected "
                             "{'bit_generator': 'Philox', 'state': {'key': ..., 'counter': "
                             "...}}")
        if not isinstance(inner["counter"], (int, _onp.integer)) and not isinstance(
                inner["key"], (int, _onp.integer)):
            raise ValueError(f"[{fn}] this is not ndx's Philox state (NumPy's Philox holds "
                             "arrays); only states from ndx's Philox.state can be restored")
        key = _check_word(inner["key"], fn, "key", 2**64)
        count = _check_word(inner["counter"], fn, "counter", 2**64)
        self._key, self._count = key, count

    def spawn(self, n_children):
        """n_children independent Philox bit generators from seed_seq.spawn."""
        return [Philox(s) for s in self._seed_seq.spawn(n_children)]

    def __repr__(self):
        return "Philox()"


def _unavailable(name):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"[{name}] ndx has no {name} bit generator: its only one is Philox (a counter-based "
            "stream that does not reproduce NumPy's numbers); use default_rng(seed) or "
            "Generator(Philox(seed))")
    return type(name, (BitGenerator,), {
        "__init__": __init__, "__module__": __name__,
        "__doc__": f"NumPy's {name}, which ndx lacks: constructing it is NotImplementedError."})


MT19937 = _unavailable("MT19937")
PCG64 = _unavailable("PCG64")
PCG64DXSM = _unavailable("PCG64DXSM")
SFC64 = _unavailable("SFC64")


def _check_axis(axis, ndim, fn):
    a = _index(axis, fn, "axis")
    if not -ndim <= a < ndim:
        raise _core.AxisError(f"[{fn}] axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


class Generator(_Stream):
    """NumPy 2's Generator over ndx's counter-based stream: calls on one Generator draw from
    seeds derived from its bit generator's key (a Philox), independent of the global seed and
    of other Generators. The numbers are not NumPy's; seeding is as repeatable."""

    _dirichlet_zeros = True
    _multinomial_arrays = True

    def __init__(self, bit_generator):
        """bit_generator is ndx's Philox (or a SeedSequence, which keys a new one: an ndx
        extension). Anything else (a seed, None, a Generator) is a TypeError (NumPy 2.4 raises
        AttributeError, which this is too); default_rng takes seeds."""
        if isinstance(bit_generator, Philox):
            bitgen = bit_generator
        elif _as_seed_sequence(bit_generator) is not None:
            bitgen = Philox(bit_generator)
        elif isinstance(bit_generator, (BitGenerator, _onp.random.BitGenerator)):
            raise TypeError(f"[Generator] ndx cannot draw from "
                            f"{type(bit_generator).__name__}; give a seed to default_rng, or "
                            "ndx's Philox")
        else:
            raise _NoBitGeneratorError(
                f"[Generator] bit_generator must be a BitGenerator (ndx's Philox), not "
                f"{type(bit_generator).__name__}; default_rng(seed) takes a seed")
        self._bit_generator = bitgen

    # The stream's key and counter live in the bit generator, so its .state is the stream's.
    _key = property(lambda self: self._bit_generator._key)

    @property
    def _count(self):
        return self._bit_generator._count

    @_count.setter
    def _count(self, value):
        self._bit_generator._count = value

    @property
    def bit_generator(self):
        """The Philox this Generator draws from (its .state gets and sets the stream)."""
        return self._bit_generator

    def spawn(self, n_children):
        """n_children independent Generators from the bit generator's SeedSequence: distinct
        streams, the same ones for the same parent seed."""
        n = _index(n_children, "Generator.spawn", "n_children")
        if n < 0:  # (NumPy's OverflowError: n_children is unsigned)
            raise _RangeError(f"[Generator.spawn] n_children must be non-negative; got {n}")
        return [Generator(b) for b in self._bit_generator.spawn(n)]

    # ---- NumPy's checks where its Generator is stricter than the legacy functions ----
    def gamma(self, shape, scale=1.0, size=None, dtype=None, device=None, ctx=None,
              out=None):
        """Samples from Gamma(shape, scale) (shape has no default, as in NumPy)."""
        return super().gamma(shape, scale, size, dtype, device, ctx, out)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None, device=None, ctx=None,
                out=None):
        """Samples from [low, high) uniformly; high < low is a ValueError (as NumPy's
        Generator), an infinite or NaN range OverflowError."""
        lo, hi = _host(low), _host(high)
        if not (isinstance(lo, str) or isinstance(hi, str)) and not (
                _onp.iscomplexobj(lo) or _onp.iscomplexobj(hi)):
            with _onp.errstate(invalid="ignore"):
                if _onp.any(_onp.asarray(hi, dtype=_onp.float64)
                            < _onp.asarray(lo, dtype=_onp.float64)):
                    raise ValueError("[uniform] high - low < 0")
        return super().uniform(low, high, size, dtype, device, ctx, out)

    def random(self, size=None, dtype=None, out=None, device=None, ctx=None):
        """Samples from [0, 1) uniformly; dtype float32 or float64 (ndx's default float when
        None), out of that dtype."""
        dtype = _float_dtype(dtype, "Generator.random")
        _check_out(out, size, dtype, "Generator.random")
        return super().random(size, dtype, device, ctx, out)

    def standard_normal(self, size=None, dtype=None, out=None, device=None, ctx=None):
        """Samples from N(0, 1); dtype float32 or float64, out of that dtype."""
        dtype = _float_dtype(dtype, "Generator.standard_normal")
        _check_out(out, size, dtype, "Generator.standard_normal")
        return super().standard_normal(size, dtype, device, ctx, out)

    def standard_exponential(self, size=None, dtype=None, method="zig", out=None,
                             device=None, ctx=None):
        """Samples from the exponential distribution with mean 1. method 'zig' draws with
        ndx's exponential sampler, 'inv' inverts the distribution function (-log(1 - U)
        of a float64 uniform U); the two give different numbers from one seed, as in
        NumPy."""
        fn = "Generator.standard_exponential"
        dtype = _float_dtype(dtype, fn)
        _check_out(out, size, dtype, fn)
        if method == "zig":
            return super().standard_exponential(size, dtype, device, ctx, out)
        if method != "inv":
            raise ValueError(f"[{fn}] method must be 'zig' or 'inv', got {method!r}")
        np = _np()
        shape = out.shape if out is not None and size is None else size
        u = super().uniform(0.0, 1.0, shape, "float64", device, ctx)
        r = (-np.log1p(-u)).astype(dtype or _core._default_float())
        if out is not None:
            out[...] = r
            return out
        return r

    def standard_gamma(self, shape, size=None, dtype=None, out=None, device=None, ctx=None):
        """Samples from Gamma(shape, 1); dtype float32 or float64, out of that dtype."""
        dtype = _float_dtype(dtype, "Generator.standard_gamma")
        _check_out(out, size, dtype, "Generator.standard_gamma")
        if out is not None and size is None:  # (out takes the shape's broadcast, as NumPy)
            self._broadcast_size("standard_gamma", tuple(out.shape), shape)
        return super().standard_gamma(shape, size, dtype, device, ctx, out)

    def hypergeometric(self, ngood, nbad, nsample, size=None, dtype=None, device=None,
                       ctx=None, out=None):
        """Good items among nsample drawn without replacement from ngood good and nbad bad
        ones; nsample may be 0 (giving 0), as in NumPy's Generator."""
        fn = "hypergeometric"
        for name, v in (("ngood", ngood), ("nbad", nbad), ("nsample", nsample)):
            _check_int_array(v, fn, name)
            if isinstance(v, (str, complex)):
                _host_floats(v)
        return self._hypergeometric(ngood, nbad, nsample, size, dtype, device, ctx, out)

    def _hypergeometric(self, ngood, nbad, nsample, size=None, dtype=None, device=None,
                        ctx=None, out=None):
        np = _np()
        fn = "hypergeometric"
        if not _onp.any(_host_floats(nsample) == 0):
            return super()._hypergeometric(ngood, nbad, nsample, size, dtype, device, ctx,
                                           out)
        g, b, k = (_onp.trunc(_host_floats(v)) for v in (ngood, nbad, nsample))
        for name, v in (("ngood", g), ("nbad", b), ("nsample", k)):
            if _onp.any(v < 0):
                raise ValueError(f"[{fn}] {name} < 0")
        if _onp.any(g + b < k):
            raise ValueError(f"[{fn}] ngood + nbad < nsample")
        empty = k == 0  # draw with nsample 1 (from at least one item) there, then put 0
        r = super()._hypergeometric(np.asarray(_onp.where(empty & (g + b == 0), 1.0, g)),
                                    np.asarray(b), np.asarray(_onp.where(empty, 1.0, k)),
                                    size, dtype, device, ctx)
        r = np.where(np.asarray(empty), 0, r).astype(r.dtype)
        if _onp.ndim(empty) == 0 and size is None:
            r = r.reshape(())
        if out is not None:
            out[...] = r
            return out
        return r

    def multivariate_hypergeometric(self, colors, nsample, size=None, method="marginals"):
        """Counts of each color among nsample items drawn without replacement from an urn
        holding colors[i] items of color i; shape size + (len(colors),), int64. method
        'marginals' draws a chain of hypergeometrics (sum(colors) must stay below 10**9),
        'count' takes the nsample items of smallest random keys and counts their colors
        (the two give different numbers from one seed, as in NumPy). Where 'count' would
        need more than 2**25 keys (one per item and variate) it draws the items one at a
        time instead (nsample up to 4096), else by the chain."""
        np = _np()
        fn = "Generator.multivariate_hypergeometric"
        if method not in ("count", "marginals"):
            raise ValueError(f'[{fn}] method must be "count" or "marginals".')
        c = _onp.asarray(_host(colors))
        bad = c.ndim != 1 or (c.size and c.dtype.kind not in "iu") or (
            c.size and c.dtype.kind == "i" and c.min() < 0)
        if c.size and c.dtype.kind == "u" and c.max() > _onp.iinfo(_onp.int64).max:
            bad = True
        if bad:
            raise ValueError(f"[{fn}] colors must be a one-dimensional sequence of "
                             "nonnegative integers not exceeding 9223372036854775807.")
        c = c.astype(_onp.int64)
        hn = _host(nsample)
        if isinstance(hn, _onp.ndarray) and hn.ndim == 0:
            hn = hn.item()
        if isinstance(hn, (bool, _onp.bool_)) or not isinstance(hn, (int, _onp.integer)):
            raise ValueError(f"[{fn}] nsample must be an integer")
        k = int(hn)
        total = int(c.sum())
        if k < 0:
            raise ValueError(f"[{fn}] nsample must be nonnegative.")
        if k > total:
            raise ValueError(f"[{fn}] nsample > sum(colors)")
        shape = _size(size, fn) or ()
        rows = math.prod(shape)
        kinds = c.size
        if method == "marginals" and total >= 10**9:
            raise ValueError(f"[{fn}] sum(colors) must not exceed the maximum value of a "
                             "64 bit signed integer (and, for method 'marginals', be less "
                             "than 10**9)")
        if rows == 0 or kinds == 0 or k == 0:
            return np.zeros(shape + (kinds,), dtype="int64")
        if method == "count" and rows * total <= 2**25:
            keys = self.uniform(0.0, 1.0, size=shape + (total,), dtype="float64")
            cut = np.sort(keys, axis=-1)[..., k - 1:k]
            taken = (keys <= cut).astype("int64")
            ends = _onp.cumsum(c)
            csum = np.cumsum(taken, axis=-1)
            at_ends = np.take(csum, np.asarray(ends[c > 0] - 1), axis=-1)
            before = np.concatenate([np.zeros(shape + (1,), dtype="int64"),
                                     at_ends[..., :-1]], axis=-1)
            got = at_ends - before
            if (c > 0).all():
                return got
            r = np.zeros(shape + (kinds,), dtype="int64")
            r[..., np.asarray(_onp.flatnonzero(c > 0))] = got
            return r
        if method == "count" and (k <= 4096 or total >= 10**9):
            if k > 4096:
                raise ValueError(f"[{fn}] method 'count' with sum(colors) >= 10**9 takes "
                                 "nsample up to 4096 in ndx")
            # Item by item: the next item is of color i in proportion to what is left of it.
            left_c = np.broadcast_to(np.asarray(c.astype(_onp.float64)), shape + (kinds,))
            got = np.zeros(shape + (kinds,), dtype="float64")
            for step in range(k):
                u = self.uniform(0.0, 1.0, size=shape + (1,), dtype="float64")
                cdf = np.cumsum(left_c - got, axis=-1)
                pick = np.sum(cdf <= u * float(total - step), axis=-1, keepdims=True)
                got = got + (np.arange(kinds) == np.minimum(pick, kinds - 1))
            return got.astype("int64")
        left = k
        remaining = np.full(shape, float(k), dtype="float64")
        counts = []
        behind = total
        for i in range(kinds - 1):
            behind -= int(c[i])
            if left == 0:
                x = np.zeros(shape, dtype="int64")
            else:
                x = self._hypergeometric(float(c[i]), float(behind), remaining, size=shape)
            counts.append(x.astype("int64"))
            remaining = remaining - x.astype("float64")
        counts.append(remaining.astype("int64"))
        return np.stack(counts, axis=-1)

    def permuted(self, x, *, axis=None, out=None):
        """x with each slice along axis shuffled independently (all elements when axis is
        None), as NumPy's Generator.permuted (axis and out are keywords, as there)."""
        np = _np()
        if _onp.ndim(_host(x)) == 0:
            raise TypeError("[Generator.permuted] x must be an array of at least 1 dimension "
                            "(len() of unsized object)")
        return super().permuted(x if isinstance(x, np.ndarray) else np.asarray(x), axis, out)

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False):
        """Integers from [low, high) ([low, high] with endpoint=True; [0, low) when high is
        None)."""
        if high is None:
            low, high = 0, low
        if endpoint:
            high = _inclusive_high(low, high)
        return self.randint(low, high, size=size, dtype=dtype)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True, device=None,
               ctx=None, out=None):
        """Samples from a (an int n: arange(n); else slices of a along axis), with or without
        replacement, uniformly or with probabilities p. Without replacement the sample is in
        random order whatever shuffle says (shuffle=False only lets NumPy skip work)."""
        np = _np()
        fn = "Generator.choice"
        if not isinstance(shuffle, (bool, _onp.bool_)):
            raise TypeError(f"[{fn}] shuffle must be a bool, got {type(shuffle).__name__}")
        if _is_scalar(a) and not isinstance(a, float):
            return super().choice(a, size, replace, p, device, ctx, out)
        pool = a if isinstance(a, np.ndarray) else np.asarray(a)
        if pool.ndim == 0:
            if _onp.dtype(pool.dtype).kind not in "iu":
                raise ValueError(f"[{fn}] a must be a sequence or an integer, not "
                                 f"{type(a).__name__}")
            return super().choice(_index(pool.item(), fn, "a"), size, replace, p, device,
                                  ctx, out)
        ax = _check_axis(axis, pool.ndim, fn)
        n = pool.shape[ax]
        shape = _size(size, fn) or ()
        if n == 0:
            if math.prod(shape) > 0 or size is None:
                raise ValueError(f"[{fn}] a cannot be empty unless no samples are taken")
            idx = np.zeros(shape, dtype="int64")
        else:
            idx = super().choice(n, size, replace, p)
        r = np.take(pool, idx, axis=ax)
        if out is not None:
            out[...] = r
            r = out
        return _place(r, device, ctx)

    def _distinct(self, n, k):
        """k distinct integers of range(n) in random order. A few of many (k < n / 50, as
        NumPy's Generator switches) by Floyd's algorithm, O(k) where a permutation of n
        takes O(n) time and memory (choice(10**9, 5, replace=False) must not need 8 GB)."""
        np = _np()
        if k == 0:  # (no permutation of n for none of them)
            return np.zeros(0, dtype="int64")
        if not k < n / 50:
            return super()._distinct(n, k)
        # Floyd: for j = n - k .. n - 1 take t uniform in [0, j], or j itself if t is taken.
        tops = self.randint(0, _onp.arange(n - k + 1, n + 1, dtype=_onp.int64)).asnumpy()
        taken, picks = set(), []
        for j, t in zip(range(n - k, n), tops.tolist()):
            t = j if t in taken else t
            taken.add(t)
            picks.append(t)
        # Floyd's order is not random (late j come last): shuffle it, as NumPy does.
        return np.asarray(_onp.asarray(picks, dtype=_onp.int64)[self._perm(k).asnumpy()])

    def permutation(self, x, axis=0):
        """A permuted copy of x along axis, or a permutation of arange(x)."""
        np = _np()
        if _is_scalar(x) and not isinstance(x, float):
            return self._perm_of_range(_index(x, "Generator.permutation", "x"))
        x = x if isinstance(x, np.ndarray) else np.asarray(x)
        if x.ndim == 0:
            raise _core.AxisError("[Generator.permutation] axis 0 is out of bounds for array "
                                  "of dimension 0 (x must be an integer or an array of at "
                                  "least 1 dimension)")
        ax = _check_axis(axis, x.ndim, "Generator.permutation")
        return np.take(x, self._perm(x.shape[ax]), axis=ax)

    def shuffle(self, x, axis=0):
        """Shuffles x in place along axis (a list only along axis 0, as NumPy's)."""
        np = _np()
        fn = "Generator.shuffle"
        if isinstance(x, np.ndarray):
            if x.ndim == 0:  # NumPy's TypeError: a 0-d array has no length
                raise TypeError(f"[{fn}] x must be at least 1-dimensional")
            ax = _check_axis(axis, x.ndim, fn)
            x[...] = np.take(x, self._perm(x.shape[ax]), axis=ax)
            return None
        if isinstance(x, _onp.ndarray) and x.ndim:  # (NumPy's own arrays, in place too)
            ax = _check_axis(axis, x.ndim, fn)
            _shuffle_host(x, self._perm(x.shape[ax]).asnumpy(), ax)
            return None
        if isinstance(x, _abc.MutableSequence):
            if _index(axis, fn, "axis") != 0:
                raise NotImplementedError(f"[{fn}] axis is only supported on ndarrays")
            return super().shuffle(x)
        if isinstance(x, _onp.ndarray):
            raise TypeError(f"[{fn}] x must be at least 1-dimensional")
        raise TypeError(f"[{fn}] x must be an ndarray or a mutable sequence, got "
                        f"{type(x).__name__}")

    def __repr__(self):
        return "Generator(Philox)"


def default_rng(seed=None):
    """A new Generator seeded with seed: None (fresh entropy), an int >= 0, a sequence or
    array (NumPy's or ndx's) of them, a SeedSequence (ndx's or NumPy's), or ndx's Philox (drawn
    from as it is); a Generator is returned as it is, as NumPy does. NumPy's own bit
    generators are a TypeError: ndx cannot draw from them."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, (Philox, BitGenerator, _onp.random.BitGenerator)):
        return Generator(seed)
    try:
        return Generator(Philox(seed))
    except (TypeError, ValueError) as e:
        raise type(e)(str(e).replace("[Philox]", "[Generator]", 1)) from None


_global = _Legacy()


def seed(seed=None):
    """Seeds the global generator: calls after seed(s) draw the same numbers on every run.
    seed is None, an int >= 0 (taken mod 2**64) or a sequence of ints in [0, 2**32)."""
    _core.random_seed(_legacy_key(seed, "seed", None))


def get_state(legacy=True):
    """The global stream's state, as RandomState.get_state returns it: ('Philox', key, pos,
    0, 0.0) with the last seed and the calls drawn since (reading it draws nothing)."""
    key, pos = _core._random_position()
    return _legacy_state(key, pos, legacy)


def set_state(state):
    """Restores a state from get_state() or RandomState.get_state(): seeds the global
    generator with its key and skips its pos draws."""
    key, pos = _parse_legacy_state(state, "set_state")
    _core._set_random_position(key, pos)


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
random_sample = ranf = sample = _global.random_sample
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
random_integers = _global.random_integers
