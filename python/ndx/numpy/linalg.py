"""ndx.numpy.linalg: NumPy's linear algebra over ndx arrays.

The factorizations (inv, det, slogdet, solve, cholesky, qr, eigh, eig, svd, lstsq) are C++ ops
on LAPACK (src/operator/linalg.cc), batched over leading dimensions, in float32, float64,
complex64 and complex128 (integer input is computed in the default float dtype; solve and
lstsq promote mixed operands as NumPy's linalg: an integer beside a float gives float64).
Everything else here composes them and ndx's other ops, so gradients flow through norm, pinv,
matrix_power, multi_dot, tensorinv, tensorsolve, ... Singular or non-convergent input raises
LinAlgError, a ValueError (and a numpy.linalg.LinAlgError). Gradients of complex input follow
the conjugate Wirtinger convention (PyTorch's): inv, det, slogdet, solve and what composes
them have them; cholesky, qr, eigh and svd have real gradients only."""
import operator as _operator
import warnings as _warnings
from collections import namedtuple as _namedtuple

import numpy as _onp

from .. import _core
from .._registry import internal_function
from ..autograd import is_recording as _is_recording

LinAlgError = _core.LinAlgError

__all__ = [
    "LinAlgError", "norm", "vector_norm", "matrix_norm", "det", "slogdet", "inv", "pinv",
    "solve", "lstsq", "svd", "svdvals", "qr", "cholesky", "eig", "eigvals", "eigh", "eigvalsh",
    "matrix_rank", "matrix_power", "multi_dot", "cond", "tensorinv", "tensorsolve", "cross",
    "diagonal", "outer", "tensordot", "trace", "vecdot", "matrix_transpose", "matmul",
]

SlogdetResult = _namedtuple("SlogdetResult", ["sign", "logabsdet"])
EighResult = _namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = _namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = _namedtuple("QRResult", ["Q", "R"])
SVDResult = _namedtuple("SVDResult", ["U", "S", "Vh"])
LstsqResult = _namedtuple("LstsqResult", ["x", "residuals", "rank", "singular_values"])

def _np():
    from .. import numpy as np
    return np


def _op(name):
    return internal_function("_npi_" + name)


def _kind(a):
    from ._composites import _kind
    return _kind(a)


_LAPACK_DTYPES = ("float32", "float64", "complex64", "complex128")


def _float(a, fn, matrix=False, square=False):
    """a as an ndarray of a dtype LAPACK takes (ints and bools: the default float). matrix /
    square: check that first (NumPy checks shapes before dtypes)."""
    np = _np()
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    if square:
        _square(a, fn)
    elif matrix:
        _at_least_2d(a, fn)
    k = _kind(a)
    if k in "biu":
        return a.astype(_core._default_float())
    if str(a.dtype) not in _LAPACK_DTYPES:
        raise TypeError(f"[{fn}] array type {a.dtype} is unsupported in linalg (float32, "
                        "float64, complex64 and complex128 are)")
    return a


def _common_float(arrays, fn):
    """The dtype NumPy's linalg computes several operands in (its _commonType): double when
    any operand is float64 / complex128 or an integer / bool beside a float operand, single
    when every float operand is; complex when any is. Integer and bool operands alone give
    the default float (README: integers are computed in the default float)."""
    kinds = [_kind(a) for a in arrays]
    for a, k in zip(arrays, kinds):
        if k not in "biu" and str(a.dtype) not in _LAPACK_DTYPES:
            raise TypeError(f"[{fn}] array type {a.dtype} is unsupported in linalg (float32, "
                            "float64, complex64 and complex128 are)")
    if all(k in "biu" for k in kinds):
        return str(_onp.dtype(_core._default_float()))
    double = any(k in "biu" or str(a.dtype) in ("float64", "complex128")
                 for a, k in zip(arrays, kinds))
    if "c" in kinds:
        return "complex128" if double else "complex64"
    return "float64" if double else "float32"


def _is_complex(a):
    return _kind(a) == "c"


def _adjoint(a):
    """The conjugate transpose of the last two axes (the transpose for real a)."""
    np = _np()
    t = np.swapaxes(a, -1, -2)
    return np.conjugate(t) if _is_complex(t) else t


def _check_uplo(UPLO, fn):
    """UPLO in upper case ('l' is 'L', as NumPy's .upper())."""
    uplo = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if uplo not in ("L", "U"):
        raise ValueError(f"[{fn}] UPLO argument must be 'L' or 'U'")
    return uplo


def _at_least_2d(a, fn):
    if a.ndim < 2:
        raise LinAlgError(f"[{fn}] {a.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")


def _square(a, fn):
    _at_least_2d(a, fn)
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"[{fn}] Last 2 dimensions of the array must be square; got "
                          f"{a.shape}")


# ---------------------------------------------------------------- factorizations
def inv(a):
    """The inverse of each square matrix in a (..., M, M)."""
    return _op("inv")(_float(a, "inv", square=True))


def det(a):
    """The determinant of each square matrix in a (..., M, M)."""
    return _op("det")(_float(a, "det", square=True))


def slogdet(a):
    """(sign, log|det|) of each square matrix: det = sign * exp(logabsdet) without overflow."""
    sign, logdet = _op("slogdet")(_float(a, "slogdet", square=True))
    return SlogdetResult(sign, logdet)


def solve(a, b):
    """x with a @ x = b. b is a vector (..., M) only when it is 1-D (NumPy 2's rule); leading
    dimensions broadcast."""
    np = _np()
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    b = b if isinstance(b, np.ndarray) else np.asarray(b)
    _square(a, "solve")
    common = _common_float((a, b), "solve")
    a = a.astype(common) if a.dtype != common else a
    b = b.astype(common) if b.dtype != common else b
    vector = b.ndim == 1
    if vector:
        b = np.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"[solve] b's rows must match a's size {a.shape[-1]}; got b of shape "
                         f"{b.shape if not vector else b.shape[:-1]}")
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != lead:
        a = np.broadcast_to(a, lead + a.shape[-2:])
    if b.shape[:-2] != lead:
        b = np.broadcast_to(b, lead + b.shape[-2:])
    x = _op("solve")(a, b)
    return x[..., 0] if vector else x


def cholesky(a, /, *, upper=False):
    """The Cholesky factor L (a = L L^T), or U (a = U^T U) with upper=True."""
    return _op("cholesky")(_float(a, "cholesky", square=True), upper=bool(upper))


def qr(a, mode="reduced"):
    """QR factorization; mode 'reduced' (Q (M, K), R (K, N)), 'complete' (Q (M, M), R (M, N))
    or 'r' (R alone)."""
    if mode in ("f", "full"):  # NumPy's deprecated alias of 'reduced'
        _warnings.warn("The 'full' option is deprecated in favor of 'reduced'.\nFor backward "
                       "compatibility let mode default.", DeprecationWarning, stacklevel=2)
        mode = "reduced"
    elif mode in ("e", "economic"):
        _warnings.warn("The 'economic' option is deprecated.", DeprecationWarning, stacklevel=2)
        raise NotImplementedError("[qr] mode='economic' (LAPACK's Householder form) is not "
                                  "supported")
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"[qr] Unrecognized mode '{mode}'")
    if mode == "raw":
        raise NotImplementedError("[qr] mode='raw' (LAPACK's Householder form) is not supported")
    a = _float(a, "qr", matrix=True)
    q, r = _op("qr")(a, mode="complete" if mode == "complete" else "reduced")
    return r if mode == "r" else QRResult(q, r)


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of each symmetric matrix (one triangle read)."""
    UPLO = _check_uplo(UPLO, "eigh")
    w, v = _op("eigh")(_float(a, "eigh", square=True), UPLO=UPLO)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of each symmetric matrix."""
    return eigh(a, _check_uplo(UPLO, "eigvalsh")).eigenvalues


def eig(a):
    """Eigenvalues and right eigenvectors (unit length) of each square matrix. As NumPy: complex
    results, except for real input whose eigenvalues are all real, which gives real ones."""
    np = _np()
    a = _float(a, "eig", square=True)
    w, v = _op("eig")(a)
    if not _is_complex(a) and not bool(np.any(np.imag(w) != 0)):
        w, v = np.real(w), np.real(v)
    return EigResult(w, v)


def eigvals(a):
    """Eigenvalues of each square matrix (see eig for their dtype)."""
    return eig(a).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition a = U @ diag(S) @ Vh, S descending. The gradient needs
    full_matrices=False unless the matrices are square."""
    a = _float(a, "svd", matrix=True, square=bool(hermitian))
    if hermitian:
        return _svd_hermitian(a, compute_uv)
    if not compute_uv:
        return svdvals(a)
    u, s, vh = _op("svd")(a, full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(u, s, vh)


def _svd_hermitian(a, compute_uv):
    """The SVD of Hermitian matrices from eigh, as NumPy's hermitian=True: S = |w| descending,
    U the eigenvectors in that order, Vh their conjugate transpose with each row signed by
    sign(w)."""
    np = _np()
    _square(a, "svd")
    w, v = eigh(a)
    if a.size == 0:  # (no order to apply)
        return np.abs(w) if not compute_uv else SVDResult(v, np.abs(w), _adjoint(v))
    order = np.argsort(-np.abs(w), axis=-1)
    s = np.take_along_axis(np.abs(w), order, axis=-1)
    if not compute_uv:
        return s
    u = np.take_along_axis(v, np.expand_dims(order, -2), axis=-1)
    signs = np.sign(np.take_along_axis(w, order, axis=-1))
    return SVDResult(u, s, _adjoint(u * np.expand_dims(signs, -2).astype(u.dtype)))


def svdvals(x, /):
    """The singular values of each matrix, descending."""
    x = _float(x, "svdvals", matrix=True)
    if _is_recording():  # the gradient needs U and V
        return _op("svd")(x, full_matrices=False, compute_uv=True)[1]
    return _op("svd")(x, full_matrices=False, compute_uv=False)


def lstsq(a, b, rcond=None):
    """Least-squares solution of a @ x = b: (x, residuals, rank, singular values), as NumPy."""
    np = _np()
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    b = b if isinstance(b, np.ndarray) else np.asarray(b)
    vector = b.ndim == 1
    b2 = np.expand_dims(b, -1) if vector else b
    # NumPy's order of checks: dimensions, then dtypes.
    for x in (a, b2):
        if x.ndim != 2:
            raise LinAlgError(f"[lstsq] {x.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    if b2.shape[0] != a.shape[0]:
        raise LinAlgError(f"[lstsq] Incompatible dimensions: a {a.shape}, b {b.shape}")
    common = _common_float((a, b2), "lstsq")
    a, b2 = a.astype(common), b2.astype(common)
    m, n = a.shape
    # NumPy's cut-off: None is eps * max(M, N), a negative rcond is machine precision.
    eps = _onp.finfo(str(a.dtype)).eps
    cut = eps * max(m, n) if rcond is None else float(rcond)
    cut = eps if cut < 0 else cut
    if _is_recording() and min(m, n) > 0 and b2.shape[1] > 0:
        x, rank, s = _lstsq_through_svd(a, b2, cut)
    else:
        x, rank, s = _op("lstsq")(a, b2, rcond=cut)
        if b2.shape[1] == 0 and min(m, n) > 0:  # (the op computes neither for no columns)
            s = svdvals(a)
            rank = int((s > np.max(s) * cut).sum())
    if int(rank) == n and m > n:
        residuals = (np.abs(b2 - np.matmul(a, x)) ** 2).sum(axis=0)
    else:
        residuals = np.zeros((0,), dtype=s.dtype)
    # NumPy's rank is an int32 scalar (its gufunc's output), and so is polyfit's.
    return LstsqResult(x[:, 0] if vector else x, residuals, _onp.int32(int(rank)), s)


def _inverted_singular_values(s, cut):
    """(which singular values count, their reciprocals with 0 for the rest): values at most
    cut times each matrix's largest count as zero (pinv's and lstsq's rule)."""
    np = _np()
    large = s > np.expand_dims(np.max(s, axis=-1), -1) * cut
    return large, np.where(large, 1 / np.where(large, s, 1), 0)


def _lstsq_through_svd(a, b, cut):
    """lstsq's x as V diag(1/s) U^H b over the singular values above cut * max(s), the
    minimum-norm solution gelsd gives, composed of ops so that autograd differentiates it
    (through svd's gradient: distinct singular values). Used while recording only: the
    LAPACK op has no gradient, and its results differ from these by rounding."""
    np = _np()
    u, s, vh = svd(a, full_matrices=False)
    large, s_inv = _inverted_singular_values(s, cut)
    scaled = np.expand_dims(s_inv, -1).astype(u.dtype) * np.matmul(_adjoint(u), b)
    return np.matmul(_adjoint(vh), scaled), int(large.sum()), s


# ---------------------------------------------------------------- composites
def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """The Moore-Penrose pseudo-inverse from the SVD: singular values at most rcond (or rtol)
    times the largest count as zero (either may be an array, one value per matrix). Default
    cutoff: max(M, N) * eps, the Array API's (NumPy's rtol=None; NumPy's pinv without rtol
    uses 1e-15, which in single precision would invert rounding noise)."""
    np = _np()
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    if rcond is not None and rtol is not None:
        raise ValueError("[pinv] `rtol` and `rcond` can't be both set.")
    _at_least_2d(a, "pinv")
    m, n = a.shape[-2:]
    if m == 0 or n == 0:  # before the dtype check, as NumPy's (float16 passes)
        dtype = a.dtype if _kind(a) in "fc" else _core._default_float()
        return np.zeros(a.shape[:-2] + (n, m), dtype=dtype)
    a = _float(a, "pinv", square=bool(hermitian))
    cut = rcond if rcond is not None else rtol
    if cut is None:
        cut = max(a.shape[-2:]) * _onp.finfo(str(a.dtype)).eps
    if not isinstance(cut, (int, float)):  # one cutoff per matrix
        cut = np.expand_dims(np.asarray(cut), -1)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    if not isinstance(cut, (int, float)) and np.broadcast_shapes(cut.shape, s.shape) != s.shape:
        raise ValueError(f"[pinv] rcond of shape {tuple(cut.shape[:-1])} does not broadcast "
                         f"to the stack of matrices {tuple(a.shape[:-2])}")
    _, s_inv = _inverted_singular_values(s, cut)
    scale = np.expand_dims(s_inv, -1).astype(u.dtype)
    return np.matmul(_adjoint(vh), scale * _adjoint(u))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above tol (default: S.max() * max(M, N) * eps)."""
    np = _np()
    if tol is not None and rtol is not None:
        raise ValueError("[matrix_rank] `tol` and `rtol` can't be both set.")
    A = A if isinstance(A, np.ndarray) else np.asarray(A)
    if A.ndim < 2:
        return (A != 0).any().astype("int64")
    s = svd(A, compute_uv=False, hermitian=hermitian)
    if tol is None:
        r = rtol if rtol is not None else max(A.shape[-2:]) * _onp.finfo(str(s.dtype)).eps
        if not isinstance(r, (int, float)):  # one rtol per matrix
            r = np.expand_dims(np.asarray(r), -1)
        tol = np.max(s, axis=-1, keepdims=True) * r if s.shape[-1] else 0.0
    elif not isinstance(tol, (int, float)):
        tol = np.expand_dims(np.asarray(tol), -1)
    return (s > tol).sum(axis=-1).astype("int64")


def matrix_power(a, n):
    """a @ a @ ... (n times) by repeated squaring; n < 0 powers the inverse; n = 0 gives the
    identity."""
    np = _np()
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError("[matrix_power] exponent must be an integer") from None
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    _square(a, "matrix_power")
    if n == 0:
        eye = np.eye(a.shape[-1], dtype=a.dtype)
        return np.broadcast_to(eye, a.shape).copy()
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else np.matmul(result, base)
        n >>= 1
        if n:
            base = np.matmul(base, base)
    return result


def multi_dot(arrays, *, out=None):
    """The product of a chain of matrices, multiplied in the order with the fewest scalar
    multiplications (the first may be 1-D: a row; the last 1-D: a column)."""
    np = _np()
    arrays = [a if isinstance(a, np.ndarray) else np.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("[multi_dot] expecting at least two arrays")
    if len(arrays) == 2:  # NumPy's multi_dot of two arrays is their dot, any dimensions
        return _dot_out(np.dot(arrays[0], arrays[1]), out)
    first_1d, last_1d = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_1d:
        arrays[0] = np.expand_dims(arrays[0], 0)
    if last_1d:
        arrays[-1] = np.expand_dims(arrays[-1], -1)
    for i, a in enumerate(arrays):
        if a.ndim != 2:  # LinAlgError (a ValueError), as NumPy's
            raise LinAlgError(f"[multi_dot] array {i} has {a.ndim} dimensions; 2 expected "
                              "(1 allowed for the first and last)")
    dims = [arrays[0].shape[0]] + [a.shape[1] for a in arrays]
    k = len(arrays)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def product(i, j):
        if i == j:
            return arrays[i]
        return np.matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    r = product(0, k - 1)
    if first_1d:
        r = r[0]
    if last_1d:
        r = r[..., 0]
    return _dot_out(r, out)


def _dot_out(r, out):
    """r written into out, which NumPy's dot wants of r's shape and dtype exactly."""
    if out is None:
        return r
    if not isinstance(out, _np().ndarray):
        raise TypeError(f"[multi_dot] out must be an ndarray, got {type(out).__name__}")
    if tuple(out.shape) != tuple(r.shape) or out.dtype != r.dtype:
        raise ValueError(f"[multi_dot] output array is not acceptable (must have the right "
                         f"datatype, number of dimensions, and be a C-Array): out is "
                         f"{out.dtype} {tuple(out.shape)}, the product {r.dtype} "
                         f"{tuple(r.shape)}")
    out[...] = r
    return out


def _vector_norm(x, ord, axis, keepdims):
    np = _np()
    a = np.abs(x)
    if ord is None or ord == 2:
        return np.sqrt((a * a).sum(axis=axis, keepdims=keepdims))
    if ord == _onp.inf:  # NumPy 2: 0 for no elements (-inf's min raises ValueError)
        return a.max(axis=axis, keepdims=keepdims, initial=0)
    if ord == -_onp.inf:
        return a.min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return (x != 0).astype(a.dtype).sum(axis=axis, keepdims=keepdims)
    if ord == 1:
        return a.sum(axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"[norm] Invalid norm order '{ord}' for vectors")
    return ((a ** ord).sum(axis=axis, keepdims=keepdims)) ** (1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    np = _np()
    row, col = axes
    if row == col:
        raise ValueError("[norm] Duplicate axes given.")
    if ord in (None, "fro", "f"):
        m = np.abs(x) if _is_complex(x) else x
        r = np.sqrt((m * m).sum(axis=axes))
    elif ord in (2, -2, "nuc"):
        s = svdvals(np.moveaxis(x, (row, col), (-2, -1)))
        # NumPy 2: the largest of no values is 0, the smallest raises ValueError
        r = s.max(axis=-1, initial=0) if ord == 2 else s.min(axis=-1) if ord == -2 else \
            s.sum(axis=-1)
    elif ord in (1, -1):
        sums = np.abs(x).sum(axis=row)
        c = col - 1 if col > row else col
        r = sums.max(axis=c, initial=0) if ord == 1 else sums.min(axis=c)
    elif ord in (_onp.inf, -_onp.inf):
        sums = np.abs(x).sum(axis=col)
        rr = row - 1 if row > col else row
        r = sums.max(axis=rr, initial=0) if ord == _onp.inf else sums.min(axis=rr)
    else:
        raise ValueError(f"[norm] Invalid norm order {ord!r} for matrices")
    if keepdims:
        for ax in sorted((row, col)):
            r = np.expand_dims(r, ax)
    return r


def _norm_input(x):
    np = _np()
    x = x if isinstance(x, np.ndarray) else np.asarray(x)
    if _kind(x) in "biu":
        x = x.astype(_core._default_float())
    return x


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector and matrix norms as numpy.linalg.norm (ord None, 'fro', 'nuc', +-inf, 0, +-1,
    +-2 and any p for vectors)."""
    x = _norm_input(x)
    nd = x.ndim
    if axis is None:
        if ord is None:
            r = _vector_norm(x.reshape(-1), None, 0, False)
            return r.reshape((1,) * nd) if keepdims else r
        if nd == 1:
            axis = (0,)
        elif nd == 2:
            axis = (0, 1)
        else:
            raise ValueError("[norm] Improper number of dimensions to norm.")
    elif not isinstance(axis, tuple):
        try:
            axis = (_operator.index(axis),)
        except TypeError:
            raise TypeError("[norm] 'axis' must be None, an integer or a tuple of integers"
                            ) from None
    axis = tuple(_normalize_axis(a, nd) for a in axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError("[norm] Improper number of dimensions to norm.")


def _normalize_axis(a, nd):
    a = _operator.index(a)
    if not -nd <= a < nd:
        from .. import AxisError
        raise AxisError(a, nd)
    return a % nd


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The Array API's vector norm: over all elements (axis=None), one axis or several."""
    np = _np()
    x = _norm_input(x)
    if axis is None:
        r = _vector_norm(x.reshape(-1), ord, 0, False)
        return r.reshape((1,) * x.ndim) if keepdims else r
    axes = (axis,) if not isinstance(axis, tuple) else axis
    axes = tuple(sorted(_normalize_axis(a, x.ndim) for a in axes))
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    rest = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, rest + list(axes))
    # (the length spelled out: -1 cannot stand for it when another dimension is 0)
    flat = moved.reshape(tuple(x.shape[i] for i in rest) +
                         (int(_onp.prod([x.shape[i] for i in axes])),))
    r = _vector_norm(flat, ord, -1, False)
    if keepdims:
        for ax in axes:
            r = np.expand_dims(r, ax)
    return r


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The Array API's matrix norm over the last two axes."""
    x = _norm_input(x)
    # (an AxisError, a ValueError and an IndexError, for fewer than 2 dimensions: NumPy's)
    axes = (_normalize_axis(-2, x.ndim), _normalize_axis(-1, x.ndim))
    return _matrix_norm(x, ord, axes, keepdims)


def cond(x, p=None):
    """The condition number in norm p (None and 2: largest / smallest singular value)."""
    np = _np()
    x = x if isinstance(x, np.ndarray) else np.asarray(x)
    if x.size == 0 and int(_onp.prod(x.shape[-2:])) == 0:  # NumPy's first check
        raise LinAlgError("[cond] cond is not defined on empty arrays")
    x = _float(x, "cond")
    _at_least_2d(x, "cond")
    if p in (None, 2, -2):
        s = svdvals(x)
        with _onp.errstate(divide="ignore", invalid="ignore"):
            r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        # A singular matrix: NumPy's inf (0 / 0 is NaN for the zero matrix).
        return np.where(np.isnan(r), _onp.inf, r) if p != -2 else r
    _square(x, "cond")
    if x.ndim != 2:
        if x.size == 0:  # no matrices
            return np.zeros(x.shape[:-2], dtype=np.abs(x).dtype)
        return np.stack([cond(m, p) for m in x.reshape((-1,) + x.shape[-2:])]
                        ).reshape(x.shape[:-2])
    try:
        x_inv = inv(x)
    except LinAlgError:  # a singular matrix: NumPy's inf
        return np.full((), _onp.inf, dtype=np.abs(x).dtype)
    return norm(x, p, axis=(-2, -1)) * norm(x_inv, p, axis=(-2, -1))


def tensorinv(a, ind=2):
    """The inverse of a tensor under tensordot over its first ind axes."""
    np = _np()
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    ind = _operator.index(ind)
    if ind <= 0:
        raise ValueError(f"[tensorinv] ind must be a positive integer; got {ind}")
    old = a.shape
    rows = int(_onp.prod(old[:ind]))
    inv_shape = old[ind:] + old[:ind]
    if rows != int(_onp.prod(old[ind:])):
        raise LinAlgError("[tensorinv] prod(a.shape[:ind]) must equal prod(a.shape[ind:])")
    return inv(a.reshape(rows, -1)).reshape(inv_shape)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, axes=x.ndim) = b."""
    np = _np()
    from ._composites import _as_array
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    b = _as_array(b, a)  # (host data beside a: Python floats stay float64 by a float64 a)
    an = a.ndim
    if axes is not None:
        order = list(range(an))
        for ax in axes:  # NumPy's moves, one at a time, to the end (a repeat moves again)
            k = _normalize_axis(ax, an)
            order.remove(k)
            order.append(k)
        a = np.transpose(a, order)
    # x's shape, NumPy's a.shape[-(a.ndim - b.ndim):]: a.shape[b.ndim:] when a has more
    # dimensions than b, all of a.shape when they have as many.
    old = a.shape[-(an - b.ndim):]
    size = int(_onp.prod(old))
    if a.size != size * size:
        raise LinAlgError("[tensorsolve] Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(a.reshape(size, size), b.reshape(-1)).reshape(old)


# ---------------------------------------------------------------- Array API aliases
def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along axis."""
    np = _np()
    x1 = x1 if isinstance(x1, np.ndarray) else np.asarray(x1)
    x2 = x2 if isinstance(x2, np.ndarray) else np.asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("[linalg.cross] both inputs must have 3 elements along axis")
    return np.cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """The diagonals of the last two axes."""
    return _np().diagonal(x, offset, -2, -1)


def outer(x1, x2, /):
    """The outer product of two vectors."""
    np = _np()
    x1 = x1 if isinstance(x1, np.ndarray) else np.asarray(x1)
    x2 = x2 if isinstance(x2, np.ndarray) else np.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("[linalg.outer] both inputs must be 1-dimensional")
    return np.outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """numpy.tensordot with the Array API's keyword-only axes."""
    return _np().tensordot(x1, x2, axes=axes)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the last two axes."""
    return _np().trace(x, offset, -2, -1, dtype)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along axis (broadcasting the rest); complex x1 is conjugated,
    as the Array API and NumPy's vecdot do."""
    np = _np()
    x1 = x1 if isinstance(x1, np.ndarray) else np.asarray(x1)
    x2 = x2 if isinstance(x2, np.ndarray) else np.asarray(x2)
    for i, x in enumerate((x1, x2)):
        if x.ndim == 0:
            raise ValueError(f"[vecdot] Input operand {i} does not have enough dimensions (has "
                             "0, gufunc core with signature (n),(n)->() requires 1)")
    axis = _operator.index(axis)
    # As NumPy's gufunc: axis picks each operand's core dimension (counted in its own
    # dimensions), which moves last; the other dimensions broadcast.
    x1 = np.moveaxis(x1, _normalize_axis(axis, x1.ndim), -1)
    x2 = np.moveaxis(x2, _normalize_axis(axis, x2.ndim), -1)
    if x1.shape[-1] != x2.shape[-1]:  # the core dimension is not broadcast
        raise ValueError(f"[vecdot] x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must have the "
                         f"same length along axis {axis}")
    if _is_complex(x1):
        x1 = np.conjugate(x1)
    return np.sum(np.multiply(x1, x2), axis=-1, dtype=np.result_type(x1, x2))


def matmul(x1, x2, /):
    """The matrix product (np.matmul), which the Array API's linalg extension lists too."""
    return _np().matmul(x1, x2)


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    np = _np()
    x = x if isinstance(x, np.ndarray) else np.asarray(x)
    _at_least_2d(x, "matrix_transpose")
    return np.swapaxes(x, -1, -2)
