"""NumPy's print options and array-to-text functions: set_printoptions, get_printoptions,
printoptions, array2string, array_str and array_repr. The formatting is C++
(src/core/format.cc, NumPy 2's layout); here NumPy's keywords are checked and mapped onto the
core's option tuple (precision, threshold, edgeitems, linewidth, suppress, floatmode, sign,
nanstr, infstr)."""
import contextlib
import math
import numbers
import operator

from .. import _core

_FIELDS = ("precision", "threshold", "edgeitems", "linewidth", "suppress", "floatmode", "sign",
           "nanstr", "infstr")
_INT64_MAX = 2**63 - 1


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


def _unsupported(who, formatter=None, legacy=None, override_repr=None):
    if formatter is not None:
        raise NotImplementedError(f"[{who}] formatter= is not supported by ndx")
    if legacy not in (None, False):
        raise NotImplementedError(f"[{who}] legacy={legacy!r} is not supported by ndx (NumPy 2's "
                                  "printing only)")
    if override_repr is not None:
        raise NotImplementedError(f"[{who}] override_repr= is not supported by ndx")


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     suppress=None, nanstr=None, infstr=None, formatter=None, sign=None,
                     floatmode=None, *, legacy=None, override_repr=None):
    """Sets how ndx prints arrays, as numpy.set_printoptions (options left None keep their
    value): precision, threshold (sys.maxsize or inf: never summarize), edgeitems, linewidth,
    suppress, nanstr, infstr, sign ('-', '+', ' ') and floatmode ('maxprec', 'fixed',
    'unique', 'maxprec_equal'). formatter, legacy and override_repr raise
    NotImplementedError. The options are process-wide (NumPy's are per context)."""
    _unsupported("set_printoptions", formatter, legacy, override_repr)
    opts = _merged("set_printoptions", precision, threshold, edgeitems, linewidth, suppress,
                   nanstr, infstr, sign, floatmode)
    _core._set_print_options(tuple(opts[f] for f in _FIELDS))


def get_printoptions():
    """The current print options as numpy.get_printoptions's dict."""
    opts = dict(zip(_FIELDS, _core._get_print_options()))
    return {"edgeitems": opts["edgeitems"], "threshold": opts["threshold"],
            "floatmode": opts["floatmode"], "precision": opts["precision"],
            "suppress": opts["suppress"], "linewidth": opts["linewidth"],
            "nanstr": opts["nanstr"], "infstr": opts["infstr"], "sign": opts["sign"],
            "formatter": None, "legacy": False, "override_repr": None}


@contextlib.contextmanager
def printoptions(*args, **kwargs):
    """A `with` block under set_printoptions(*args, **kwargs); the options come back after."""
    saved = _core._get_print_options()
    try:
        set_printoptions(*args, **kwargs)
        yield get_printoptions()
    finally:
        _core._set_print_options(saved)


def _array(a, who):
    import ndx.numpy as _np
    if isinstance(a, _np.ndarray):
        return a
    try:
        return _np.asarray(a)
    except Exception as e:
        raise TypeError(f"[{who}] expects an array, got {type(a).__name__}") from e


def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ",
                 prefix="", formatter=None, threshold=None, edgeitems=None, sign=None,
                 floatmode=None, suffix="", *, legacy=None):
    """a's elements as numpy.array2string writes them: bracketed, joined by separator, lines
    wrapped at max_line_width as if `prefix` came before the first line and `suffix` after
    the last (neither is included)."""
    _unsupported("array2string", formatter, legacy)
    if not isinstance(separator, str) or not isinstance(prefix, str) or \
            not isinstance(suffix, str):
        raise TypeError("[array2string] separator, prefix and suffix must be str")
    opts = _merged("array2string", precision, threshold, edgeitems, max_line_width,
                   suppress_small, None, None, sign, floatmode)
    return _core._array_text(_array(a, "array2string"), 0, tuple(opts[f] for f in _FIELDS),
                             separator, len(prefix), len(suffix))


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """str(a) with the given options (numpy.array_str)."""
    opts = _merged("array_str", precision, None, None, max_line_width, suppress_small)
    return _core._array_text(_array(a, "array_str"), 1, tuple(opts[f] for f in _FIELDS), " ", 0,
                             0)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """repr(arr) with the given options (numpy.array_repr)."""
    opts = _merged("array_repr", precision, None, None, max_line_width, suppress_small)
    return _core._array_text(_array(arr, "array_repr"), 2, tuple(opts[f] for f in _FIELDS),
                             ", ", 0, 0)
