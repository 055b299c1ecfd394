"""MXNet's legacy ``mx.nd.linalg`` (also at the top of ``mx.nd`` as ``linalg_gemm2``, ...):
BLAS / LAPACK style operators on batches of matrices. Matrices are the last two axes; leading
axes are the batch (gemm / gemm2 take the row axis from ``axis``). As MXNet's, they take
float32 and float64. They are composed of ndx.numpy / ndx.numpy.linalg ops, so autograd
differentiates them: gemm, gemm2, trmm, trsm, syrk, potrf, potri, inverse, det, slogdet,
sumlogdiag, extractdiag / makediag, extracttrian / maketrian, gelqf and syevd (the
factorizations' gradients are those of ndx.numpy.linalg's qr / eigh / cholesky)."""
import numpy as onp

from .. import numpy as _np
from ._op import _plain_inputs
from .ndarray import _wrap

__all__ = ["gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "syrk", "gelqf", "syevd",
           "sumlogdiag", "extractdiag", "makediag", "extracttrian", "maketrian", "inverse",
           "det", "logdet", "slogdet"]


def _check(who, *arrays, ndim=2):
    for a in arrays:
        if not isinstance(a, _np.ndarray):
            raise TypeError(f"[linalg.{who}] expected NDArrays, got {type(a).__name__}")
        if str(a.dtype) not in ("float32", "float64"):
            raise TypeError(f"[linalg.{who}] supports float32 and float64 only, got "
                            f"{a.dtype}")
        if a.ndim < ndim:
            raise ValueError(f"[linalg.{who}] input must have at least {ndim} dimensions, "
                             f"got shape {a.shape}")


def _same_batch(who, a, b, lead):
    if a.ndim != b.ndim or a.shape[:lead] != b.shape[:lead]:
        raise ValueError(f"[linalg.{who}] inputs must have the same number of dimensions and "
                         f"the same leading (batch) dimensions, got {a.shape} and {b.shape}")


def _square(who, a):
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"[linalg.{who}] input must hold square matrices, got shape "
                         f"{a.shape}")


def _t(a):
    return _np.swapaxes(a, -1, -2)


def _row_axis(who, a, axis):
    ax = axis + a.ndim if axis < 0 else axis
    if not 0 <= ax < a.ndim - 1:
        raise ValueError(f"[linalg.{who}] invalid row axis {axis} for {a.ndim}-d input")
    return ax


def _product(who, A, B, transpose_a, transpose_b, axis):
    """op(A) @ op(B) with rows on `axis` (moved next to the last axis and back)."""
    _check(who, A, B)
    ax = _row_axis(who, A, axis)
    last = A.ndim - 2
    if ax != last:
        A, B = _np.swapaxes(A, ax, last), _np.swapaxes(B, ax, last)
    _same_batch(who, A, B, A.ndim - 2)
    a = _t(A) if transpose_a else A
    b = _t(B) if transpose_b else B
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"[linalg.{who}] incompatible matrix dimensions: op(A) is "
                         f"{a.shape[-2:]}, op(B) is {b.shape[-2:]}")
    return _np.matmul(a, b), ax, last


def gemm(A, B, C, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0, axis=-2):
    """alpha * op(A) @ op(B) + beta * C, op() transposing when asked; the matrix rows are
    on `axis` (-2 by default), the columns on the last axis."""
    prod, ax, last = _product("gemm", A, B, transpose_a, transpose_b, axis)
    _check("gemm", C)
    c = _np.swapaxes(C, ax, last) if ax != last else C
    if c.shape != prod.shape:
        raise ValueError(f"[linalg.gemm] C must have the shape of op(A) @ op(B), "
                         f"{prod.shape if ax == last else _np.swapaxes(prod, ax, last).shape}"
                         f", got {C.shape}")
    out = alpha * prod + beta * c
    return _wrap(_np.swapaxes(out, ax, last) if ax != last else out)


def gemm2(A, B, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    """alpha * op(A) @ op(B), op() transposing when asked; the matrix rows are on `axis`."""
    prod, ax, last = _product("gemm2", A, B, transpose_a, transpose_b, axis)
    out = alpha * prod if alpha != 1.0 else prod
    return _wrap(_np.swapaxes(out, ax, last) if ax != last else out)


def potrf(A, lower=True):
    """The Cholesky factor of each symmetric positive-definite matrix: L with A = L L^T
    (lower=True), or U with A = U^T U (lower=False)."""
    _check("potrf", A)
    _square("potrf", A)
    return _wrap(_np.linalg.cholesky(A, upper=not lower))


def _triangle(A, lower):
    return _np.tril(A) if lower else _np.triu(A)


def potri(A, lower=True):
    """The inverse of B from its Cholesky factor A (only A's triangle is read): A^-T A^-1
    for lower=True (B = A A^T), A^-1 A^-T for lower=False (B = A^T A)."""
    _check("potri", A)
    _square("potri", A)
    inv = _np.linalg.inv(_triangle(A, lower))
    return _wrap(_np.matmul(_t(inv), inv) if lower else _np.matmul(inv, _t(inv)))


def _triangular_operands(who, A, B, rightside):
    _check(who, A, B)
    _square(who, A)
    _same_batch(who, A, B, A.ndim - 2)
    n = A.shape[-1]
    if (B.shape[-1] if rightside else B.shape[-2]) != n:
        raise ValueError(f"[linalg.{who}] incompatible matrix dimensions: A is {A.shape[-2:]},"
                         f" B is {B.shape[-2:]} (rightside={rightside})")


def trmm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0):
    """alpha * op(A) @ B, or alpha * B @ op(A) with rightside=True, for triangular A (only
    its lower / upper triangle is read); op() transposes with transpose=True."""
    _triangular_operands("trmm", A, B, rightside)
    a = _triangle(A, lower)
    if transpose:
        a = _t(a)
    out = _np.matmul(B, a) if rightside else _np.matmul(a, B)
    return _wrap(alpha * out if alpha != 1.0 else out)


def trsm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0):
    """X solving op(A) @ X = alpha * B, or X @ op(A) = alpha * B with rightside=True, for
    triangular A (only its lower / upper triangle is read)."""
    _triangular_operands("trsm", A, B, rightside)
    a = _triangle(A, lower)
    if transpose:
        a = _t(a)
    b = alpha * B if alpha != 1.0 else B
    if rightside:  # X a = b  <=>  a^T X^T = b^T
        return _wrap(_t(_np.linalg.solve(_t(a), _t(b))))
    return _wrap(_np.linalg.solve(a, b))


def syrk(A, transpose=False, alpha=1.0):
    """alpha * A @ A^T, or alpha * A^T @ A with transpose=True."""
    _check("syrk", A)
    out = _np.matmul(_t(A), A) if transpose else _np.matmul(A, _t(A))
    return _wrap(alpha * out if alpha != 1.0 else out)


def gelqf(A):
    """The LQ factorization A = L @ Q of each (x, y) matrix with x <= y and full rank: Q
    (x, y) with orthonormal rows, L (x, x) lower triangular. Returns (Q, L), as MXNet."""
    _check("gelqf", A)
    if A.shape[-2] > A.shape[-1]:
        raise ValueError(f"[linalg.gelqf] matrices must have no more rows than columns, got "
                         f"shape {A.shape}")
    q, r = _np.linalg.qr(_t(A))  # A^T = q r  =>  A = r^T q^T
    return _wrap(_t(q)), _wrap(_t(r))


def syevd(A):
    """The eigendecomposition of each symmetric matrix (its lower triangle is read):
    U @ A = diag(L) @ U with U's rows the orthonormal eigenvectors and L the eigenvalues in
    ascending order. Each row of U is signed so that its entry of largest magnitude (the
    first of ties) is positive, as MXNet's. Returns (U, L)."""
    _check("syevd", A)
    _square("syevd", A)
    w, v = _np.linalg.eigh(A, UPLO="L")
    u = _t(v)
    k = _np.argmax(_np.abs(u), axis=-1, keepdims=True)
    sign = _np.where(_np.take_along_axis(u, k, axis=-1) < 0, -1.0, 1.0).astype(u.dtype)
    return _wrap(u * sign), _wrap(w)


def _scalar_shape(out, a):
    """Results of one 2-D matrix: shape (1,) as MXNet's legacy ops, or () under NumPy shape
    semantics (npx.is_np_shape())."""
    from ..util import is_np_shape
    if a.ndim == 2 and not is_np_shape():
        return _np.reshape(out, (1,))
    return out


def sumlogdiag(A):
    """The sum of the logs of each square matrix's diagonal; shape (1,) for one matrix."""
    _check("sumlogdiag", A)
    _square("sumlogdiag", A)
    out = _np.sum(_np.log(_np.diagonal(A, 0, -2, -1)), axis=-1)
    return _wrap(_np.reshape(out, (1,)) if A.ndim == 2 else out)


def inverse(A):
    """The inverse of each square matrix."""
    _check("inverse", A)
    _square("inverse", A)
    return _wrap(_np.linalg.inv(A))


def det(A):
    """The determinant of each square matrix (shape (1,) for one matrix, () under NumPy
    shape semantics)."""
    _check("det", A)
    _square("det", A)
    return _wrap(_scalar_shape(_np.linalg.det(A), A))


def logdet(A):
    """log(det(A)) of each square matrix: -inf where det is 0, nan where it is negative."""
    _check("logdet", A)
    _square("logdet", A)
    sign, logabs = _np.linalg.slogdet(A)
    out = _np.where(sign > 0, logabs, _np.where(sign == 0, -onp.inf, onp.nan))
    return _wrap(_scalar_shape(out.astype(A.dtype), A))


def slogdet(A):
    """(sign, log|det|) of each square matrix; the gradient flows through log|det| only."""
    _check("slogdet", A)
    _square("slogdet", A)
    sign, logabs = _np.linalg.slogdet(A)
    return _wrap(_scalar_shape(sign, A)), _wrap(_scalar_shape(logabs, A))


# ---- diagonals and triangles ---------------------------------------------------------------


def extractdiag(A, offset=0):
    """The `offset`-th diagonal of each square matrix (above the main one for offset > 0)."""
    _check("extractdiag", A)
    _square("extractdiag", A)
    if abs(offset) >= A.shape[-1]:
        raise ValueError(f"[linalg.extractdiag] offset {offset} is out of range for "
                         f"{A.shape[-1]} x {A.shape[-1]} matrices")
    return _wrap(_np.diagonal(A, offset, -2, -1))


def _gather_last(a, index):
    """a's last axis gathered at `index` (a NumPy int array; -1: 0), a differentiable take."""
    zero = _np.zeros(a.shape[:-1] + (1,), dtype=a.dtype, device=a.device)
    ext = _np.concatenate([a, zero], axis=-1)
    idx = onp.where(index < 0, a.shape[-1], index)
    return _np.take(ext, _np.array(idx.astype("int64"), device=a.device), axis=-1)


def makediag(A, offset=0):
    """Square matrices with each row of A (the last axis) on their `offset`-th diagonal and
    zeros elsewhere: (..., n) -> (..., n + |offset|, n + |offset|)."""
    _check("makediag", A, ndim=1)
    n = A.shape[-1]
    m = n + abs(offset)
    index = onp.full((m, m), -1, dtype="int64")
    i = onp.arange(n)
    if offset >= 0:
        index[i, i + offset] = i
    else:
        index[i - offset, i] = i
    return _wrap(_gather_last(A, index))


def _trian_positions(n, offset, lower):
    """Row-major (row, col) positions of the triangle MXNet's extracttrian / maketrian use in
    an n x n matrix."""
    k = abs(offset)
    m = n - k
    low = offset < 0 or (offset == 0 and lower)
    rows, cols = [], []
    for i in range(m):
        for j in (range(i + 1) if low else range(i, m)):
            if low:
                rows.append(i + k)
                cols.append(j)
            else:
                rows.append(i)
                cols.append(j + k)
    return onp.array(rows, dtype="int64"), onp.array(cols, dtype="int64")


def extracttrian(A, offset=0, lower=True):
    """The triangle of each square matrix as a vector, row by row: the lower (lower=True) or
    upper triangle for offset 0, the upper triangle from the offset-th diagonal up for
    offset > 0, the lower one from the |offset|-th diagonal down for offset < 0."""
    _check("extracttrian", A)
    _square("extracttrian", A)
    n = A.shape[-1]
    if abs(offset) >= n:
        raise ValueError(f"[linalg.extracttrian] offset {offset} is out of range for "
                         f"{n} x {n} matrices")
    rows, cols = _trian_positions(n, offset, lower)
    flat = _np.reshape(A, A.shape[:-2] + (n * n,))
    return _wrap(_np.take(flat, _np.array(rows * n + cols, device=A.device), axis=-1))


def maketrian(A, offset=0, lower=True):
    """The inverse of extracttrian: square matrices holding each row of A (the last axis,
    of length m (m + 1) / 2) in the triangle extracttrian reads, zeros elsewhere; the
    matrices are m + |offset| wide."""
    _check("maketrian", A, ndim=1)
    t = A.shape[-1]
    m = int(round((onp.sqrt(8 * t + 1) - 1) / 2))
    if m * (m + 1) // 2 != t:
        raise ValueError(f"[linalg.maketrian] the last axis must hold m (m + 1) / 2 values, "
                         f"got {t}")
    n = m + abs(offset)
    rows, cols = _trian_positions(n, offset, lower)
    index = onp.full((n, n), -1, dtype="int64")
    index[rows, cols] = onp.arange(t)
    return _wrap(_gather_last(A, index))


_plain_inputs(globals())
