"""NumPy's products (issue 12, part 4): tensordot, inner, outer, vdot, kron, cross, einsum and
einsum_path, polyval, interp. They are composed of ndx's ops, so autograd and hybridize see
ordinary ops; every contraction of two operands is one (batched) matmul, i.e. one GEMM call
per batch, whatever the subscripts."""
import functools
import itertools
import math
import operator

import numpy as _onp

import ndx.numpy as _np

from .. import _core
from ._composites import _as_array, _axis, _kind, _pair, _weak_pair, sort_complex
from ._manipulation import _axis_list, trim_zeros


def _finish(result, out, name, casting="same_kind"):
    """result written into out (None: returned); its dtype must cast to out's under casting
    (NumPy's ufuncs: 'same_kind'; einsum: its casting=)."""
    if out is None:
        return result
    if not isinstance(out, _np.ndarray):
        raise TypeError(f"[{name}] out must be an ndarray, got {type(out).__name__}")
    if not _np.can_cast(result.dtype, out.dtype, casting):
        raise TypeError(f"[{name}] cannot cast the result from {result.dtype} to out's "
                        f"{out.dtype} under casting={casting!r}")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"[{name}] out has shape {tuple(out.shape)}, expected "
                         f"{tuple(result.shape)}")
    out[...] = result
    return out


# ---------------------------------------------------------------- tensor products
def _tensordot_axes(a, b, axes):
    if isinstance(axes, (int, _onp.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError("[tensordot] axes must be non-negative")
        if n > a.ndim or n > b.ndim:
            raise ValueError(f"[tensordot] axes={n} exceeds the dimensions of the operands "
                             f"({a.ndim} and {b.ndim})")
        axes = (list(range(a.ndim - n, a.ndim)), list(range(n)))  # checked below, as pairs
    try:
        axes_a, axes_b = axes
    except (TypeError, ValueError):
        raise ValueError("[tensordot] axes must be an integer or a pair of axis sequences") \
            from None
    axes_a = [axes_a] if isinstance(axes_a, (int, _onp.integer)) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, (int, _onp.integer)) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError("[tensordot] shape-mismatch for sum: the two axis lists differ in "
                         "length")
    axes_a = _axis_list(axes_a, a.ndim, "tensordot")
    axes_b = _axis_list(axes_b, b.ndim, "tensordot")
    for x, y in zip(axes_a, axes_b):
        if a.shape[x] != b.shape[y]:
            raise ValueError(f"[tensordot] shape-mismatch for sum: axis {x} of a has length "
                             f"{a.shape[x]}, axis {y} of b has {b.shape[y]}")
    return axes_a, axes_b


def tensordot(a, b, axes=2):
    """Sum of products over the given axes of a and b: one GEMM after transposes."""
    a, b = _pair(a, b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = math.prod(a.shape[i] for i in axes_a)
    m = math.prod(a.shape[i] for i in free_a)
    n = math.prod(b.shape[i] for i in free_b)
    at = a.transpose(free_a + axes_a).reshape((m, k))
    bt = b.transpose(axes_b + free_b).reshape((k, n))
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    return _np.matmul(at, bt).reshape(shape)


def inner(a, b):
    """Sum of products over the last axes (a product when either is a scalar)."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _np.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"[inner] shapes {tuple(a.shape)} and {tuple(b.shape)} not aligned: "
                         f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})")
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a, b, out=None):
    """out[i, j] = a.ravel()[i] * b.ravel()[j]."""
    a, b = _pair(a, b)
    return _finish(_np.multiply(a.reshape((-1, 1)), b.reshape((1, -1))), out, "outer")


def vdot(a, b):
    """The dot product of the flattened arrays, a conjugated when complex (NumPy's vdot)."""
    a, b = _pair(a, b)
    if a.size != b.size:
        raise ValueError(f"[vdot] the arrays have {a.size} and {b.size} elements; vdot needs "
                         f"the same number")
    if getattr(a.dtype, "kind", "f") == "c":  # (bfloat16 has no kind: a real float)
        a = _np.conjugate(a)
    return _np.matmul(a.reshape(-1), b.reshape(-1))


def kron(a, b):
    """The Kronecker product: blocks of b scaled by a's elements."""
    a, b = _pair(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # a's dims interleaved with b's: (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...).
    ea = a.reshape(tuple(x for d in sa for x in (d, 1)))
    eb = b.reshape(tuple(x for d in sb for x in (1, d)))
    return _np.multiply(ea, eb).reshape(tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or 2-vectors, their z component) along the given axes."""
    a, b = _pair(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("[cross] the operands must be at least 1-dimensional")
    a = _np.moveaxis(a, _axis(a.ndim, axisa, "cross", "axisa"), -1)
    b = _np.moveaxis(b, _axis(b.ndim, axisb, "cross", "axisb"), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("[cross] incompatible dimensions for cross product (dimension must be "
                         f"2 or 3), got {a.shape[-1]} and {b.shape[-1]}")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    if a2 is None:  # a = (a0, a1, 0)
        x, y = a1 * b2, -(a0 * b2)
    elif b2 is None:  # b = (b0, b1, 0)
        x, y = -(a2 * b1), a2 * b0
    else:
        x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    c = _np.stack(_np.broadcast_arrays(x, y, z), axis=-1)
    return _np.moveaxis(c, -1, _axis(c.ndim, axisc, "cross", "axisc"))


# ---------------------------------------------------------------- einsum
def _sublist_subscripts(sub, name):
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
            continue
        try:
            s = operator.index(s)
        except TypeError:
            raise TypeError(f"[{name}] subscripts in a sublist must be integers or Ellipsis, "
                            f"got {type(s).__name__}") from None
        if not 0 <= s < 52:
            raise ValueError(f"[{name}] subscript {s} is out of range: sublist subscripts lie "
                             f"in [0, 52)")
        out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
    return "".join(out)


def _split_operands(args, name):
    """(subscripts string, operands) from either calling convention."""
    if not args:
        raise TypeError(f"[{name}] no subscripts given")
    if isinstance(args[0], str):
        return args[0], [_as_array(x) for x in args[1:]]
    ops, subs = [], []
    args = list(args)
    while len(args) >= 2:
        ops.append(_as_array(args.pop(0)))
        subs.append(_sublist_subscripts(args.pop(0), name))
    text = ",".join(subs)
    if args:
        text += "->" + _sublist_subscripts(args[0], name)
    return text, ops


def _parse(subscripts, operands, name, sum_ellipsis=False):
    """Per operand its list of labels (letters, and ints for the dims '...' covers, aligned from
    the right as broadcasting aligns them), the output's labels, and each label's size.
    sum_ellipsis: an output without '...' sums the dims '...' covers (NumPy's optimized
    einsum, and einsum_path, do; its unoptimized einsum raises)."""
    text = subscripts.replace(" ", "")
    if "->" in text:
        lhs, rhs = text.split("->", 1)
        if "->" in rhs:
            raise ValueError(f"[{name}] subscripts string includes '->' more than once")
    else:
        lhs, rhs = text, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"[{name}] {len(terms)} subscript terms for {len(operands)} operands")
    for ch in text:
        if not (ch.isascii() and ch.isalpha()) and ch not in ",.->":
            raise ValueError(f"[{name}] invalid subscript {ch!r} in einstein sum subscripts "
                             f"string, subscripts must be letters")
    labels, ell = [], 0
    for term, op in zip(terms, operands):
        letters = term.replace("...", "")
        if "." in letters or term.count("...") > 1:
            raise ValueError(f"[{name}] invalid ellipsis in subscripts {term!r}")
        n_ell = op.ndim - len(letters)
        if n_ell < 0 or (n_ell > 0 and "..." not in term):
            raise ValueError(f"[{name}] operand has {op.ndim} dimensions but subscripts "
                             f"{term!r} name {len(letters)}")
        ell = max(ell, n_ell)
        head, _, tail = term.partition("...") if "..." in term else (term, "", "")
        labels.append(list(head) + list(range(ell - n_ell, ell)) + list(tail))
    # Re-align ellipsis labels now that the widest ellipsis is known.
    for i, (term, op) in enumerate(zip(terms, operands)):
        if "..." in term:
            head, _, tail = term.partition("...")
            n_ell = op.ndim - len(head) - len(tail)
            labels[i] = list(head) + list(range(ell - n_ell, ell)) + list(tail)
    counts = {}
    for lab in labels:
        for x in lab:
            counts[x] = counts.get(x, 0) + 1
    if rhs is None:
        output = list(range(ell)) + sorted(x for x, c in counts.items()
                                           if isinstance(x, str) and c == 1)
    else:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise ValueError(f"[{name}] invalid ellipsis in output subscripts {rhs!r}")
        head, _, tail = rhs.partition("...") if "..." in rhs else (rhs, "", "")
        if "..." not in rhs and ell > 0 and not sum_ellipsis:
            raise ValueError(f"[{name}] output has more dimensions than subscripts given in "
                             f"einstein sum, but no '...' ellipsis provided to broadcast the "
                             f"extra dimensions.")
        output = list(head) + list(range(ell) if "..." in rhs else []) + list(tail)
        for x in output:
            if output.count(x) > 1:
                raise ValueError(f"[{name}] einstein sum subscripts string includes output "
                                 f"subscript {x!r} multiple times")
            if x not in counts:
                raise ValueError(f"[{name}] einstein sum subscripts string included output "
                                 f"subscript {x!r} which never appeared in an input")
    sizes = {}
    for lab, op in zip(labels, operands):
        for x, d in zip(lab, op.shape):
            s = sizes.get(x, 1)
            if d != 1 and s != 1 and d != s:
                raise ValueError(f"[{name}] operands could not be broadcast together: "
                                 f"subscript {x!r} has sizes {s} and {d}")
            sizes[x] = max(s, d) if d != 1 and s != 1 else (d if s == 1 else s)
    return labels, output, sizes


def _diagonals(op, lab, name):
    """Repeated labels within one operand: their diagonal (a view)."""
    lab = list(lab)
    while True:
        dup = next((x for x in lab if lab.count(x) > 1), None)
        if dup is None:
            return op, lab
        i = lab.index(dup)
        j = lab.index(dup, i + 1)
        if op.shape[i] != op.shape[j]:
            raise ValueError(f"[{name}] dimensions in operand for collapsing index {dup!r} "
                             f"don't match ({op.shape[i]} != {op.shape[j]})")
        writeable = op._writeable()
        op = _np.diagonal(op, 0, i, j)
        if writeable:  # (einsum's diagonal is a writeable view, unlike np.diagonal's)
            op._set_writeable(True)
        lab = [x for k, x in enumerate(lab) if k not in (i, j)] + [dup]


def _sum_labels(op, lab, drop, keep_dtype):
    axes = tuple(i for i, x in enumerate(lab) if x in drop)
    if not axes:
        return op, lab
    return (_np.sum(op, axis=axes, dtype=keep_dtype),
            [x for x in lab if x not in drop])


def _contract_pair(a, la, b, lb, keep, dtype):
    """a (labels la) with b (labels lb), keeping the labels in `keep`: one matmul."""
    a, la = _sum_labels(a, la, {x for x in la if x not in lb and x not in keep}, dtype)
    b, lb = _sum_labels(b, lb, {x for x in lb if x not in la and x not in keep}, dtype)
    # A contracted label of size 1 on one side multiplies the other side's sum over it.
    for x in [x for x in la if x in lb and x not in keep]:
        da, db = a.shape[la.index(x)], b.shape[lb.index(x)]
        if da != db:
            if da == 1:
                a, la = _sum_labels(a, la, {x}, dtype)
                b, lb = _sum_labels(b, lb, {x}, dtype)
            else:
                b, lb = _sum_labels(b, lb, {x}, dtype)
                a, la = _sum_labels(a, la, {x}, dtype)
    batch = [x for x in la if x in lb]
    summed = [x for x in batch if x not in keep]
    batch = [x for x in batch if x in keep]
    only_a = [x for x in la if x not in lb]
    only_b = [x for x in lb if x not in la]
    if not summed:  # no contraction: a broadcast product
        out_lab = batch + only_a + only_b
        ea = a.transpose([la.index(x) for x in batch + only_a]).reshape(
            tuple(a.shape[la.index(x)] for x in batch + only_a) + (1,) * len(only_b))
        eb = b.transpose([lb.index(x) for x in batch + only_b])
        eb = eb.reshape(tuple(eb.shape[:len(batch)]) + (1,) * len(only_a)
                        + tuple(eb.shape[len(batch):]))
        return _np.multiply(ea, eb), out_lab
    sa = {x: a.shape[la.index(x)] for x in la}
    sb = {x: b.shape[lb.index(x)] for x in lb}
    m = math.prod(sa[x] for x in only_a)
    n = math.prod(sb[x] for x in only_b)
    k = math.prod(sa[x] for x in summed)
    at = a.transpose([la.index(x) for x in batch + only_a + summed]).reshape(
        tuple(sa[x] for x in batch) + (m, k))
    bt = b.transpose([lb.index(x) for x in batch + summed + only_b]).reshape(
        tuple(sb[x] for x in batch) + (k, n))
    c = _np.matmul(at, bt)
    shape = tuple(c.shape[:len(batch)]) + tuple(sa[x] for x in only_a) + \
        tuple(sb[x] for x in only_b)
    return c.reshape(shape), batch + only_a + only_b


def _result_size(la, lb, keep, sizes):
    return math.prod(sizes[x] for x in set(la) | set(lb) if x in keep)


def _greedy_path(labels, output, sizes):
    """Pairs to contract, each time the pair whose result is smallest relative to its inputs
    (opt_einsum's greedy rule); pairs sharing a label are preferred to outer products."""
    labs = [list(dict.fromkeys(lab)) for lab in labels]
    path = []
    while len(labs) > 1:
        best = None
        for i, j in itertools.combinations(range(len(labs)), 2):
            keep = set(output).union(*(labs[k] for k in range(len(labs)) if k not in (i, j)))
            size = _result_size(labs[i], labs[j], keep, sizes)
            cost = (not set(labs[i]) & set(labs[j]),
                    size - math.prod(sizes[x] for x in labs[i])
                    - math.prod(sizes[x] for x in labs[j]))
            if best is None or cost < best[0]:
                best = (cost, i, j, [x for x in dict.fromkeys(labs[i] + labs[j]) if x in keep])
        _, i, j, new = best
        path.append((i, j))
        labs = [lab for k, lab in enumerate(labs) if k not in (i, j)] + [new]
    return path


def _flops(la, lb, sizes):
    return math.prod(sizes[x] for x in set(la) | set(lb))


def _optimal_path(labels, output, sizes):
    """The pair order of least total multiply count, by exhaustive search (up to 6 operands;
    greedy beyond, as the search grows factorially)."""
    if len(labels) > 6:
        return _greedy_path(labels, output, sizes)
    best = [math.inf, None]

    def search(labs, path, cost):
        if cost >= best[0]:
            return
        if len(labs) == 1:
            best[0], best[1] = cost, list(path)
            return
        for i, j in itertools.combinations(range(len(labs)), 2):
            keep = set(output).union(*(labs[k] for k in range(len(labs)) if k not in (i, j)))
            new = [x for x in dict.fromkeys(labs[i] + labs[j]) if x in keep]
            rest = [lab for k, lab in enumerate(labs) if k not in (i, j)] + [new]
            search(rest, path + [(i, j)], cost + _flops(labs[i], labs[j], sizes))

    search([list(dict.fromkeys(lab)) for lab in labels], [], 0)
    return best[1]


def _path(optimize, labels, output, sizes, name):
    n = len(labels)
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        path = [tuple(step) for step in optimize[1:]]
        count = n
        for step in path:
            if not step or any(not isinstance(i, (int, _onp.integer)) or not 0 <= i < count
                               for i in step) or len(set(step)) != len(step):
                raise ValueError(f"[{name}] invalid contraction {step} in the einsum path for "
                                 f"{count} operands")
            count -= len(step) - 1
        return path
    if optimize not in (False, True, None, "greedy", "optimal"):
        raise ValueError(f"[{name}] optimize must be a bool, 'greedy', 'optimal' or an "
                         f"['einsum_path', ...] list, got {optimize!r}")
    if optimize is False or optimize is None or n <= 2:
        return [tuple(range(n))]  # one step, operands left to right (NumPy's (0,) for one)
    if optimize is True or optimize == "greedy":
        return _greedy_path(labels, output, sizes)
    return _optimal_path(labels, output, sizes)


def _einsum(operands, labels, output, path, name):
    dtype = _np.result_type(*operands) if operands else None
    ops = []
    for op, lab in zip(operands, labels):
        op, lab = _diagonals(op, lab, name)
        ops.append([op, lab])
    # Labels only one operand has and the output lacks are summed out at once.
    for k, (op, lab) in enumerate(ops):
        elsewhere = set(output).union(*(l2 for j, (_, l2) in enumerate(ops) if j != k))
        ops[k] = list(_sum_labels(op, lab, {x for x in lab if x not in elsewhere}, dtype))
    for step in path:
        group = [ops[i] for i in step]
        ops = [o for i, o in enumerate(ops) if i not in step]
        rest = set(output).union(*(lab for _, lab in ops))
        acc, acc_lab = group[0]
        for k, (op, lab) in enumerate(group[1:], start=1):
            keep = rest.union(*(lab2 for _, lab2 in group[k + 1:]))
            acc, acc_lab = _contract_pair(acc, acc_lab, op, lab, keep, dtype)
        ops.append([acc, acc_lab])
    (res, lab), = ops
    res, lab = _sum_labels(res, lab, {x for x in lab if x not in output}, dtype)
    res = res.transpose([lab.index(x) for x in output]) if lab != output else res
    if res.dtype != dtype:
        res = res.astype(dtype)
    return res


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation: subscripts (or NumPy's sublist form) with '...' and implicit output.
    Operands are reduced and diagonalised first, then contracted pairwise, each pair as one
    matmul; optimize (False: left to right; True / 'greedy' / 'optimal' / an einsum_path
    list) picks the pair order."""
    subscripts, ops = _split_operands(operands, "einsum")
    if not ops:
        raise ValueError("[einsum] at least one operand is required")
    if order not in ("K", "C", "A", "F"):
        raise ValueError(f"[einsum] order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    if dtype is not None:
        for op in ops:
            if not _np.can_cast(op.dtype, dtype, casting):
                raise TypeError(f"[einsum] cannot cast {op.dtype} to {_onp.dtype(dtype)} "
                                f"under casting={casting!r}")
        ops = [op.astype(dtype) for op in ops]
    labels, output, sizes = _parse(subscripts, ops, "einsum",
                                   sum_ellipsis=optimize is not False)
    path = _path(optimize, labels, output, sizes, "einsum")
    result = _einsum(ops, labels, output, path, "einsum")
    if isinstance(out, _np.ndarray) and tuple(out.shape) != tuple(result.shape):
        # (NumPy's einsum checks out's shape before its dtype)
        raise ValueError(f"[einsum] out has shape {tuple(out.shape)}, expected "
                         f"{tuple(result.shape)}")
    return _finish(result, out, "einsum", casting)


def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """The contraction order einsum would use: (['einsum_path', pairs...], a report)."""
    subscripts, ops = _split_operands(operands, "einsum_path")
    labels, output, sizes = _parse(subscripts, ops, "einsum_path", sum_ellipsis=True)
    path = _path(optimize, labels, output, sizes, "einsum_path")
    naive = math.prod(sizes.values()) * max(len(ops) - 1, 1)
    labs = [list(dict.fromkeys(lab)) for lab in labels]
    cost = 0
    for step in path:
        group = [labs[i] for i in step]
        labs = [lab for i, lab in enumerate(labs) if i not in step]
        merged = list(dict.fromkeys(x for g in group for x in g))
        cost += math.prod(sizes[x] for x in merged) * (len(group) - 1)
        keep = set(output).union(*labs)
        labs.append([x for x in merged if x in keep])
    report = (f"  Complete contraction:  {subscripts}\n"
              f"         Naive scaling:  {len(sizes)}\n"
              f"     Naive FLOP count:  {naive:.3e}\n"
              f" Optimized FLOP count:  {max(cost, 1):.3e}\n"
              f"  Theoretical speedup:  {naive / max(cost, 1):.3f}")
    return ["einsum_path"] + path, report


# ---------------------------------------------------------------- polynomials, interpolation
def polyval(p, x):
    """p[0] * x**(n-1) + ... + p[n-1], by Horner's scheme."""
    p, x = _pair(p, x)
    if p.ndim != 1:
        raise ValueError(f"[polyval] p must be 1-dimensional, got {p.ndim} dimensions")
    y = _np.zeros(x.shape, dtype=_np.result_type(p, x))
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def _interp_dtype(*arrays):
    if any(a.dtype == _onp.float64 for a in arrays):
        return "float64"
    return str(_core._default_float())


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x; xp increasing. In the default float
    dtype (float32 unless float64 comes in; NumPy always answers in float64)."""
    x, xp, fp = _as_array(x), _as_array(xp), _as_array(fp)
    if period is None and (_kind(x) == "c" or _kind(xp) == "c"):  # (NumPy's 'safe' cast)
        raise TypeError(f"[interp] x and xp must be real, got {x.dtype} and {xp.dtype}")
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("[interp] xp and fp must be 1-dimensional")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("[interp] fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("[interp] array of sample points is empty")
    if getattr(fp.dtype, "kind", "f") == "c":  # NumPy: the real and imaginary parts apart
        kw = {"left": left, "right": right, "period": period}
        parts = [interp(x, xp, part, **{k: (None if v is None else getattr(complex(v), name))
                                         for k, v in kw.items() if k != "period"},
                        period=period) for part, name in ((_np.real(fp), "real"),
                                                          (_np.imag(fp), "imag"))]
        return _np.add(parts[0], _np.multiply(parts[1], 1j))
    t = _interp_dtype(x, xp, fp)
    x, xp, fp = x.astype(t), xp.astype(t), fp.astype(t)
    if period is not None:
        if period == 0:
            raise ValueError("[interp] period must be a non-zero value")
        period = abs(period)
        left = right = None
        x = _np.mod(x, period)
        xp = _np.mod(xp, period)
        order = _np.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = _np.concatenate([xp[-1:] - period, xp, xp[0:1] + period])
        fp = _np.concatenate([fp[-1:], fp, fp[0:1]])
    n = xp.shape[0]
    if n == 1:
        y = _np.broadcast_to(fp[0], x.shape) + _np.zeros_like(x)
    else:
        j = _np.clip(_np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
        x0, x1, f0, f1 = xp[j], xp[j + 1], fp[j], fp[j + 1]
        slope = (f1 - f0) / (x1 - x0)
        y = slope * (x - x0) + f0
        # NumPy's: NaN from one end (an infinite sample) is tried from the other, and where
        # both ends hold the same value, that value
        y = _np.where(_np.isnan(y), slope * (x - x1) + f1, y)
        y = _np.where(_np.isnan(y) & (f0 == f1), f0, y)
        y = _np.where(x == x0, f0, y)
        y = _np.where(x == xp[-1], fp[-1], y)
    lo = fp[0] if left is None else left
    hi = fp[-1] if right is None else right
    y = _np.where(x < xp[0], lo, y)
    y = _np.where(x > xp[-1], hi, y)
    return y.astype(t) if y.dtype != t else y


# ------------------------------------------------------------- matrix-vector products
def _gufunc_finish(r, out, dtype):
    """A product's result in dtype= and written into out=, as NumPy's gufunc keywords."""
    if dtype is not None and r.dtype != dtype:
        r = r.astype(dtype)
    if out is None:
        return r
    if isinstance(out, tuple):
        (out,) = out
    out[...] = r
    return out


def _check_gufunc_dtype(name, dtype, *xs):
    """NumPy's gufunc dtype=: every array input must cast to it under 'same_kind' (checked
    before the shapes, as NumPy's UFuncTypeError, a TypeError)."""
    if dtype is None:
        return
    to = _onp.dtype(dtype)
    for i, x in enumerate(xs):
        src = getattr(x, "dtype", None)
        try:
            ok = src is None or _onp.can_cast(src, to, "same_kind")
        except TypeError:  # (a dtype NumPy does not know, bfloat16: the cast decides)
            ok = True
        if not ok:
            raise TypeError(f"[{name}] Cannot cast ufunc '{name}' input {i} from {src} to "
                            f"{to} with casting rule 'same_kind'")


def matvec(x1, x2, /, out=None, *, dtype=None):
    """The matrix-vector product over the last axes: (..., m, n) and (..., n) give (..., m),
    the leading axes broadcast (NumPy 2.2's gufunc; out= and dtype= as its)."""
    _check_gufunc_dtype("matvec", dtype, x1, x2)
    return _gufunc_finish(_matvec(x1, x2), out, dtype)


def _matvec(x1, x2):
    x1, x2 = _weak_pair(x1, x2)  # (a Python int out of the array's range: OverflowError first)
    if x1.ndim < 2:
        raise ValueError(f"[matvec] x1 must have at least 2 dimensions (..., m, n), got "
                         f"shape {tuple(x1.shape)}")
    if x2.ndim < 1:
        raise ValueError("[matvec] x2 must have at least 1 dimension (..., n), got a 0-d array")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"[matvec] the last axes of x1 {tuple(x1.shape)} and x2 "
                         f"{tuple(x2.shape)} differ in length")
    return _np.matmul(x1, _np.expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2, /, out=None, *, dtype=None):
    """The vector-matrix product over the last axes, x1 conjugated: (..., n) and (..., n, m)
    give (..., m), the leading axes broadcast (NumPy 2.2's gufunc; out= and dtype= as its)."""
    _check_gufunc_dtype("vecmat", dtype, x1, x2)
    return _gufunc_finish(_vecmat(x1, x2), out, dtype)


def _vecmat(x1, x2):
    x1, x2 = _weak_pair(x1, x2)  # (a Python int out of the array's range: OverflowError first)
    if x1.ndim < 1:
        raise ValueError("[vecmat] x1 must have at least 1 dimension (..., n), got a 0-d array")
    if x2.ndim < 2:
        raise ValueError(f"[vecmat] x2 must have at least 2 dimensions (..., n, m), got shape "
                         f"{tuple(x2.shape)}")
    if x1.shape[-1] != x2.shape[-2]:
        raise ValueError(f"[vecmat] x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)}: the last "
                         f"axis of x1 must match the second last of x2")
    if _kind(x1) == "c":
        x1 = _np.conjugate(x1)
    return _np.matmul(_np.expand_dims(x1, -2), x2)[..., 0, :]


# ---------------------------------------------------------------------------- polynomials
# Coefficients run from the highest power down, as NumPy's poly* functions have them; dtypes
# follow NumPy's (integer coefficients give float64 where NumPy divides).
def _poly1d(p, name, like=None):
    """p's coefficients as a 1-d array (host data beside the array `like`, so that Python
    floats beside float64 coefficients stay float64)."""
    if isinstance(p, poly1d):
        return p.coeffs
    p = _as_array(p, like)
    if p.ndim == 0:
        p = _np.reshape(p, (1,))
    if p.ndim != 1:
        raise ValueError(f"[{name}] coefficients must be a 1-d array, got shape "
                         f"{tuple(p.shape)}")
    return p


def _poly_pair(a1, a2, name):
    """Two coefficient arrays, the host one (if either) converted beside the other."""
    first = not isinstance(a1, (poly1d, _np.ndarray)) and isinstance(a2, (poly1d, _np.ndarray))
    if first:
        a2 = _poly1d(a2, name)
        return _poly1d(a1, name, a2), a2
    a1 = _poly1d(a1, name)
    return a1, _poly1d(a2, name, a1)


def _inexact(p):
    """p in a float dtype (float64 for integers and bool, as p + 0.0 in NumPy)."""
    return p if _kind(p) in "fc" else p.astype("float64")


def _keeps_poly1d(fn):
    """fn's result as a poly1d (each of a tuple's) when a poly1d was among its arguments, as
    NumPy's polynomial functions do."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        if not any(isinstance(a, poly1d) for a in args):
            return result
        if isinstance(result, tuple):
            return tuple(poly1d(r) for r in result)
        return poly1d(result)
    return wrapper


@_keeps_poly1d
def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros)."""
    a1, a2 = _poly_pair(a1, a2, "polyadd")
    n = max(a1.shape[0], a2.shape[0])
    a1 = _np.pad(a1, (n - a1.shape[0], 0))
    a2 = _np.pad(a2, (n - a2.shape[0], 0))
    return _np.add(a1, a2)


@_keeps_poly1d
def polysub(a1, a2):
    """The difference a1 - a2 of two polynomials."""
    a1, a2 = _poly_pair(a1, a2, "polysub")
    n = max(a1.shape[0], a2.shape[0])
    return _np.subtract(_np.pad(a1, (n - a1.shape[0], 0)), _np.pad(a2, (n - a2.shape[0], 0)))


def _trim_leading_zeros(p):
    """p without its leading zero coefficients (one zero is left of an all-zero p), as
    NumPy's poly1d keeps them."""
    trimmed = trim_zeros(p, "f")
    return trimmed if trimmed.shape[0] or not p.shape[0] else _np.zeros(
        (1,), dtype=p.dtype, device=p.device)  # (p's dtype, bool too, as NumPy's poly1d)


@_keeps_poly1d
def polymul(a1, a2):
    """The product of two polynomials (the convolution of their coefficients, leading zeros
    dropped first as NumPy's poly1d drops them)."""
    a1, a2 = _poly_pair(a1, a2, "polymul")
    a1, a2 = (_trim_leading_zeros(a if a.shape[0] else _np.zeros((1,), dtype=a.dtype,
                                                                   device=a.device))
              for a in (a1, a2))  # an empty polynomial is 0, as poly1d([]) is
    return _np.convolve(a1, a2)


@_keeps_poly1d
def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("[polyder] order of derivative must be positive (see polyint)")
    p = _poly1d(p, "polyder")
    for _ in range(min(m, p.shape[0] + 1)):  # (past the degree it stays empty)
        n = p.shape[0] - 1
        p = _np.multiply(p[:-1], _np.arange(n, 0, -1, device=p.device))
    return p


@_keeps_poly1d
def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial; k: the integration constants (one per
    integration, the first for the outermost; a scalar for all; zeros by default). In one
    pass: the coefficient of x^j gains the factor j! / (j + m)!, and constant k[t] becomes
    k[t] x^(m-1-t) / (m-1-t)!, as m integrations one after the other give."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("[polyint] order of integral must be positive (see polyder)")
    p = _poly1d(p, "polyint")
    k = _onp.zeros(1) if k is None else _onp.atleast_1d(_onp.asarray(k))
    if k.ndim != 1 or (k.shape[0] != 1 and k.shape[0] < m):
        raise ValueError("[polyint] k must be a scalar or a rank-1 array of length 1 or >m")
    if m == 0:
        return p
    if m > 1 << 20:
        raise ValueError(f"[polyint] m = {m} integrations: at most {1 << 20} are supported")
    dtype = "complex128" if _kind(p) == "c" or k.dtype.kind == "c" else "float64"
    powers = _onp.arange(p.shape[0] - 1, -1, -1, dtype=_onp.float64)
    if m <= 64:  # 1 / ((j+1)(j+2)...(j+m)), divided in NumPy's order
        factor = _onp.ones(p.shape[0])
        for step in range(1, m + 1):
            factor /= powers + step
    else:  # (from log-gamma: it underflows to 0 where the divisions do)
        factor = _onp.exp([math.lgamma(j + 1) - math.lgamma(j + m + 1) for j in powers])
    constants = k[:m] if k.shape[0] > 1 else _onp.full(m, k[0])
    inv_fact = _onp.ones(m)  # 1 / (m-1-t)! for t = 0 .. m-1
    for t in range(m - 2, -1, -1):
        inv_fact[t] = inv_fact[t + 1] / (m - 1 - t)
    head = _np.multiply(p.astype(dtype), _np.array(factor, dtype=dtype, device=p.device))
    tail = _np.array((constants * inv_fact).astype(dtype), device=p.device)
    return _np.concatenate([head, tail])


@_keeps_poly1d
def polydiv(u, v):
    """(quotient, remainder) of the polynomial division u / v; the remainder loses leading
    coefficients that are zero (relative to 1e-14)."""
    u, v = (_inexact(p) for p in _poly_pair(u, v, "polydiv"))
    if v.shape[0] == 0 or u.shape[0] == 0:
        raise ValueError("[polydiv] u and v must have at least one coefficient")
    # NumPy multiplies by 1 / v[0], computed in v's own dtype (the same roundings here); a
    # zero leading coefficient gives inf and NaN there too.
    scale = _np.true_divide(1, v[0])
    dtype = _np.result_type(u, v)
    u, v = u.astype(dtype), v.astype(dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    quotient, r = [], u
    for k in range(m - n + 1):
        d = _np.multiply(scale, r[k])
        quotient.append(d)
        r = _np.concatenate([r[:k], _np.subtract(r[k:k + n + 1], _np.multiply(d, v)),
                             r[k + n + 1:]])
    q = _np.stack(quotient) if quotient else _np.zeros((1,), dtype=dtype, device=u.device)
    while r.shape[0] > 1 and bool(_np.isclose(r[0], 0, rtol=1e-14, atol=1e-8)):
        r = r[1:]
    return q, r


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (of a square matrix:
    its characteristic polynomial)."""
    z = _as_array(seq_of_zeros)
    z = _np.reshape(z, (1,)) if z.ndim == 0 else z
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        z = _np.linalg.eigvals(z)
    elif z.ndim != 1:
        raise ValueError("[poly] input must be 1d or non-empty square 2d array")
    elif _kind(z) not in "fc" or z.dtype in ("float16", "bfloat16"):
        z = z.astype("float64")  # (NumPy's mintypecode: float64 below float32)
    if z.shape[0] == 0:
        return 1.0
    a = _np.ones((1,), dtype=z.dtype, device=z.device)
    for i in range(z.shape[0]):  # a(x) * (x - z_i), NumPy's convolve(a, [1, -z_i]) term by
        # term: no padding zero is multiplied by z_i (0 * inf would make a NaN)
        za = _np.multiply(z[i], a)
        a = _np.concatenate([a[:1], _np.subtract(a[1:], za[:-1]), _np.negative(za[-1:])])
    if _kind(a) == "c":  # roots in conjugate pairs give real coefficients
        if bool(_np.all(_np.equal(sort_complex(z), sort_complex(_np.conjugate(z))))):
            a = _np.copy(_np.real(a))
    return a


def roots(p):
    """The roots of the polynomial with coefficients p: the eigenvalues of its companion
    matrix (complex where any root is), plus a zero root per trailing zero coefficient."""
    p = _poly1d(p, "roots")
    kept = trim_zeros(p, "b")
    trailing = p.shape[0] - kept.shape[0]
    p = _inexact(trim_zeros(kept, "f"))
    if p.shape[0] == 0:  # (no nonzero coefficient: no root; NumPy's array([]), float64)
        return _np.zeros((0,), dtype="float64", device=p.device)
    n = p.shape[0]
    if n > 1:
        companion = _np.concatenate([
            _np.expand_dims(_np.negative(_np.true_divide(p[1:], p[0])), 0),
            _np.eye(n - 2, n - 1, dtype=p.dtype, device=p.device)], axis=0)
        found = _np.linalg.eigvals(companion)
    else:  # (NumPy's array([]): float64, whatever p's dtype)
        found = _np.zeros((0,), dtype="float64", device=p.device)
    return _np.concatenate([found, _np.zeros((trailing,), dtype=found.dtype,
                                             device=p.device)])


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y) (y: one series, or one per
    column); coefficients highest power first. full=True also gives (residuals, rank,
    singular values, rcond); cov=True the coefficients' covariance ('unscaled' unscaled)."""
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("[polyfit] expected deg >= 0")
    order = deg + 1
    x = _inexact(_as_array(x))
    # NumPy's default rcond: len(x) times the machine epsilon of x's float dtype
    eps = 2.0 ** -7 if x.dtype == "bfloat16" else float(_onp.finfo(x.dtype).eps)
    y = _inexact(_as_array(y, x))
    if x.ndim != 1:
        raise TypeError("[polyfit] expected a 1-d vector for x")
    if x.size == 0:
        raise TypeError("[polyfit] expected a non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("[polyfit] expected a 1-d or 2-d array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("[polyfit] expected x and y to have the same length")
    dtype = "complex128" if _kind(x) == "c" or _kind(y) == "c" else "float64"
    x, y = x.astype(dtype), y.astype(dtype)
    if rcond is None:
        rcond = x.shape[0] * eps
    lhs, rhs = _np.vander(x, order), y
    if w is not None:
        w = _inexact(_as_array(w, x)).astype(dtype)
        if w.ndim != 1:
            raise TypeError("[polyfit] expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("[polyfit] expected w and y to have the same length")
        lhs = _np.multiply(lhs, _np.expand_dims(w, 1))
        rhs = _np.multiply(rhs, _np.expand_dims(w, 1) if rhs.ndim == 2 else w)
    scale = _np.sqrt(_np.sum(_np.real(_np.multiply(lhs, _np.conjugate(lhs))), axis=0))
    lhs = _np.true_divide(lhs, scale)
    c, resids, rank, s = _np.linalg.lstsq(lhs, rhs, rcond)
    c = _np.true_divide(c, _np.expand_dims(scale, 1) if c.ndim == 2 else scale)
    if rank != order and not full:
        import warnings
        warnings.warn("Polyfit may be poorly conditioned", _onp.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if cov:
        base = _np.linalg.inv(_np.matmul(_np.conjugate(_np.transpose(lhs)), lhs))
        base = _np.true_divide(base, _np.outer(scale, scale))
        if cov == "unscaled":
            fac = 1.0
        else:
            if x.shape[0] <= order:
                raise ValueError("[polyfit] the number of data points must exceed order to "
                                 "scale the covariance matrix")
            fac = _np.true_divide(resids, x.shape[0] - order)
        if y.ndim == 1:
            return c, _np.multiply(base, fac)
        return c, _np.multiply(_np.expand_dims(base, -1), fac)
    return c


class poly1d:  # noqa: N801  (NumPy's name)
    """NumPy's one-variable polynomial class over ndx arrays: poly1d([1, 2, 3]) is
    x**2 + 2x + 3 (poly1d(roots, r=True) from its roots). It can be called on numbers,
    arrays and other poly1d; + - * ** and / combine polynomials and numbers."""

    __hash__ = None

    def __init__(self, c_or_r, r=False, variable=None):
        if isinstance(c_or_r, poly1d):
            self._variable = c_or_r._variable if variable is None else variable
            self._coeffs = c_or_r._coeffs
            return
        if r:
            c_or_r = poly(c_or_r)
        c = _as_array(c_or_r)
        if c.ndim == 0:
            c = _np.reshape(c, (1,))
        if c.ndim != 1:
            raise ValueError(f"[poly1d] the coefficients must be 1-d, got shape "
                             f"{tuple(c.shape)}")
        self._coeffs = _trim_leading_zeros(c) if c.shape[0] else _np.zeros(
            (1,), dtype=c.dtype, device=c.device)
        self._variable = "x" if variable is None else variable

    @property
    def coeffs(self):
        """The coefficients, highest power first."""
        return self._coeffs

    @coeffs.setter
    def coeffs(self, value):
        if value is not self._coeffs:  # (as NumPy: only in-place changes are allowed)
            raise AttributeError("[poly1d] cannot set coeffs; change them in place")

    c = coef = coefficients = coeffs

    @property
    def variable(self):
        return self._variable

    @property
    def order(self):
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def roots(self):
        return roots(self._coeffs)

    r = roots

    def __array__(self, dtype=None, copy=None):
        a = self._coeffs.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self):
        return self.order

    def __call__(self, val):
        if isinstance(val, poly1d):  # the composition self(val), by Horner's scheme
            result = poly1d(_np.zeros((1,), dtype="int64", device=self._coeffs.device))
            for c in self._coeffs:
                result = result * val + c
            return result
        return polyval(self._coeffs, val)

    def __iter__(self):
        return iter(self._coeffs)

    def __getitem__(self, power):
        """The coefficient of variable**power (0 past the order)."""
        power = operator.index(power)
        if power < 0 or power > self.order:
            return self._coeffs.dtype.type(0)
        return self._coeffs[self.order - power].item()

    def __setitem__(self, power, value):
        power = operator.index(power)
        if power < 0:
            raise ValueError("[poly1d] does not support negative powers")
        if power > self.order:
            grown = _np.zeros((power + 1,), dtype=self._coeffs.dtype,
                              device=self._coeffs.device)
            grown[power - self.order:] = self._coeffs
            self._coeffs = grown
        self._coeffs[self.order - power] = value

    def __pos__(self):
        return self

    def __neg__(self):
        return poly1d(_np.negative(self._coeffs))

    def __add__(self, other):
        return poly1d(polyadd(self._coeffs, _coeffs_of(other)))

    __radd__ = __add__

    def __sub__(self, other):
        return poly1d(polysub(self._coeffs, _coeffs_of(other)))

    def __rsub__(self, other):
        return poly1d(polysub(_coeffs_of(other), self._coeffs))

    def __mul__(self, other):
        if _is_number(other):
            return poly1d(_np.multiply(self._coeffs, other))
        return poly1d(polymul(self._coeffs, _coeffs_of(other)))

    __rmul__ = __mul__

    def __pow__(self, n):
        if not isinstance(n, (int, _onp.integer)) or isinstance(n, bool) or n < 0:
            raise ValueError(f"[poly1d] power must be a non-negative integer, got {n!r}")
        result = _np.ones((1,), dtype="int64", device=self._coeffs.device)  # (NumPy's start)
        for _ in range(int(n)):
            result = polymul(self._coeffs, result)
        return poly1d(result)

    def __truediv__(self, other):
        if _is_number(other):
            return poly1d(_np.true_divide(self._coeffs, other))
        return tuple(poly1d(p) for p in polydiv(self._coeffs, _coeffs_of(other)))

    def __rtruediv__(self, other):
        return tuple(poly1d(p) for p in polydiv(_coeffs_of(other), self._coeffs))

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __eq__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        return (self._coeffs.shape == other._coeffs.shape
                and bool(_np.all(_np.equal(self._coeffs, other._coeffs))))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def deriv(self, m=1):
        """The m-th derivative."""
        return poly1d(polyder(self._coeffs, m))

    def integ(self, m=1, k=0):
        """The m-th antiderivative with integration constants k."""
        return poly1d(polyint(self._coeffs, m, k))

    def __repr__(self):
        body = repr(self._coeffs)
        return "poly1d(" + body[body.index("(") + 1:body.rindex(")")] + ")"

    def __str__(self):
        return _poly_str(self._coeffs.asnumpy(), self._variable)


def _is_number(v):
    return isinstance(v, (int, float, complex, _onp.number)) or (
        isinstance(v, _np.ndarray) and v.ndim == 0)


def _coeffs_of(v):
    return v._coeffs if isinstance(v, poly1d) else _poly1d(v, "poly1d")


def _poly_str(coeffs, var):
    """NumPy's layout: the terms on one line ('%.4g' numbers, zero terms left out, 'a - b'
    for a negative b) and the exponents above them, each starting where its term ends."""
    def number(v):
        if _onp.iscomplexobj(v):
            re, im = float(v.real), float(v.imag)
            if im == 0:
                return "%.4g" % re
            if re == 0:
                return "%.4gj" % im
            return "(%.4g + %.4gj)" % (re, im)
        return "%.4g" % v

    degree = len(coeffs) - 1
    top = bottom = ""
    for i, c in enumerate(coeffs):
        text, power = number(c), degree - i
        if text == "0":
            continue
        if power:
            text += " " + var
        if bottom:
            text = (" - " + text[1:]) if text.startswith("-") else (" + " + text)
        bottom += text
        if power > 1:
            exponent = str(power)
            top += " " * (len(bottom) - len(top)) + exponent
            bottom += " " * (len(exponent) - 1)
    return (top or " ") + "\n" + (bottom or "0")
