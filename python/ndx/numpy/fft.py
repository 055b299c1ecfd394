"""np.fft: NumPy's discrete Fourier transforms over ndx arrays.

fft / ifft, rfft and irfft along one axis are C++ ops on KISS FFT (src/operator/fft.cc), with
gradients; the n-dimensional, Hermitian and helper functions compose them here. Results are
complex64 for float32 (and integer, bool) input, complex128 for float64: NumPy 2 keeps the
input's precision the same way, with ndx's default float dtype standing in for float64.
float16 input is transformed in single precision; irfft and hfft of float16 give float16, as
NumPy's.
"""
import builtins as _builtins
import functools as _functools
import inspect as _inspect
import operator as _operator

import numpy as _onp

from .._registry import internal_function as _internal_function

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")
_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _np():
    from .. import numpy as np  # the package imports this module while it is being built
    return np


def _array(a):
    np = _np()
    return a if isinstance(a, np.ndarray) else np.asarray(a)


def _axis_error(axis, ndim, fn):
    """NumPy's AxisError (a ValueError and an IndexError) for an axis out of range."""
    from .. import AxisError
    return AxisError(f"[{fn}] axis {axis} is out of bounds for array of dimension {ndim}")


def _vector_input(a, axis, fn):
    """a as an ndarray with axis in range: a 0-d array has no axis to transform."""
    a = _array(a)
    axis = _operator.index(axis)
    if not -a.ndim <= axis < a.ndim:
        raise _axis_error(axis, a.ndim, fn)
    return a, axis


def _check_norm(norm, fn):
    if norm not in _NORMS:
        raise ValueError(f'[{fn}] Invalid norm value {norm!r}; should be "backward", "ortho" '
                         'or "forward".')
    return norm


def _n(n, fn):
    if n is None:
        return None
    n = _operator.index(n)
    if n < 1:
        raise ValueError(f"[{fn}] Invalid number of FFT data points ({n}) specified.")
    return n


def _c2c(a, n, axis, norm, inverse, fn):
    op = _internal_function("_npi_fft")
    a, axis = _vector_input(a, axis, fn)
    return op(a, n=_n(n, fn), axis=axis, norm=_check_norm(norm, fn), inverse=inverse)


def fft(a, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform along `axis` (n crops or zero-pads)."""
    return _c2c(a, n, axis, norm, False, "fft")


def ifft(a, n=None, axis=-1, norm="backward"):
    """The inverse of fft: ifft(fft(a)) == a."""
    return _c2c(a, n, axis, norm, True, "ifft")


def rfft(a, n=None, axis=-1, norm="backward"):
    """The DFT of real input: the n // 2 + 1 non-negative frequency terms."""
    op = _internal_function("_npi_rfft")
    a, axis = _vector_input(a, axis, "rfft")
    return op(a, n=_n(n, "rfft"), axis=axis, norm=_check_norm(norm, "rfft"))


def irfft(a, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: n real values (2 * (m - 1) by default) from m frequency terms."""
    op = _internal_function("_npi_irfft")
    a, axis = _vector_input(a, axis, "irfft")
    r = op(a, n=_n(n, "irfft"), axis=axis, norm=_check_norm(norm, "irfft"))
    # NumPy's output dtype is result_type(a.real.dtype, 1.0): float16 input gives float16
    # (computed in single precision and rounded once).
    return r.astype("float16") if a.dtype == "float16" else r


def hfft(a, n=None, axis=-1, norm="backward"):
    """The FFT of a signal with Hermitian symmetry (real spectrum): irfft of conj(a) scaled
    the other way."""
    _check_norm(norm, "hfft")
    return irfft(_np().conjugate(_array(a)), n, axis, _SWAPPED[norm])


def ihfft(a, n=None, axis=-1, norm="backward"):
    """The inverse of hfft: conj(rfft(a)) scaled the other way."""
    _check_norm(norm, "ihfft")
    return _np().conjugate(rfft(a, n, axis, _SWAPPED[norm]))


def _axes_and_sizes(a, s, axes, fn):
    """NumPy's rules for s and axes: both given with equal lengths, or s alone (the last
    len(s) axes), or axes alone (their lengths), or neither (every axis)."""
    if s is not None and not isinstance(s, (list, tuple)):
        s = (s,)
    if axes is not None and not isinstance(axes, (list, tuple)):
        axes = (axes,)
    if axes is None:
        axes = (tuple(range(-len(s), 0)) if s is not None else tuple(range(a.ndim)))
    axes = tuple(_operator.index(x) for x in axes)
    if s is not None and len(s) != len(axes):  # NumPy checks this before the axes
        raise ValueError(f"[{fn}] Shape and axes have different lengths: {len(s)} and "
                         f"{len(axes)}.")
    for x in axes:  # (before their lengths are read)
        if not -a.ndim <= x < a.ndim:
            raise _axis_error(x, a.ndim, fn)
    if s is None:
        s = tuple(a.shape[x] for x in axes)
    if len(s) != len(axes):
        raise ValueError(f"[{fn}] Shape and axes have different lengths: {len(s)} and "
                         f"{len(axes)}.")
    return tuple(s), axes


def _c2c_n(a, s, axes, norm, inverse, fn):
    a = _array(a)
    s, axes = _axes_and_sizes(a, s, axes, fn)
    if not axes:
        return a.astype(_onp.result_type(a.dtype, _onp.complex64)) if a.ndim == 0 else a
    for n, axis in _builtins.reversed(list(zip(s, axes))):
        a = _c2c(a, n, axis, norm, inverse, fn)
    return a


def fftn(a, s=None, axes=None, norm="backward"):
    """The n-dimensional DFT over `axes` (every axis by default), one axis at a time."""
    return _c2c_n(a, s, axes, norm, False, "fftn")


def ifftn(a, s=None, axes=None, norm="backward"):
    """The inverse of fftn."""
    return _c2c_n(a, s, axes, norm, True, "ifftn")


def fft2(a, s=None, axes=(-2, -1), norm="backward"):
    """The two-dimensional DFT over the last two axes."""
    return _c2c_n(a, s, axes, norm, False, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm="backward"):
    """The inverse of fft2."""
    return _c2c_n(a, s, axes, norm, True, "ifft2")


def rfftn(a, s=None, axes=None, norm="backward"):
    """The n-dimensional DFT of real input: rfft over the last axis, fft over the others."""
    a = _array(a)
    s, axes = _axes_and_sizes(a, s, axes, "rfftn")
    if not axes:
        raise ValueError("[rfftn] at least one axis must be transformed")
    a = rfft(a, s[-1], axes[-1], norm)
    for n, axis in _builtins.reversed(list(zip(s[:-1], axes[:-1]))):
        a = _c2c(a, n, axis, norm, False, "rfftn")
    return a


def irfftn(a, s=None, axes=None, norm="backward"):
    """The inverse of rfftn: ifft over all axes but the last, irfft over the last (its output
    length s[-1], by default 2 * (m - 1))."""
    a = _array(a)
    if s is None:
        _, axes = _axes_and_sizes(a, None, axes, "irfftn")
        s = tuple(a.shape[x] for x in axes[:-1]) + (2 * (a.shape[axes[-1]] - 1),)
    s, axes = _axes_and_sizes(a, s, axes, "irfftn")
    if not axes:
        raise ValueError("[irfftn] at least one axis must be transformed")
    for n, axis in zip(s[:-1], axes[:-1]):
        a = _c2c(a, n, axis, norm, True, "irfftn")
    return irfft(a, s[-1], axes[-1], norm)


def rfft2(a, s=None, axes=(-2, -1), norm="backward"):
    """rfftn over the last two axes."""
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm="backward"):
    """irfftn over the last two axes."""
    return irfftn(a, s, axes, norm)


def fftfreq(n, d=1.0, device=None, dtype=None):
    """The sample frequencies of an n-point DFT with sample spacing d: [0, 1, ..., n//2 - 1,
    -(n//2), ..., -1] / (d n) for even n (odd n likewise)."""
    n = _operator.index(n)
    if n < 1:
        raise ValueError(f"[fftfreq] n must be a positive integer, got {n}")
    np = _np()
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1, dtype="int64"),
                        np.arange(-(n // 2), 0, dtype="int64")])
    return (k * (1.0 / (n * d))).astype(np.float32 if dtype is None else dtype)


def rfftfreq(n, d=1.0, device=None, dtype=None):
    """The sample frequencies of rfft: [0, 1, ..., n // 2] / (d n)."""
    n = _operator.index(n)
    if n < 1:
        raise ValueError(f"[rfftfreq] n must be a positive integer, got {n}")
    np = _np()
    k = np.arange(0, n // 2 + 1, dtype="int64")
    return (k * (1.0 / (n * d))).astype(np.float32 if dtype is None else dtype)


def _shift(x, axes, sign):
    np = _np()
    x = _array(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif not isinstance(axes, (list, tuple)):
        axes = (axes,)
    shifts = tuple(sign * (x.shape[a] // 2) if sign > 0 else -(x.shape[a] // 2) for a in axes)
    return np.roll(x, shifts, axes) if axes else x


def fftshift(x, axes=None):
    """The zero frequency moved to the centre: a roll by n // 2 along each axis."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift: a roll by -(n // 2) along each axis."""
    return _shift(x, axes, -1)


def _takes_out(fn):
    """fn with NumPy 2's out= (last, positional or keyword): the transform written into out,
    which must have the result's shape and a dtype it casts to."""
    sig = _inspect.signature(fn)
    n_params = len(sig.parameters)
    name = fn.__name__

    @_functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if len(args) > n_params:
            if out is not None or len(args) > n_params + 1:
                raise TypeError(f"[{name}] takes at most {n_params + 1} positional arguments")
            args, out = args[:n_params], args[n_params]
        result = fn(*args, **kwargs)
        if out is None:
            return result
        if not isinstance(out, _np().ndarray):
            raise TypeError(f"[{name}] out must be an ndarray, got {type(out).__name__}")
        if not _np().can_cast(result.dtype, out.dtype, "same_kind"):  # NumPy's ufunc rule
            raise TypeError(f"[{name}] Cannot cast output from {result.dtype} to {out.dtype} "
                            "with casting rule 'same_kind'")
        if tuple(out.shape) != tuple(result.shape):
            raise ValueError(f"[{name}] out has shape {tuple(out.shape)}, the result "
                             f"{tuple(result.shape)}")
        out[...] = result
        return out

    with_out.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + [
        _inspect.Parameter("out", _inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)])
    return with_out


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "fft2", "ifft2",
              "rfftn", "irfftn", "rfft2", "irfft2"):
    globals()[_name] = _takes_out(globals()[_name])
del _name
