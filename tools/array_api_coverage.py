"""How far ndx.np is an Array API standard (2023.12) namespace: every function the standard
lists, with the signature it gives, checked against ndx.np (and np.linalg / np.fft for the
extensions), plus the constants, dtypes and the array object's attributes and methods.

    PYTHONPATH=python python tools/array_api_coverage.py       # a report; exit 1 on problems

The table below is written by hand from the standard's pages
(data-apis.org/array-api/2023.12/API_specification/). A signature "passes" when every call the
standard allows works: positional-only parameters can be given by position, keyword-only ones
by name, optional ones may be left out, and whatever ndx adds beyond the standard (NumPy's
extra parameters: out=, order=, ...) is optional. So NumPy's `sum(a, axis=None, ...)` passes
for the standard's `sum(x, /, *, axis=None, ...)`: NumPy's signatures are kept where they are a
superset. A default that differs from the standard's is a problem as well.
"""
import inspect
import sys

SPEC_VERSION = "2023.12"

# name: signature, as the standard writes it (types left out).
FUNCTIONS = {
    # creation
    "arange": "(start, /, stop=None, step=1, *, dtype=None, device=None)",
    "asarray": "(obj, /, *, dtype=None, device=None, copy=None)",
    "empty": "(shape, *, dtype=None, device=None)",
    "empty_like": "(x, /, *, dtype=None, device=None)",
    "eye": "(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)",
    "from_dlpack": "(x, /, *, device=None, copy=None)",
    "full": "(shape, fill_value, *, dtype=None, device=None)",
    "full_like": "(x, /, fill_value, *, dtype=None, device=None)",
    "linspace": "(start, stop, /, num, *, dtype=None, device=None, endpoint=True)",
    "meshgrid": "(*arrays, indexing='xy')",
    "ones": "(shape, *, dtype=None, device=None)",
    "ones_like": "(x, /, *, dtype=None, device=None)",
    "tril": "(x, /, *, k=0)",
    "triu": "(x, /, *, k=0)",
    "zeros": "(shape, *, dtype=None, device=None)",
    "zeros_like": "(x, /, *, dtype=None, device=None)",
    # data types
    "astype": "(x, dtype, /, *, copy=True, device=None)",
    "can_cast": "(from_, to, /)",
    "finfo": "(type, /)",
    "iinfo": "(type, /)",
    "isdtype": "(dtype, kind)",
    "result_type": "(*arrays_and_dtypes)",
    # elementwise
    **{n: "(x, /)" for n in (
        "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
        "conj", "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan",
        "log", "log1p", "log2", "log10", "logical_not", "negative", "positive", "real", "round",
        "sign", "signbit", "sin", "sinh", "square", "sqrt", "tan", "tanh", "trunc")},
    **{n: "(x1, x2, /)" for n in (
        "add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
        "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
        "hypot", "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor",
        "maximum", "minimum", "multiply", "not_equal", "pow", "remainder", "subtract")},
    "clip": "(x, /, min=None, max=None)",
    # indexing
    "take": "(x, indices, /, *, axis=None)",
    # linear algebra (main namespace)
    "matmul": "(x1, x2, /)",
    "matrix_transpose": "(x, /)",
    "tensordot": "(x1, x2, /, *, axes=2)",
    "vecdot": "(x1, x2, /, *, axis=-1)",
    # manipulation
    "broadcast_arrays": "(*arrays)",
    "broadcast_to": "(x, /, shape)",
    "concat": "(arrays, /, *, axis=0)",
    "expand_dims": "(x, /, *, axis=0)",
    "flip": "(x, /, *, axis=None)",
    "moveaxis": "(x, source, destination, /)",
    "permute_dims": "(x, /, axes)",
    "repeat": "(x, repeats, /, *, axis=None)",
    "reshape": "(x, /, shape, *, copy=None)",
    "roll": "(x, /, shift, *, axis=None)",
    "squeeze": "(x, /, axis)",
    "stack": "(arrays, /, *, axis=0)",
    "tile": "(x, repetitions, /)",
    "unstack": "(x, /, *, axis=0)",
    # searching
    "argmax": "(x, /, *, axis=None, keepdims=False)",
    "argmin": "(x, /, *, axis=None, keepdims=False)",
    "nonzero": "(x, /)",
    "searchsorted": "(x1, x2, /, *, side='left', sorter=None)",
    "where": "(condition, x1, x2, /)",
    # sets
    "unique_all": "(x, /)",
    "unique_counts": "(x, /)",
    "unique_inverse": "(x, /)",
    "unique_values": "(x, /)",
    # sorting
    "argsort": "(x, /, *, axis=-1, descending=False, stable=True)",
    "sort": "(x, /, *, axis=-1, descending=False, stable=True)",
    # statistics
    "cumulative_sum": "(x, /, *, axis=None, dtype=None, include_initial=False)",
    "max": "(x, /, *, axis=None, keepdims=False)",
    "mean": "(x, /, *, axis=None, keepdims=False)",
    "min": "(x, /, *, axis=None, keepdims=False)",
    "prod": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "std": "(x, /, *, axis=None, correction=0.0, keepdims=False)",
    "sum": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "var": "(x, /, *, axis=None, correction=0.0, keepdims=False)",
    # utilities
    "all": "(x, /, *, axis=None, keepdims=False)",
    "any": "(x, /, *, axis=None, keepdims=False)",
    # inspection
    "__array_namespace_info__": "()",
}

LINALG = {
    "cholesky": "(x, /, *, upper=False)",
    "cross": "(x1, x2, /, *, axis=-1)",
    "det": "(x, /)",
    "diagonal": "(x, /, *, offset=0)",
    "eigh": "(x, /)",
    "eigvalsh": "(x, /)",
    "inv": "(x, /)",
    "matmul": "(x1, x2, /)",
    "matrix_norm": "(x, /, *, keepdims=False, ord='fro')",
    "matrix_power": "(x, n, /)",
    "matrix_rank": "(x, /, *, rtol=None)",
    "matrix_transpose": "(x, /)",
    "outer": "(x1, x2, /)",
    "pinv": "(x, /, *, rtol=None)",
    "qr": "(x, /, *, mode='reduced')",
    "slogdet": "(x, /)",
    "solve": "(x1, x2, /)",
    "svd": "(x, /, *, full_matrices=True)",
    "svdvals": "(x, /)",
    "tensordot": "(x1, x2, /, *, axes=2)",
    "trace": "(x, /, *, offset=0, dtype=None)",
    "vecdot": "(x1, x2, /, *, axis=-1)",
    "vector_norm": "(x, /, *, axis=None, keepdims=False, ord=2)",
}

FFT = {
    **{n: "(x, /, *, n=None, axis=-1, norm='backward')" for n in (
        "fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{n: "(x, /, *, s=None, axes=None, norm='backward')" for n in (
        "fftn", "ifftn", "rfftn", "irfftn")},
    "fftfreq": "(n, /, *, d=1.0, device=None)",
    "rfftfreq": "(n, /, *, d=1.0, device=None)",
    "fftshift": "(x, /, *, axes=None)",
    "ifftshift": "(x, /, *, axes=None)",
}

CONSTANTS = ("e", "inf", "nan", "newaxis", "pi")
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128")

ARRAY_ATTRIBUTES = ("dtype", "device", "mT", "ndim", "shape", "size", "T")
ARRAY_METHODS = {
    **{n: "(self, /)" for n in (
        "__abs__", "__invert__", "__neg__", "__pos__", "__dlpack_device__")},
    **{n: "(self, other, /)" for n in (
        "__add__", "__and__", "__eq__", "__floordiv__", "__ge__", "__gt__", "__le__",
        "__lshift__", "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__or__",
        "__pow__", "__rshift__", "__sub__", "__truediv__", "__xor__")},
    **{n: "(self, /)" for n in ("__bool__", "__complex__", "__float__", "__index__",
                                "__int__")},
    "__array_namespace__": "(self, /, *, api_version=None)",
    "__dlpack__": "(self, /, *, stream=None, max_version=None, dl_device=None, copy=None)",
    "__getitem__": "(self, key, /)",
    "__setitem__": "(self, key, value, /)",
    "to_device": "(self, device, /, *, stream=None)",
}
# In-place and reflected operators: that they exist is all the standard fixes about them.
ARRAY_OPERATORS = tuple(f"__{p}{n}__" for p in ("i", "r") for n in (
    "add", "sub", "mul", "truediv", "floordiv", "pow", "mod", "matmul", "and", "or", "xor",
    "lshift", "rshift"))


def spec_signature(text):
    """An inspect.Signature from the standard's spelling."""
    scope = {}
    exec(f"def f{text}: pass", scope)  # noqa: S102 - the table above, not input
    return inspect.signature(scope["f"])


def _same_default(a, b):
    if a is b:
        return True
    try:
        return type(a) in (int, float, str, bool) and type(b) in (int, float, str, bool) \
            and isinstance(a, bool) == isinstance(b, bool) and a == b
    except Exception:  # noqa: BLE001 - a default that cannot be compared differs
        return False


def signature_problems(fn, spec_text):
    """What keeps `fn` from accepting every call the standard's signature allows ([] if
    nothing)."""
    spec = spec_signature(spec_text)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return ["no inspectable signature"]
    P = inspect.Parameter
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    var_pos = any(p.kind == P.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == P.VAR_KEYWORD for p in params)
    by_name = {p.name: p for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
    out = []
    used = set()
    spec_pos = [p for p in spec.parameters.values()
                if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    for i, s in enumerate(spec_pos):
        if i < len(positional):
            p = positional[i]
            used.add(p.name)
            if s.default is not P.empty and p.default is P.empty:
                out.append(f"parameter {i} ({s.name}) must be optional")
            elif s.default is not P.empty and not _same_default(s.default, p.default):
                out.append(f"parameter {i} ({s.name}): default {p.default!r}, the standard's "
                           f"is {s.default!r}")
        elif not var_pos:
            out.append(f"cannot take parameter {i} ({s.name}) by position")
    for s in spec.parameters.values():
        if s.kind == P.VAR_POSITIONAL and not var_pos:
            out.append(f"needs *{s.name}")
        if s.kind not in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
            continue
        p = by_name.get(s.name)
        if p is None:
            if not var_kw:
                out.append(f"no keyword parameter {s.name!r}")
            continue
        used.add(p.name)
        if s.kind == P.KEYWORD_ONLY and p.kind == P.POSITIONAL_OR_KEYWORD \
                and p.default is P.empty and s.default is not P.empty:
            out.append(f"{s.name!r} must be optional")
        elif s.default is not P.empty and not _same_default(s.default, p.default):
            out.append(f"{s.name!r}: default {p.default!r}, the standard's is {s.default!r}")
    n_spec_pos = len(spec_pos)
    for i, p in enumerate(positional):
        if p.name not in used and p.default is P.empty and i >= n_spec_pos:
            out.append(f"extra required parameter {p.name!r}")
    for p in params:
        if p.kind == P.KEYWORD_ONLY and p.name not in used and p.default is P.empty:
            out.append(f"extra required keyword {p.name!r}")
    return out


def problems(xp=None):
    """{qualified name: [problem, ...]} for everything that is missing or wrong."""
    if xp is None:
        from ndx import np as xp
    found = {}

    def walk(namespace, prefix, table):
        for name, text in table.items():
            fn = getattr(namespace, name, None) if namespace is not None else None
            if fn is None:
                found[prefix + name] = ["missing"]
                continue
            bad = signature_problems(fn, text)
            if bad:
                found[prefix + name] = bad

    walk(xp, "", FUNCTIONS)
    walk(getattr(xp, "linalg", None), "linalg.", LINALG)
    walk(getattr(xp, "fft", None), "fft.", FFT)
    for name in CONSTANTS + DTYPES + ("__array_api_version__",):
        if not hasattr(xp, name):
            found[name] = ["missing"]
    if getattr(xp, "__array_api_version__", SPEC_VERSION) != SPEC_VERSION:
        found["__array_api_version__"] = [f"is {xp.__array_api_version__!r}"]
    array_type = type(xp.asarray(0))
    for name in ARRAY_ATTRIBUTES + ARRAY_OPERATORS:
        if not hasattr(array_type, name):
            found["ndarray." + name] = ["missing"]
    for name, text in ARRAY_METHODS.items():
        fn = getattr(array_type, name, None)
        if fn is None:
            found["ndarray." + name] = ["missing"]
            continue
        try:
            inspect.signature(fn)
        except (TypeError, ValueError):
            continue  # slot wrappers of C types: the arity is fixed by the slot
        bad = signature_problems(fn, text)
        if bad:
            found["ndarray." + name] = bad
    return found


def main():
    found = problems()
    total = len(FUNCTIONS) + len(LINALG) + len(FFT)
    missing = sorted(k for k, v in found.items() if v == ["missing"])
    wrong = {k: v for k, v in found.items() if v != ["missing"]}
    print(f"Array API {SPEC_VERSION}: {total} functions (main namespace, linalg, fft), "
          f"{len(CONSTANTS) + len(DTYPES)} constants and dtypes, the array object.")
    print(f"missing ({len(missing)}): {', '.join(missing) or '-'}")
    print(f"signatures that do not accept every call of the standard ({len(wrong)}):")
    for k in sorted(wrong):
        print(f"  {k}: {'; '.join(wrong[k])}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
