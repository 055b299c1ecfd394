"""One implementation of NumPy's series functions for every basis of numpy.polynomial.

A basis P_0 = 1, P_1, P_2, ... is given by its three-term recurrence
    P_{k+1} = (alpha_k x + beta_k) P_k - gamma_k P_{k-1}
(and, for the orthogonal ones, the log of its norms h_k, and for quadrature whether it is
symmetric). From it: x P_k = (P_{k+1} - beta_k P_k + gamma_k P_{k-1}) / alpha_k (mulx), the
values by Clenshaw's recurrence, the pseudo-Vandermonde matrix, products and division, the
derivative matrix (exact integers for every basis here; integration solves with it), the
(scaled) companion matrix and Gauss quadrature (Golub-Welsch). The math runs on ndx arrays;
only the recurrence constants (one per coefficient) are made on the host. make_functions
builds a module's functions (chebval, chebder, ...) from a Basis."""
import functools
import math
import warnings

import numpy as _onp

import ndx.numpy as _np

from . import polyutils as pu
from .polyutils import _as_int, _inexact, _kind, _series, _to_nd


class Basis:
    """The recurrence constants of one basis; prefix names its functions ('cheb')."""

    def __init__(self, prefix, alpha, beta, gamma, line, log_norm=None, symmetric=False,
                 flip_companion=True):
        self.prefix = prefix
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self.line_parts = line
        self.log_norm = log_norm
        self.symmetric = symmetric
        self.flip_companion = flip_companion
        self.mul_impl = None  # a basis's own product (the power basis: convolution)
        self.div_impl = None
        self.pow_mul = None


def _real_dtype(a):
    d = str(a.dtype)
    return {"float32": "float32", "complex64": "float32", "float16": "float32"}.get(d,
                                                                                 "float64")


def _const(values, like):
    """A host list of recurrence constants as an ndx array in like's precision."""
    return _np.asarray(_onp.asarray(values, dtype=_real_dtype(like)))


def _cast(a, dtype):
    return a if str(a.dtype) == str(dtype) else a.astype(dtype)


# ------------------------------------------------------------------------ arithmetic
def add(c1, c2):
    """The sum of two series."""
    [c1, c2] = pu.as_series([c1, c2])
    n = max(len(c1), len(c2))
    ret = _np.add(_np.pad(c1, (0, n - len(c1))), _np.pad(c2, (0, n - len(c2))))
    return pu.trimseq(ret)


def sub(c1, c2):
    """The difference c1 - c2 of two series."""
    [c1, c2] = pu.as_series([c1, c2])
    n = max(len(c1), len(c2))
    ret = _np.subtract(_np.pad(c1, (0, n - len(c1))), _np.pad(c2, (0, n - len(c2))))
    return pu.trimseq(ret)


def mulx(b, c, trim=True):
    """The series c multiplied by x."""
    if trim:
        [c] = pu.as_series([c])
    if len(c) == 1 and bool(c[0] == 0):
        return c
    n = len(c)
    alpha = [b.alpha(k) for k in range(n)]
    beta = [b.beta(k) for k in range(n)]
    gamma = [b.gamma(k) for k in range(n)]
    up = c if all(a == 1 for a in alpha) else c * _const([1 / a for a in alpha], c)
    prd = _np.concatenate([c[:1] * 0, up])
    if any(beta):
        prd = prd - _np.pad(c * _const([bb / a for bb, a in zip(beta, alpha)], c), (0, 1))
    if any(gamma[1:]):
        down = (c * _const([g / a for g, a in zip(gamma, alpha)], c))[1:]
        prd = prd + _np.pad(down, (0, 2))
    return prd


def _times_basis(b, c, count, via=None):
    """[P_0 c, P_1 c, ..., P_{count-1} c] by the recurrence (untrimmed), as series in the
    basis via (b's own by default)."""
    out = [c]
    for k in range(count - 1):
        a, bb, g = b.alpha(k), b.beta(k), b.gamma(k)
        nxt = mulx(via or b, out[-1], trim=False)
        if len(nxt) == len(out[-1]):  # (a zero series stays one coefficient)
            nxt = _np.pad(nxt, (0, 1))
        if a != 1:
            nxt = nxt * a
        if bb:
            nxt = nxt + _np.pad(out[-1] * bb, (0, 1))
        if g and k > 0:
            nxt = nxt - _np.pad(out[-2] * g, (0, 2))
        out.append(nxt)
    return out


def mul(b, c1, c2):
    """The product of two series."""
    [c1, c2] = pu.as_series([c1, c2])
    if b.mul_impl is not None:
        return pu.trimseq(b.mul_impl(c1, c2))
    if len(c1) > len(c2):
        c1, c2 = c2, c1
    terms = _times_basis(b, c2, len(c1))
    n = len(terms[-1])
    rows = _np.stack([_np.pad(t, (0, n - len(t))) for t in terms])
    return pu.trimseq(_np.tensordot(c1, rows, axes=1))


def div(b, c1, c2):
    """(quotient, remainder) of the division of series c1 by c2."""
    [c1, c2] = pu.as_series([c1, c2])
    if bool(c2[-1] == 0):
        raise ZeroDivisionError(f"[{b.prefix}div] division by a zero series")
    lc1, lc2 = len(c1), len(c2)
    if lc1 < lc2:
        return c1[:1] * 0, c1
    if lc2 == 1:
        return c1 / c2[-1], c1[:1] * 0
    if b.div_impl is not None:
        return b.div_impl(c1, c2)
    prods = _times_basis(b, c2, lc1 - lc2 + 1)
    quo = []
    rem = c1
    for i in range(lc1 - lc2, -1, -1):
        p = prods[i]
        q = rem[-1] / p[-1]
        rem = rem[:-1] - q * p[:-1]
        quo.append(q)
    return _np.stack(quo[::-1]), pu.trimseq(rem)


def power(b, c, pow, maxpower, name):
    """The series c raised to the power pow (a non-negative integer)."""
    [c] = pu.as_series([c])
    power = int(pow)
    if power != pow or power < 0:
        raise ValueError(f"[{name}] Power must be a non-negative integer.")
    if maxpower is not None and power > maxpower:
        raise ValueError(f"[{name}] Power is too large")
    if power == 0:
        return _np.ones((1,), dtype=c.dtype)
    if power == 1:
        return c
    step = b.pow_mul or functools.partial(mul, b)
    prd = c
    for _ in range(2, power + 1):
        prd = step(prd, c)
    return prd


# ------------------------------------------------------------------------- values
def _clenshaw(b, x, c):
    """sum_k c[k] P_k(x) along c's first axis (c already shaped to broadcast with x)."""
    n = len(c)
    scaled = {}

    def factor(k):  # alpha_k x + beta_k (shared between the k with equal constants)
        key = (b.alpha(k), b.beta(k))
        if key not in scaled:
            f = x if key[0] == 1 else key[0] * x
            scaled[key] = f + key[1] if key[1] else f
        return scaled[key]

    b1 = c[-1] + x * 0
    if n == 1:
        return b1
    b2 = None
    for k in range(n - 2, -1, -1):
        nxt = c[k] + factor(k) * b1
        g = b.gamma(k + 1)
        if b2 is not None and g:
            nxt = nxt - (b2 * g if g != 1 else b2)
        b1, b2 = nxt, b1
    return b1


def _val_input(x, c, tensor):
    c = _series(c)
    if isinstance(x, (tuple, list)):
        x = _to_nd(x)
    elif isinstance(x, _onp.ndarray) or isinstance(x, _onp.generic):
        x = _np.asarray(x)
    if isinstance(x, _np.ndarray) and _kind(x) in "iu":
        # (NumPy's precision: Python-float recurrence constants times integer x would give
        # ndx's default float, not c's float64)
        x = _cast(x, _np.result_type(x, c))
    if isinstance(x, _np.ndarray) and tensor:
        c = _np.reshape(c, tuple(c.shape) + (1,) * x.ndim)
    return x, c


def val(b, x, c, tensor=True):
    """The series c evaluated at x."""
    x, c = _val_input(x, c, tensor)
    return _clenshaw(b, x, c)


def valnd(b, name, c, *args):
    args = [_to_nd(a) if not isinstance(a, _np.ndarray) else a for a in args]
    shape0 = tuple(args[0].shape)
    if not all(tuple(a.shape) == shape0 for a in args[1:]):
        which = {3: "x, y, z", 2: "x, y"}.get(len(args), "ordinates")
        raise ValueError(f"[{name}] {which} are incompatible")
    c = val(b, args[0], c)
    for xi in args[1:]:
        c = val(b, xi, c, tensor=False)
    return c


def gridnd(b, c, *args):
    for xi in args:
        c = val(b, xi, c)
    return c


def vander(b, x, deg, name):
    """The pseudo-Vandermonde matrix: [..., i] = P_i(x)."""
    ideg = _as_int(deg, "deg", name)
    if ideg < 0:
        raise ValueError(f"[{name}] deg must be non-negative")
    x = _series(x) + 0.0
    v = [x * 0 + 1]
    for k in range(ideg):
        a, bb, g = b.alpha(k), b.beta(k), b.gamma(k)
        f = x if a == 1 else a * x
        if bb:
            f = f + bb
        nxt = v[-1] * f if k else f
        if g and k:
            nxt = nxt - v[-2] * g
        v.append(nxt)
    return _np.stack(v, axis=-1)


def vander_nd(b, name, points, degrees):
    n_dims = len(degrees)
    if len(points) != n_dims:
        raise ValueError(f"[{name}] Expected {n_dims} dimensions of sample points, got "
                         f"{len(points)}")
    points = [_series(p) + 0.0 for p in points]
    if len({tuple(p.shape) for p in points}) > 1:
        points = list(_np.broadcast_arrays(*points))
    dtype = _np.result_type(*points)
    out = None
    for i, (p, d) in enumerate(zip(points, degrees)):
        v = vander(b, p.astype(dtype), d, name)
        shape = tuple(v.shape[:-1]) + (1,) * i + (v.shape[-1],) + (1,) * (n_dims - i - 1)
        v = _np.reshape(v, shape)
        out = v if out is None else out * v
    return _np.reshape(out, tuple(out.shape[:-n_dims]) + (-1,))


# ------------------------------------------------------------- calculus (matrices)
def _der_matrix(b, n, like):
    """D (n-1, n): the coefficients of P_j' in P_0 .. P_{n-2} in column j."""
    e = _np.eye(n, dtype="float64")
    cols = [_np.zeros((n,), dtype="float64")]  # P_0' = 0
    if n > 1:
        cols.append(e[0] * b.alpha(0))
    for k in range(1, n - 1):  # P_{k+1}' = alpha_k P_k + (alpha_k x + beta_k) P_k' - ...
        a, bb, g = b.alpha(k), b.beta(k), b.gamma(k)
        nxt = a * (e[k] + mulx(b, cols[k], trim=False)[:n])
        if bb:
            nxt = nxt + bb * cols[k]
        if g:
            nxt = nxt - g * cols[k - 1]
        cols.append(nxt)
    d = _np.round(_np.stack(cols, axis=1))[:n - 1]  # (integers in every basis here)
    return d.astype(like.dtype) if _kind(like) == "c" else d.astype(_real_dtype(like))


def _calc_input(c, m, axis, what, name):
    c = _series(c, copy=True)
    cnt = _as_int(m, f"the order of {what}", name)
    iaxis = _as_int(axis, "the axis", name)
    if cnt < 0:
        raise ValueError(f"[{name}] The order of {what} must be non-negative")
    iaxis = _onp.lib.array_utils.normalize_axis_index(iaxis, c.ndim)
    return c, cnt, iaxis


def der(b, name, c, m=1, scl=1, axis=0):
    """The series c differentiated m times along axis, each time multiplied by scl."""
    c, cnt, iaxis = _calc_input(c, m, axis, "derivation", name)
    if cnt == 0:
        return c
    c = _np.moveaxis(c, iaxis, 0)
    n = len(c)
    if cnt >= n:
        c = c[:1] * 0
    else:
        for _ in range(cnt):
            c = _np.tensordot(_der_matrix(b, len(c), c), c * scl, axes=1)
    return _np.moveaxis(c, 0, iaxis)


def integ(b, name, c, m=1, k=(), lbnd=0, scl=1, axis=0):
    """The series c integrated m times along axis (constants k, lower bound lbnd), each time
    multiplied by scl."""
    if not _onp.iterable(k) or isinstance(k, _np.ndarray) and k.ndim == 0:
        k = [k]
    c, cnt, iaxis = _calc_input(c, m, axis, "integration", name)
    if len(k) > cnt:
        raise ValueError(f"[{name}] Too many integration constants")
    if _onp.ndim(lbnd) != 0:
        raise ValueError(f"[{name}] lbnd must be a scalar.")
    if _onp.ndim(scl) != 0:
        raise ValueError(f"[{name}] scl must be a scalar.")
    if cnt == 0:
        return c
    k = list(k) + [0] * (cnt - len(k))
    c = _np.moveaxis(c, iaxis, 0)
    for i in range(cnt):
        n = len(c)
        c = c * scl
        if n == 1 and bool(_np.all(c[0] == 0)):
            c = c + k[i]
            continue
        d = _der_matrix(b, n + 1, c)[:, 1:]
        inv = _np.linalg.solve(d, _np.eye(n, dtype=d.dtype))
        tmp = _np.concatenate([c[:1] * 0, _np.tensordot(inv, c, axes=1)])
        const = k[i] - val(b, lbnd, tmp)
        c = _np.concatenate([_np.expand_dims(tmp[0] + const, 0), tmp[1:]])
    return _np.moveaxis(c, 0, iaxis)


# ----------------------------------------------------------------- fitting, roots
def fit(b, name, x, y, deg, rcond=None, full=False, w=None):
    """The least-squares fit of a series of degree deg (or the degrees listed) to (x, y)."""
    x = _inexact(_to_nd(x)) + 0.0
    y = _inexact(_to_nd(y)) + 0.0
    degs = _onp.asarray(deg)
    if degs.ndim > 1 or degs.dtype.kind not in "iu" or degs.size == 0:
        raise TypeError(f"[{name}] deg must be an int or non-empty 1-D array of int")
    if degs.min() < 0:
        raise ValueError(f"[{name}] expected deg >= 0")
    if x.ndim != 1:
        raise TypeError(f"[{name}] expected 1D vector for x")
    if x.size == 0:
        raise TypeError(f"[{name}] expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError(f"[{name}] expected 1D or 2D array for y")
    if len(x) != len(y):
        raise TypeError(f"[{name}] expected x and y to have same length")
    if degs.ndim == 0:
        lmax = int(degs)
        order = lmax + 1
        van = vander(b, x, lmax, name)
    else:
        degs = _onp.sort(degs)
        lmax = int(degs[-1])
        order = len(degs)
        van = vander(b, x, lmax, name)[:, degs.tolist()]
    lhs, rhs = van, y
    if w is not None:
        w = _inexact(_to_nd(w)) + 0.0
        if w.ndim != 1:
            raise TypeError(f"[{name}] expected 1D vector for w")
        if len(x) != len(w):
            raise TypeError(f"[{name}] expected x and w to have same length")
        lhs = lhs * _np.expand_dims(w, 1)
        rhs = rhs * (_np.expand_dims(w, 1) if rhs.ndim == 2 else w)
    if rcond is None:
        rcond = len(x) * float(_onp.finfo(pu._host_dtype(x)).eps)
    if _kind(lhs) == "c":
        scl = _np.sqrt(_np.sum(_np.square(_np.real(lhs)) + _np.square(_np.imag(lhs)), axis=0))
    else:
        scl = _np.sqrt(_np.sum(_np.square(lhs), axis=0))
    scl = _np.where(scl == 0, _np.ones_like(scl), scl)
    c, resids, rank, s = _np.linalg.lstsq(lhs / scl, rhs, rcond)
    c = c / (_np.expand_dims(scl, 1) if c.ndim == 2 else scl)
    if degs.ndim > 0:
        cc = _np.zeros((lmax + 1,) + tuple(c.shape[1:]), dtype=c.dtype)
        cc[degs.tolist()] = c
        c = cc
    if rank != order and not full:
        warnings.warn("The fit may be poorly conditioned", _onp.exceptions.RankWarning,
                      stacklevel=3)
    if full:
        return c, [resids, rank, s, rcond]
    return c


def companion(b, name, c):
    """The (scaled, symmetric where the basis is orthogonal) companion matrix of c."""
    [c] = pu.as_series([c])
    if len(c) < 2:
        raise ValueError(f"[{name}] Series must have maximum degree of at least 1.")
    n = len(c) - 1
    alpha = [b.alpha(k) for k in range(n)]
    main = _const([-b.beta(k) / alpha[k] for k in range(n)], c)
    mat = _np.diag(main)
    if n > 1:
        low = [1 / alpha[k] for k in range(n - 1)]
        up = [b.gamma(k) / alpha[k] for k in range(1, n)]
        if b.log_norm is not None:  # scaled: [i, j] * sqrt(h_i / h_j)
            ln = [b.log_norm(k) for k in range(n)]
            low = [v * math.exp((ln[k + 1] - ln[k]) / 2) for k, v in enumerate(low)]
            up = [v * math.exp((ln[k] - ln[k + 1]) / 2) for k, v in enumerate(up)]
        mat = mat + _np.diag(_const(low, c), -1) + _np.diag(_const(up, c), 1)
    if b.log_norm is not None:
        ln = [b.log_norm(k) for k in range(n)]
        scl = _const([math.exp((v - ln[-1]) / 2) for v in ln], c)
        last = c[:-1] / c[-1] * scl / alpha[-1]
    else:
        last = c[:-1] / c[-1] / alpha[-1] if alpha[-1] != 1 else c[:-1] / c[-1]
    mat = _cast(mat, c.dtype)
    col = _np.expand_dims(_np.arange(n) == n - 1, 0)
    return _np.where(col, mat - _np.expand_dims(last, 1), mat)


def roots(b, name, c):
    """The roots of the series c, sorted."""
    [c] = pu.as_series([c])
    if len(c) < 2:
        return _np.zeros((0,), dtype=c.dtype)
    m = companion(b, name, c)
    if len(c) == 2:
        return _np.reshape(m, (1,))
    if b.flip_companion:
        m = m[::-1, ::-1]
    return _np.sort(_np.linalg.eigvals(m))


def line(b, off, scl):
    """The series of off + scl*x."""
    parts = b.line_parts(off, scl) if bool(scl != 0) else [off]
    if any(isinstance(p, _np.ndarray) for p in parts):
        parts = [_to_nd(p) for p in parts]
        dtype = _np.result_type(*parts)
        return _np.stack([p.astype(dtype) for p in parts])
    return _to_nd(parts)


def fromroots(b, roots_):
    """The series whose roots are roots_ (monic in the power basis)."""
    if len(roots_) == 0:
        return _np.ones((1,), dtype="float64")
    [r] = pu.as_series([roots_], trim=False)
    r = _np.sort(r)
    p = [line(b, -r[i], 1) for i in range(len(r))]
    n = len(p)
    while n > 1:
        m, rem = divmod(n, 2)
        tmp = [mul(b, p[i], p[i + m]) for i in range(m)]
        if rem:
            tmp[0] = mul(b, tmp[0], p[-1])
        p = tmp
        n = m
    return p[0]


def to_poly(b, power_basis, c):
    """The series c in the power basis."""
    [c] = pu.as_series([c])
    if len(c) == 1:
        return c
    terms = _times_basis(b, _np.ones((1,), dtype=c.dtype), len(c), via=power_basis)
    n = len(terms[-1])
    rows = _np.stack([_np.pad(t, (0, n - len(t))) for t in terms])
    return pu.trimseq(_np.tensordot(c, rows, axes=1))


def from_poly(b, pol):
    """The power series pol in the basis b."""
    [pol] = pu.as_series([pol])
    deg = len(pol) - 1
    res = pol[deg:]
    for i in range(deg - 1, -1, -1):
        res = add(mulx(b, res), pol[i])
    return res


def gauss(b, name, deg):
    """Gauss quadrature nodes and weights of the basis's weight (Golub-Welsch, one Newton
    step, orthonormal recurrences so that nothing overflows)."""
    ideg = _as_int(deg, "deg", name)
    if ideg <= 0:
        raise ValueError(f"[{name}] deg must be a positive integer")
    c = _np.asarray(_onp.array([0] * ideg + [1], dtype="float64"))
    x = _np.linalg.eigvalsh(companion(b, name, c))
    alpha = [b.alpha(k) for k in range(ideg + 1)]
    diag = [-b.beta(k) / alpha[k] for k in range(ideg + 1)]
    off = [0.0] + [math.sqrt(b.gamma(k) / (alpha[k - 1] * alpha[k]))
                   for k in range(1, ideg + 1)]

    def orthonormal(x):  # p_{n-1}(x), p_n(x), p_n'(x) of the orthonormal family
        p0, p1 = x * 0, x * 0 + 1
        d0, d1 = x * 0, x * 0
        for k in range(ideg):
            p2 = ((x - diag[k]) * p1 - off[k] * p0) / off[k + 1]
            d2 = (p1 + (x - diag[k]) * d1 - off[k] * d0) / off[k + 1]
            p0, p1, d0, d1 = p1, p2, d1, d2
        return p0, p1, d1

    _, dy, df = orthonormal(x)
    x = x - dy / df
    fm, _, df = orthonormal(x)
    fm = fm / _np.abs(fm).max()
    df = df / _np.abs(df).max()
    w = 1 / (fm * df)
    if b.symmetric:
        w = (w + w[::-1]) / 2
        x = (x - x[::-1]) / 2
    w = w * (math.exp(b.log_norm(0)) / w.sum())
    return x, w


# ------------------------------------------------------------------ module factory
def make_functions(b, doc_names):
    """The module functions (prefix + add, sub, ...) of basis b, as a dict."""
    p = b.prefix
    f = {}

    def reg(suffix, fn, doc):
        fn.__name__ = fn.__qualname__ = p + suffix
        fn.__doc__ = doc.format(basis=doc_names)
        f[p + suffix] = fn
        return fn

    reg("line", lambda off, scl: line(b, off, scl),
        "The {basis} series of the line off + scl*x.")
    reg("add", lambda c1, c2: add(c1, c2), "The sum of two {basis} series.")
    reg("sub", lambda c1, c2: sub(c1, c2), "The difference c1 - c2 of two {basis} series.")
    reg("mulx", lambda c: mulx(b, c), "The {basis} series c multiplied by x.")
    reg("mul", lambda c1, c2: mul(b, c1, c2), "The product of two {basis} series.")
    reg("div", lambda c1, c2: div(b, c1, c2),
        "(quotient, remainder) of two {basis} series.")
    dflt = None if p == "poly" else 16
    reg("pow", lambda c, pow, maxpower=dflt: power(b, c, pow, maxpower, p + "pow"),
        "The {basis} series c raised to the power pow.")
    reg("val", lambda x, c, tensor=True: val(b, x, c, tensor),
        "The {basis} series c evaluated at x (c's extra axes: one result each).")
    reg("val2d", lambda x, y, c: valnd(b, p + "val2d", c, x, y),
        "The 2-d {basis} series c evaluated at the points (x, y).")
    reg("val3d", lambda x, y, z, c: valnd(b, p + "val3d", c, x, y, z),
        "The 3-d {basis} series c evaluated at the points (x, y, z).")
    reg("grid2d", lambda x, y, c: gridnd(b, c, x, y),
        "The 2-d {basis} series c evaluated on the grid x times y.")
    reg("grid3d", lambda x, y, z, c: gridnd(b, c, x, y, z),
        "The 3-d {basis} series c evaluated on the grid x times y times z.")
    reg("der", lambda c, m=1, scl=1, axis=0: der(b, p + "der", c, m, scl, axis),
        "The {basis} series c differentiated m times along axis.")
    reg("int", lambda c, m=1, k=[], lbnd=0, scl=1, axis=0:  # noqa: B006 (NumPy's default)
        integ(b, p + "int", c, m, k, lbnd, scl, axis),
        "The {basis} series c integrated m times along axis.")
    reg("fromroots", lambda roots_: fromroots(b, roots_),
        "The {basis} series with the given roots.")
    reg("vander", lambda x, deg: vander(b, x, deg, p + "vander"),
        "The {basis} pseudo-Vandermonde matrix of x: [..., i] = P_i(x).")
    reg("vander2d", lambda x, y, deg: vander_nd(b, p + "vander2d", (x, y), deg),
        "The 2-d {basis} pseudo-Vandermonde matrix of the points (x, y).")
    reg("vander3d", lambda x, y, z, deg: vander_nd(b, p + "vander3d", (x, y, z), deg),
        "The 3-d {basis} pseudo-Vandermonde matrix of the points (x, y, z).")
    reg("fit", lambda x, y, deg, rcond=None, full=False, w=None:
        fit(b, p + "fit", x, y, deg, rcond, full, w),
        "The least-squares {basis} series of degree deg through (x, y).")
    reg("companion", lambda c: companion(b, p + "companion", c),
        "The companion matrix of the {basis} series c.")
    reg("roots", lambda c: roots(b, p + "roots", c), "The roots of the {basis} series c.")
    f[p + "trim"] = pu.trimcoef
    return f

