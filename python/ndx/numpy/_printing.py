"""NumPy's print options and array-to-text functions: set_printoptions, get_printoptions,
printoptions, array2string, array_str and array_repr.

The formatting is C++ (src/core/format.cc, NumPy 2.4's layout); here NumPy's keywords are
checked and mapped onto the core's option tuple (precision, threshold, edgeitems, linewidth,
suppress, floatmode, sign, nanstr, infstr). Two of NumPy's options have no place in that tuple:
`formatter` (callables that format the elements) and `legacy` (NumPy 1.13 ... 2.2's text).
While either is in effect, arrays print through the Python path below (ndarray's __repr__ and
__str__ are swapped for Python ones, and put back when both are off, so the default printing
costs nothing extra): the elements are formatted by the callables, by the core (ints, bools,
and floats outside legacy mode) or by `_FloatFormat` (floats in legacy mode), and laid out
as NumPy's array2string lays them out.
"""
import contextlib
import math
import numbers
import operator
import sys
import warnings

from .. import _core

_FIELDS = ("precision", "threshold", "edgeitems", "linewidth", "suppress", "floatmode", "sign",
           "nanstr", "infstr")
_INT64_MAX = 2**63 - 1

# NumPy's legacy modes, as the numbers NumPy compares (sys.maxsize: no legacy mode).
_LEGACY_CODES = {"1.13": 113, "1.21": 121, "1.25": 125, "2.1": 201, "2.2": 202}
_LEGACY_NAMES = {113: "1.13", 121: "1.21", 125: "1.25", 201: "2.1", 202: "2.2",
                 sys.maxsize: False}
_NO_LEGACY = sys.maxsize

# The options the core's tuple does not hold (process-wide, like the core's).
_extra = {"formatter": None, "legacy": _NO_LEGACY}


def _merged(who, precision=None, threshold=None, edgeitems=None, linewidth=None, suppress=None,
            nanstr=None, infstr=None, sign=None, floatmode=None):
    """The current options with the given ones replaced, each checked as NumPy checks it."""
    opts = dict(zip(_FIELDS, _core._get_print_options()))
    if precision is not None:
        try:
            opts["precision"] = operator.index(precision)
        except TypeError:
            raise TypeError(f"[{who}] precision must be an integer, got "
                            f"{type(precision).__name__}") from None
    if threshold is not None:
        if not isinstance(threshold, numbers.Number) or isinstance(threshold, bool):
            raise TypeError(f"[{who}] threshold must be numeric, got {type(threshold).__name__}")
        if math.isnan(threshold):
            raise ValueError(f"[{who}] threshold must be non-NAN, try sys.maxsize for "
                             "untruncated representation")
        opts["threshold"] = _INT64_MAX if threshold >= _INT64_MAX else int(threshold)
    for name, value in (("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            try:
                opts[name] = operator.index(value)
            except TypeError:
                raise TypeError(f"[{who}] {name} must be an integer, got "
                                f"{type(value).__name__}") from None
    if suppress is not None:
        opts["suppress"] = bool(suppress)
    for name, value in (("nanstr", nanstr), ("infstr", infstr)):
        if value is not None:
            if not isinstance(value, str):
                raise TypeError(f"[{who}] {name} must be a str, got {type(value).__name__}")
            opts[name] = value
    if sign is not None:
        if isinstance(sign, bool):  # NumPy's old spelling
            sign = "+" if sign else "-"
        if sign not in ("-", "+", " "):
            raise ValueError(f"[{who}] sign option must be one of ' ', '+', or '-', got {sign!r}")
        opts["sign"] = sign
    if floatmode is not None:
        if floatmode not in ("fixed", "unique", "maxprec", "maxprec_equal"):
            raise ValueError(f'[{who}] floatmode option must be one of "fixed", "unique", '
                             f'"maxprec", "maxprec_equal", got {floatmode!r}')
        opts["floatmode"] = floatmode
    return opts


def _legacy_code(legacy):
    """NumPy's number for a legacy= value (None: unchanged). As NumPy: False and the known
    version strings map to their numbers, another value equal to False (0) warns a
    FutureWarning and means False, and any other value warns a UserWarning and is kept as it
    is, so that printing then fails where NumPy's does (TypeError for a str, KeyError in
    get_printoptions)."""
    if legacy is None:
        return None
    if legacy is False:
        return _NO_LEGACY
    if legacy == False:  # noqa: E712 (NumPy's deprecated spelling: 0, 0.0)
        warnings.warn(f"Passing `legacy={legacy!r}` is deprecated.", FutureWarning,
                      stacklevel=3)
        return _NO_LEGACY
    for name, code in _LEGACY_CODES.items():
        if legacy == name:
            return code
    warnings.warn("legacy printing option can currently only be '1.13', '1.21', '1.25', "
                  "'2.1', '2.2' or `False`", stacklevel=3)
    return legacy


def _unsupported(who, override_repr=None):
    if override_repr is not None:
        raise NotImplementedError(f"[{who}] override_repr= is not supported by ndx")


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     suppress=None, nanstr=None, infstr=None, formatter=None, sign=None,
                     floatmode=None, *, legacy=None, override_repr=None):
    """Sets how ndx prints arrays, as numpy.set_printoptions (options left None keep their
    value): precision, threshold (sys.maxsize or inf: never summarize), edgeitems, linewidth,
    suppress, nanstr, infstr, sign ('-', '+', ' ') and floatmode ('maxprec', 'fixed',
    'unique', 'maxprec_equal'). formatter, legacy as NumPy's; override_repr raises
    NotImplementedError. The options are process-wide (NumPy's are per context).

    formatter is a dict of callables keyed by NumPy's keys ('bool', 'int', 'float',
    'complexfloat', ... and the groups 'all', 'int_kind', 'float_kind', 'complex_kind'); it is
    reset by every call, as NumPy's. bfloat16 and float16 take 'float' (their elements reach
    the callable as NumPy float32 / float16 scalars). legacy is False, '1.13', '1.21', '1.25',
    '2.1' or '2.2'; another value warns and then fails where NumPy's fails.
    """
    _unsupported("set_printoptions", override_repr)
    opts = _merged("set_printoptions", precision, threshold, edgeitems, linewidth, suppress,
                   nanstr, infstr, sign, floatmode)
    code = _legacy_code(legacy)
    new_legacy = _extra["legacy"] if code is None else code
    if new_legacy == 113:  # NumPy 1.13 printed no '+' / ' ' signs
        opts["sign"] = "-"
    _core._set_print_options(tuple(opts[f] for f in _FIELDS))  # checks the rest
    _extra["formatter"] = _checked_formatter(formatter, "set_printoptions")
    _extra["legacy"] = new_legacy
    _sync_hooks()


def get_printoptions():
    """The current print options as numpy.get_printoptions's dict."""
    opts = dict(zip(_FIELDS, _core._get_print_options()))
    return {"edgeitems": opts["edgeitems"], "threshold": opts["threshold"],
            "floatmode": opts["floatmode"], "precision": opts["precision"],
            "suppress": opts["suppress"], "linewidth": opts["linewidth"],
            "nanstr": opts["nanstr"], "infstr": opts["infstr"], "sign": opts["sign"],
            "formatter": _extra["formatter"], "legacy": _LEGACY_NAMES[_extra["legacy"]],
            "override_repr": None}


@contextlib.contextmanager
def printoptions(*args, **kwargs):
    """A `with` block under set_printoptions(*args, **kwargs); the options come back after."""
    saved = _core._get_print_options()
    saved_extra = dict(_extra)
    try:
        set_printoptions(*args, **kwargs)
        yield get_printoptions()
    finally:
        _core._set_print_options(saved)
        _extra.update(saved_extra)
        _sync_hooks()


def _array(a, who):
    import ndx.numpy as _np
    if isinstance(a, _np.ndarray):
        return a
    try:
        return _np.asarray(a)
    except Exception as e:
        raise TypeError(f"[{who}] expects an array, got {type(a).__name__}") from e


def _checked_formatter(formatter, who):
    """formatter itself when it is None or a dict of callables (or None values); TypeError
    otherwise, at once (NumPy takes anything here and fails with AttributeError / TypeError at
    the next print, for every array)."""
    if formatter is None:
        return None
    if not isinstance(formatter, dict):
        raise TypeError(f"[{who}] formatter must be a dict of callables keyed by dtype kind, "
                        f"got {type(formatter).__name__}")
    for key, fn in formatter.items():
        if fn is not None and not callable(fn):
            raise TypeError(f"[{who}] formatter[{key!r}] must be callable, got "
                            f"{type(fn).__name__}")
    return formatter


def _python_path(formatter, legacy):
    return formatter is not None or legacy != _NO_LEGACY


def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ",
                 prefix="", formatter=None, threshold=None, edgeitems=None, sign=None,
                 floatmode=None, suffix="", *, legacy=None):
    """a's elements as numpy.array2string writes them: bracketed, joined by separator, lines
    wrapped at max_line_width as if `prefix` came before the first line and `suffix` after
    the last (neither is included).

    formatter and legacy default to the print options' (see set_printoptions)."""
    if not isinstance(separator, str) or not isinstance(prefix, str) or \
            not isinstance(suffix, str):
        raise TypeError("[array2string] separator, prefix and suffix must be str")
    opts = _merged("array2string", precision, threshold, edgeitems, max_line_width,
                   suppress_small, None, None, sign, floatmode)
    code = _legacy_code(legacy)
    legacy = _extra["legacy"] if code is None else code
    formatter = _extra["formatter"] if formatter is None else \
        _checked_formatter(formatter, "array2string")
    a = _array(a, "array2string")
    if _python_path(formatter, legacy):
        return _to_string(a, opts, separator, len(prefix), len(suffix), formatter, legacy)
    return _core._array_text(a, 0, tuple(opts[f] for f in _FIELDS), separator, len(prefix),
                             len(suffix))


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """str(a) with the given options (numpy.array_str)."""
    opts = _merged("array_str", precision, None, None, max_line_width, suppress_small)
    a = _array(a, "array_str")
    if _python_path(_extra["formatter"], _extra["legacy"]):
        return _str(a, opts)
    return _core._array_text(a, 1, tuple(opts[f] for f in _FIELDS), " ", 0, 0)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """repr(arr) with the given options (numpy.array_repr)."""
    opts = _merged("array_repr", precision, None, None, max_line_width, suppress_small)
    arr = _array(arr, "array_repr")
    if _python_path(_extra["formatter"], _extra["legacy"]):
        return _repr(arr, opts)
    return _core._array_text(arr, 2, tuple(opts[f] for f in _FIELDS), ", ", 0, 0)


# ------------------------------------------------------------------ ndarray's str / repr
_CORE_REPR = _core.ndarray.__dict__["__repr__"]
_CORE_STR = _core.ndarray.__dict__["__str__"]


def _ndarray_repr(self):
    return _repr(self, dict(zip(_FIELDS, _core._get_print_options())))


def _ndarray_str(self):
    return _str(self, dict(zip(_FIELDS, _core._get_print_options())))


def _sync_hooks():
    """ndarray's str / repr: the core's own slots unless a formatter or a legacy mode is set
    (putting the slot wrappers back restores the C slots, so default printing stays C)."""
    if _python_path(_extra["formatter"], _extra["legacy"]):
        _core.ndarray.__repr__ = _ndarray_repr
        _core.ndarray.__str__ = _ndarray_str
    else:
        _core.ndarray.__repr__ = _CORE_REPR
        _core.ndarray.__str__ = _CORE_STR


# ------------------------------------------------------------------ the Python path
_IMPLIED = ("float64", "int64", "bool", "complex128")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_COMPLEX = ("complex64", "complex128")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
# finfo(t).precision: the cutoff for scientific notation is 10 ** min(8, it) (NumPy 2.3+).
_DECIMAL_PRECISION = {"float16": 3, "bfloat16": 2, "float32": 6, "float64": 15}


def _key_of(dtype):
    """NumPy's formatter keys for a dtype: the specific one, then its group's."""
    if dtype == "bool":
        return ("bool", "all")
    if dtype in _INTS:
        return ("int", "int_kind", "all")
    if dtype in _FLOATS:  # bfloat16 and float16 take 'float', as NumPy's float16
        return ("float", "float_kind", "all")
    return ("complexfloat", "complex_kind", "all")


def _element_formatter(dtype, formatter):
    """The callable that formats dtype's elements, or None: a specific key wins over its
    group's key ('int_kind', 'float_kind', 'complex_kind'), which wins over 'all'; keys whose
    value is None count as absent."""
    if formatter is None:
        return None
    keys = [k for k in formatter.keys() if formatter[k] is not None]
    for key in _key_of(dtype):
        if key in keys:
            return formatter[key]
    return None


def _opts_tuple(opts, **changes):
    o = dict(opts, **changes)
    return tuple(o[f] for f in _FIELDS)


def _core_words(shown, opts):
    """The core's formatted elements of `shown` (its format is fitted to all of them), in C
    order: one unwrapped line joined by a separator that no element contains."""
    flat = shown if shown.ndim == 1 else shown.reshape(-1)
    text = _core._array_text(flat, 0, _opts_tuple(opts, threshold=_INT64_MAX,
                                                  linewidth=_INT64_MAX), "\x1f", 0, 0)
    return text[1:-1].split("\x1f")


def _corners(a, edge):
    """NumPy's summary data: the first and last `edge` items along every axis longer than
    2 * edge (edge 0 keeps the whole axis, whose last item NumPy prints after '...')."""
    import ndx.numpy as _np
    cur = a
    for axis in range(a.ndim):
        if cur.shape[axis] <= 2 * edge:
            continue
        head = (slice(None),) * axis
        lead = cur[head + (slice(None, edge),)]
        trail = cur[head + (slice(-edge, None) if edge else slice(None),)]
        cur = _np.concatenate([lead, trail], axis=axis)
    return cur


def _words(shown, opts, formatter, legacy):
    """The shown elements' texts, in C order."""
    dtype = str(shown.dtype)
    fn = _element_formatter(dtype, formatter)
    if fn is not None:
        host = shown.asnumpy()
        return [fn(host[()])] if host.ndim == 0 else [fn(x) for x in host.flat]
    if legacy <= 202 and (dtype in _FLOATS or dtype in _COMPLEX):
        return _legacy_float_words(shown, opts, legacy)
    if shown.ndim == 0:
        return [_core._array_text(shown, 0, _opts_tuple(opts), " ", 0, 0)]
    return _core_words(shown, opts)


def _to_string(a, opts, separator, prefix_len, suffix_len, formatter, legacy):
    """numpy.array2string's text of `a` under `opts`, a formatter and a legacy mode."""
    if legacy <= 113 and a.ndim == 0:
        return repr(a.item())
    width = opts["linewidth"]
    if legacy > 113:
        width -= suffix_len
    if a.size == 0:
        return "[]"
    summarize = a.size > opts["threshold"]
    edge = opts["edgeitems"]
    shown = _corners(a, edge) if summarize else a
    words = _words(shown, opts, formatter, legacy)
    if a.ndim == 0:
        return words[0]
    return _Layout(words, shown.shape, a.shape, summarize, edge, separator, legacy).text(
        " " * (prefix_len + 1), width)


def _str(a, opts):
    legacy = _extra["legacy"]
    if legacy <= 113 and a.ndim == 0:
        return str(a.item())
    if a.ndim == 0:  # the scalar's str: no formatter, no options
        if legacy <= 202 and str(a.dtype) in _FLOATS:
            return _legacy_scalar_str(a.item(), str(a.dtype))
        return _core._array_text(a, 1, _opts_tuple(opts), " ", 0, 0)
    return _to_string(a, opts, " ", 0, 0, _extra["formatter"], legacy)


def _repr(a, opts):
    legacy = _extra["legacy"]
    prefix = "array("
    if legacy <= 113 and a.ndim == 0:
        body = repr(a.item())
    else:
        body = _to_string(a, opts, ", ", len(prefix), 1, _extra["formatter"], legacy)
    dtype = str(a.dtype)
    extras = []
    if (a.size == 0 and tuple(a.shape) != (0,)) or (legacy > 210 and
                                                     a.size > opts["threshold"]):
        extras.append(f"shape={tuple(a.shape)}")
    implied = dtype in _IMPLIED and not (legacy <= 113 and dtype == "bool")
    if not implied or a.size == 0:
        extras.append(f"dtype={dtype}")
    device = a.device
    if getattr(device, "device_type", "cpu") != "cpu":
        extras.append(f"device={device}")
    if not extras:
        return prefix + body + ")"
    text = prefix + body + ","
    extra = ", ".join(extras) + ")"
    last_line = len(text) - (text.rfind("\n") + 1)
    spacer = " "
    if legacy > 113 and last_line + len(extra) + 1 > opts["linewidth"]:
        spacer = "\n" + " " * len(prefix)
    return text + spacer + extra


class _Layout:
    """NumPy's _formatArray over the shown elements: hanging indents, lines wrapped at the
    width, '...' where a summarized axis skips items, multi-line elements kept aligned; legacy
    1.13's wrapping (no room kept for ']', a wrap even when it cannot help, ', ' around the
    '...')."""

    def __init__(self, words, shown_shape, shape, summarize, edge, separator, legacy):
        import numpy as onp
        self.words = onp.empty(len(words), dtype=object)
        self.words[:] = words
        self.words = self.words.reshape(tuple(shown_shape))
        self.shape = tuple(shape)
        self.summarize = summarize
        self.edge = edge
        self.separator = separator
        self.old = legacy <= 113

    def _extend(self, s, line, word, width, indent):
        wrap = len(line) + len(word) > width
        if not self.old and len(line) <= len(indent):
            wrap = False  # wrapping would not help
        if wrap:
            s += line.rstrip() + "\n"
            line = indent
        return s, line + word

    def _extend_pretty(self, s, line, word, width, indent):
        lines = word.splitlines()
        if len(lines) <= 1 or self.old:
            return self._extend(s, line, word, width, indent)
        longest = max(len(w) for w in lines)
        if len(line) + longest > width and len(line) > len(indent):
            s += line.rstrip() + "\n"
            line = indent + lines[0]
            pad = indent
        else:
            pad = " " * len(line)
            line += lines[0]
        for w in lines[1:]:
            s += line.rstrip() + "\n"
            line = pad + w
        return s, line + " " * (longest - len(lines[-1]))

    def _items(self, axis):
        """The indices shown along `axis` (negative from the end) and where '...' goes."""
        n = self.shape[axis]
        if self.summarize and 2 * self.edge < n:
            # (edge 0: NumPy still prints the last item after the '...')
            return list(range(self.edge)) + list(range(-max(self.edge, 1), 0)), self.edge
        return list(range(n)), None

    def _recurse(self, index, indent, width):
        axis = len(index)
        left = len(self.shape) - axis
        if left == 0:
            return self.words[index]
        next_indent = indent + " "
        next_width = width if self.old else width - 1
        items, dots = self._items(axis)
        s = ""
        sep = self.separator
        if left == 1:
            rsep = len(sep.rstrip())
            elem_width = width - rsep if self.old else width - max(rsep, 1)
            line = indent
            for k, i in enumerate(items):
                if k == dots:
                    s, line = self._extend(s, line, "...", elem_width, indent)
                    line += ", " if self.old else sep
                if k == len(items) - 1 and self.old:
                    elem_width = width  # 1.13 kept no room for the separator at the end
                word = self._recurse(index + (i,), next_indent, next_width)
                s, line = self._extend_pretty(s, line, word, elem_width, indent)
                if k < len(items) - 1:
                    line += sep
            s += line
        else:
            line_sep = sep.rstrip() + "\n" * (left - 1)
            for k, i in enumerate(items):
                if k == dots:
                    s += indent + "..." + (", \n" if self.old else line_sep)
                s += indent + self._recurse(index + (i,), next_indent, next_width)
                if k < len(items) - 1:
                    s += line_sep
        return "[" + s[len(indent):] + "]"

    def text(self, indent, width):
        return self._recurse((), indent, width)


# ------------------------------------------------------------------ floats in legacy modes
# NumPy's FloatingFormat as src/core/format.cc writes it, with the legacy modes' changes:
# scientific notation from 1e8 whatever the dtype (<= 2.2), and for 1.13 a space for the
# sign, all `precision` digits in scientific notation, and its left padding.

def _unique_digits(values, dtype):
    """Shortest significant digits (no trailing zeros) and decimal exponent of each |v| that
    read back as v in dtype (the core's test: a "%.*e" text, parsed, cast to dtype)."""
    out = [None] * len(values)
    todo = list(range(len(values)))
    for d in range(1, 18):
        if not todo:
            break
        texts = ["%.*e" % (d - 1, abs(values[i])) for i in todo]
        back = [float(t) for t in texts]
        if dtype == "float64":
            same = [b == abs(values[i]) for b, i in zip(back, todo)]
        else:
            cast = _cast(back, dtype)
            same = [c == abs(values[i]) for c, i in zip(cast, todo)]
        rest = []
        for t, ok, i in zip(texts, same, todo):
            if ok or d == 17:
                out[i] = _split_exponential(t, strip=True)
            else:
                rest.append(i)
        todo = rest
    return out


def _cast(values, dtype):
    """float64 values rounded to dtype (as the core rounds) and back to float64."""
    import ndx.numpy as _np
    arr = _np.array(values, dtype="float64").astype(dtype).astype("float64")
    return arr.asnumpy().tolist()


def _split_exponential(text, strip=False):
    mantissa, _, exp = text.partition("e")
    digits = "".join(ch for ch in mantissa if ch.isdigit())
    if strip:
        digits = digits.rstrip("0") or "0"
    return digits, int(exp)


def _exact_digits(unique, precision, min_digits, frac_len):
    if not unique:
        return max(precision, 0)
    if precision >= 0 and frac_len > precision:
        return precision
    return min_digits if min_digits > frac_len else -1


def _trim(frac, trim):
    """Dragon4's trim modes: 'k' keeps the zeros, '.' trims them to the point, '0' leaves one,
    '-' drops the point too. Returns (frac, point)."""
    if trim == "k":
        return frac, True
    frac = frac.rstrip("0")
    if trim == "0" and not frac:
        frac = "0"
    return frac, not (trim == "-" and not frac)


def _sign_of(v, sign):
    return "-" if math.copysign(1.0, v) < 0 else ("+" if sign == "+" else "")


def _positional(v, uniq, precision, unique, trim, sign, min_digits=0):
    """(int part with sign, fraction, point) of format_float_positional."""
    digits, e10 = uniq if unique else ("", 0)
    frac_len = max(0, len(digits) - 1 - e10) if unique else 0
    exact_at = _exact_digits(unique, precision, min_digits, frac_len)
    if exact_at >= 0:
        text = "%.*f" % (exact_at, abs(v))
    elif e10 >= 0:
        n_int = e10 + 1
        text = digits[:n_int] + "0" * max(0, n_int - len(digits)) + "." + digits[n_int:]
    else:
        text = "0." + "0" * (-e10 - 1) + digits
    int_part, _, frac = text.partition(".")
    frac, point = _trim(frac, trim)
    return _sign_of(v, sign) + int_part, frac, point, ""


def _scientific(v, uniq, precision, unique, trim, sign, exp_digits, min_digits=0):
    """(int part with sign, fraction, point, exponent) of format_float_scientific."""
    digits, e10 = uniq if unique else ("", 0)
    exact_at = _exact_digits(unique, precision, min_digits, len(digits) - 1)
    if exact_at >= 0:
        digits, e10 = _split_exponential("%.*e" % (exact_at, abs(v)))
    frac, point = _trim(digits[1:], trim)
    exp = str(abs(e10)).rjust(max(exp_digits, 2), "0")
    return _sign_of(v, sign) + digits[0], frac, point, "e" + ("-" if e10 < 0 else "+") + exp


class _FloatFormat:
    def __init__(self, data, dtype, opts, sign, legacy, floatmode=None):
        floatmode = floatmode or opts["floatmode"]
        if legacy <= 113 and sign == "-":  # 1.13 kept a space for the sign (not on 0-d)
            sign = " "
        self.opts, self.sign, self.legacy = opts, sign, legacy
        self.precision = -1 if floatmode == "unique" else opts["precision"]
        finite = [v for v in data if math.isfinite(v)]
        nonzero = [abs(v) for v in finite if v != 0]
        self.exp = False
        if nonzero:
            hi, lo = max(nonzero), min(nonzero)
            cutoff = 1e8 if legacy <= 202 else 10.0 ** min(8, _DECIMAL_PRECISION[dtype])
            self.exp = hi >= cutoff or (not opts["suppress"] and (lo < 1e-4 or hi / lo > 1e3))
        uniq = _unique_digits(finite, dtype)
        self.uniq = dict(zip(finite, uniq))
        self.pad_left = self.pad_right = 0
        self.exp_size, self.min_digits, self.unique, self.trim = -1, 0, True, "."
        fixed = floatmode == "fixed"
        if not finite:
            pass
        elif self.exp:
            self.unique = not fixed and legacy > 113
            if not self.unique and self.precision < 0:  # 1.13 with floatmode 'unique'
                raise TypeError("in non-unique mode `precision` must be supplied")
            trim = "." if self.unique else "k"
            parts = [_scientific(v, u, self.precision, self.unique, trim, sign, -1)
                     for v, u in zip(finite, uniq)]
            frac = max(len(p[1]) for p in parts)
            self.exp_size = max(len(p[3]) for p in parts) - 2
            self.trim, self.precision, self.min_digits = "k", frac, frac
            self.pad_left = 3 if legacy <= 113 else max(len(p[0]) for p in parts)
            self.pad_right = self.exp_size + 2 + frac
        else:
            self.unique = not fixed
            parts = [_positional(v, u, self.precision, self.unique, "k" if fixed else ".",
                                 sign) for v, u in zip(finite, uniq)]
            if legacy <= 113:
                self.pad_left = 1 + max(len(p[0].lstrip("-+")) for p in parts)
            else:
                self.pad_left = max(len(p[0]) for p in parts)
            self.pad_right = max(len(p[1]) for p in parts)
            if floatmode in ("fixed", "maxprec_equal"):
                self.precision = self.min_digits = self.pad_right
                self.trim = "k"
        if legacy > 113 and sign == " " and not any(math.copysign(1, v) < 0 for v in finite):
            self.pad_left += 1
        if len(finite) != len(data):
            neg_inf = sign != "-" or any(math.isinf(v) and v < 0 for v in data)
            offset = self.pad_right + 1
            self.pad_left = max(self.pad_left, len(opts["nanstr"]) - offset,
                                len(opts["infstr"]) + neg_inf - offset)

    def __call__(self, v):
        if not math.isfinite(v):
            if math.isnan(v):
                s = ("+" if self.sign == "+" else "") + self.opts["nanstr"]
            else:
                s = ("-" if v < 0 else "+" if self.sign == "+" else "") + self.opts["infstr"]
            return s.rjust(self.pad_left + self.pad_right + 1)
        u = self.uniq[v]
        if self.exp:
            p = _scientific(v, u, self.precision, self.unique, self.trim, self.sign,
                            self.exp_size, self.min_digits)
        else:
            p = _positional(v, u, self.precision, self.unique, self.trim, self.sign,
                            self.min_digits)
        s = p[0].rjust(self.pad_left) + ("." if p[2] else "") + p[1]
        if not self.exp:
            s = s.ljust(len(s) + self.pad_right - len(p[1]))
        return s + p[3]


def _legacy_float_words(shown, opts, legacy):
    import numpy as onp
    dtype = str(shown.dtype)
    if dtype in _FLOATS:
        vals = shown.astype("float64").asnumpy().ravel().tolist()
        fmt = _FloatFormat(vals, dtype, opts, opts["sign"], legacy)
        return [fmt(v) for v in vals]
    host = shown.asnumpy().ravel()
    part = "float32" if dtype == "complex64" else "float64"
    re = host.real.astype(onp.float64).tolist()
    im = host.imag.astype(onp.float64).tolist()
    modes = ("maxprec_equal", "maxprec") if legacy <= 113 else (None, None)
    real_fmt = _FloatFormat(re, part, opts, opts["sign"], legacy, modes[0])
    imag_fmt = _FloatFormat(im, part, opts, "+", legacy, modes[1])
    out = []
    for r, i in zip(re, im):
        text = imag_fmt(i)
        end = len(text.rstrip())
        out.append(real_fmt(r) + text[:end] + "j" + text[end:])
    return out


def _legacy_scalar_str(v, dtype):
    """str of a float scalar before NumPy 2.3: positional for 1e-4 <= |v| < 1e16 (or 0),
    else scientific, whatever the dtype."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    uniq = _unique_digits([v], dtype)[0]
    if v == 0 or 1e-4 <= abs(v) < 1e16:
        p = _positional(v, uniq, -1, True, "0", "-")
    else:
        p = _scientific(v, uniq, -1, True, "-", "-", -1)
    return p[0] + ("." if p[2] else "") + p[1] + p[3]
