"""ABCPolyBase: NumPy's base class of the series classes (Polynomial, Chebyshev, ...) over
ndx arrays. An instance holds coef (1-d, lowest degree first), domain and window (the
interval domain is mapped linearly onto window before the basis is evaluated) and symbol."""
import abc
import numbers

import ndx.numpy as _np

from . import polyutils as pu

__all__ = ["ABCPolyBase"]


class ABCPolyBase(abc.ABC):
    """An abstract base class for immutable series classes; subclasses give the basis's
    functions (_add, _sub, _mul, _div, _pow, _val, _int, _der, _fit, _line, _roots,
    _fromroots), domain, window and basis_name."""

    __hash__ = None
    __array_ufunc__ = None  # ndarrays defer their operators to the series
    maxpower = 100
    _superscript_mapping = str.maketrans({
        "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷",
        "8": "⁸", "9": "⁹"})
    _subscript_mapping = str.maketrans({
        "0": "₀", "1": "₁", "2": "₂", "3": "₃", "4": "₄", "5": "₅", "6": "₆", "7": "₇",
        "8": "₈", "9": "₉"})
    _use_unicode = True

    @property
    def symbol(self):
        return self._symbol

    @property
    @abc.abstractmethod
    def domain(self):
        pass

    @property
    @abc.abstractmethod
    def window(self):
        pass

    @property
    @abc.abstractmethod
    def basis_name(self):
        pass

    # -------------------------------------------------------------------- comparison
    def has_samecoef(self, other):
        """True if the coefficients are the same."""
        return len(self.coef) == len(other.coef) and bool(_np.all(self.coef == other.coef))

    def has_samedomain(self, other):
        """True if the domains are the same."""
        return bool(_np.all(self.domain == other.domain))

    def has_samewindow(self, other):
        """True if the windows are the same."""
        return bool(_np.all(self.window == other.window))

    def has_sametype(self, other):
        """True if other is an instance of this class."""
        return isinstance(other, self.__class__)

    def _get_coefficients(self, other):
        if isinstance(other, ABCPolyBase):
            name = type(self).__name__
            if not isinstance(other, self.__class__):
                raise TypeError(f"[{name}] Polynomial types differ")
            if not self.has_samedomain(other):
                raise TypeError(f"[{name}] Domains differ")
            if not self.has_samewindow(other):
                raise TypeError(f"[{name}] Windows differ")
            if self.symbol != other.symbol:
                raise ValueError(f"[{name}] Polynomial symbols differ")
            return other.coef
        return other

    def __init__(self, coef, domain=None, window=None, symbol="x"):
        name = type(self).__name__
        [coef] = pu.as_series([coef], trim=False)
        self.coef = coef
        if domain is not None:
            [domain] = pu.as_series([domain], trim=False)
            if len(domain) != 2:
                raise ValueError(f"[{name}] Domain has wrong number of elements.")
            self.domain = domain
        if window is not None:
            [window] = pu.as_series([window], trim=False)
            if len(window) != 2:
                raise ValueError(f"[{name}] Window has wrong number of elements.")
            self.window = window
        if not isinstance(symbol, str):
            raise TypeError(f"[{name}] Symbol must be a non-empty string")
        if not symbol.isidentifier():
            raise ValueError(f"[{name}] Symbol string must be a valid Python identifier")
        self._symbol = symbol

    # ---------------------------------------------------------------------- printing
    def __repr__(self):
        coef = repr(self.coef)[6:-1]
        domain = repr(self.domain)[6:-1]
        window = repr(self.window)[6:-1]
        name = self.__class__.__name__
        return (f"{name}({coef}, domain={domain}, window={window}, "
                f"symbol='{self.symbol}')")

    def __format__(self, fmt_str):
        if fmt_str == "":
            return self.__str__()
        if fmt_str not in ("ascii", "unicode"):
            raise ValueError(f"Unsupported format string '{fmt_str}' passed to "
                             f"{self.__class__}.__format__. Valid options are 'ascii' and "
                             f"'unicode'")
        if fmt_str == "ascii":
            return self._generate_string(self._str_term_ascii)
        return self._generate_string(self._str_term_unicode)

    def __str__(self):
        if self._use_unicode:
            return self._generate_string(self._str_term_unicode)
        return self._generate_string(self._str_term_ascii)

    def _generate_string(self, term_method):
        linewidth = max(_np.get_printoptions().get("linewidth", 75), 1)
        coefs = self.coef.asnumpy()  # (text only: the numbers as NumPy formats them)
        out = pu.format_float(coefs[0])
        off, scale = self.mapparms()
        scaled_symbol, needs_parens = self._format_term(pu.format_float, off, scale)
        if needs_parens:
            scaled_symbol = "(" + scaled_symbol + ")"
        for i, coef in enumerate(coefs[1:]):
            out += " "
            power = str(i + 1)
            try:
                if coef >= 0:
                    next_term = "+ " + pu.format_float(coef, parens=True)
                else:
                    next_term = "- " + pu.format_float(-coef, parens=True)
            except TypeError:
                next_term = f"+ {coef}"
            next_term += term_method(power, scaled_symbol)
            line_len = len(out.split("\n")[-1]) + len(next_term)
            if i < len(coefs[1:]) - 1:
                line_len += 2
            if line_len >= linewidth:
                next_term = next_term.replace(" ", "\n", 1)
            out += next_term
        return out

    @classmethod
    def _str_term_unicode(cls, i, arg_str):
        return f"·{cls.basis_name}{i.translate(cls._subscript_mapping)}({arg_str})"

    @classmethod
    def _str_term_ascii(cls, i, arg_str):
        return f" {cls.basis_name}_{i}({arg_str})"

    @classmethod
    def _repr_latex_term(cls, i, arg_str, needs_parens):
        return f"{{{cls.basis_name}}}_{{{i}}}({arg_str})"

    @staticmethod
    def _repr_latex_scalar(x, parens=False):
        return fr"\text{{{pu.format_float(x, parens=parens)}}}"

    def _format_term(self, scalar_format, off, scale):
        off, scale = off.asnumpy()[()], scale.asnumpy()[()]
        if off == 0 and scale == 1:
            return self.symbol, False
        if scale == 1:
            return f"{scalar_format(off)} + {self.symbol}", True
        if off == 0:
            return f"{scalar_format(scale)}{self.symbol}", True
        return f"{scalar_format(off)} + {scalar_format(scale)}{self.symbol}", True

    def _repr_latex_(self):
        off, scale = self.mapparms()
        term, needs_parens = self._format_term(self._repr_latex_scalar, off, scale)
        mute = "\\color{{LightGray}}{{{}}}".format
        parts = []
        for i, c in enumerate(self.coef.asnumpy()):
            if i == 0:
                coef_str = f"{self._repr_latex_scalar(c)}"
            elif not isinstance(c, complex) and c >= 0:
                coef_str = f" + {self._repr_latex_scalar(c, parens=True)}"
            elif not isinstance(c, complex):
                coef_str = f" - {self._repr_latex_scalar(-c, parens=True)}"
            else:
                coef_str = f" + ({self._repr_latex_scalar(c)})"
            term_str = self._repr_latex_term(i, term, needs_parens)
            part = coef_str if term_str == "1" else rf"{coef_str}\,{term_str}"
            parts.append(mute(part) if c == 0 else part)
        body = "".join(parts) if parts else "0"
        return rf"${self.symbol} \mapsto {body}$"

    # ------------------------------------------------------------ pickling, containers
    def __getstate__(self):
        ret = self.__dict__.copy()
        ret["coef"] = _np.copy(self.coef)
        ret["domain"] = _np.copy(self.domain)
        ret["window"] = _np.copy(self.window)
        ret["symbol"] = self.symbol
        return ret

    def __setstate__(self, state):
        self.__dict__ = state

    def __call__(self, arg):
        arg = pu.mapdomain(arg, self.domain, self.window)
        return self._val(arg, self.coef)

    def __iter__(self):
        return iter(self.coef)

    def __len__(self):
        return len(self.coef)

    # -------------------------------------------------------------------- arithmetic
    def _new(self, coef):
        return self.__class__(coef, self.domain, self.window, self.symbol)

    def __neg__(self):
        return self._new(-self.coef)

    def __pos__(self):
        return self

    def _binary(self, fn, other, reflected=False):
        othercoef = self._get_coefficients(other)
        try:
            coef = fn(othercoef, self.coef) if reflected else fn(self.coef, othercoef)
        except Exception:
            return NotImplemented
        return self._new(coef)

    def __add__(self, other):
        return self._binary(self._add, other)

    def __sub__(self, other):
        return self._binary(self._sub, other)

    def __mul__(self, other):
        return self._binary(self._mul, other)

    def __truediv__(self, other):
        if not isinstance(other, numbers.Number) or isinstance(other, bool):
            raise TypeError(f"unsupported types for true division: '{type(self)}', "
                            f"'{type(other)}'")
        return self.__floordiv__(other)

    def __floordiv__(self, other):
        res = self.__divmod__(other)
        return res if res is NotImplemented else res[0]

    def __mod__(self, other):
        res = self.__divmod__(other)
        return res if res is NotImplemented else res[1]

    def __divmod__(self, other):
        othercoef = self._get_coefficients(other)
        try:
            quo, rem = self._div(self.coef, othercoef)
        except ZeroDivisionError:
            raise
        except Exception:
            return NotImplemented
        return self._new(quo), self._new(rem)

    def __pow__(self, other):
        return self._new(self._pow(self.coef, other, maxpower=self.maxpower))

    def __radd__(self, other):
        return self._binary(self._add, other, reflected=True)

    def __rsub__(self, other):
        return self._binary(self._sub, other, reflected=True)

    def __rmul__(self, other):
        return self._binary(self._mul, other, reflected=True)

    def __rtruediv__(self, other):
        return NotImplemented

    def __rfloordiv__(self, other):
        res = self.__rdivmod__(other)
        return res if res is NotImplemented else res[0]

    def __rmod__(self, other):
        res = self.__rdivmod__(other)
        return res if res is NotImplemented else res[1]

    def __rdivmod__(self, other):
        try:
            quo, rem = self._div(other, self.coef)
        except ZeroDivisionError:
            raise
        except Exception:
            return NotImplemented
        return self._new(quo), self._new(rem)

    def __eq__(self, other):
        return (isinstance(other, self.__class__)
                and self.has_samedomain(other)
                and self.has_samewindow(other)
                and tuple(self.coef.shape) == tuple(other.coef.shape)
                and bool(_np.all(self.coef == other.coef))
                and self.symbol == other.symbol)

    def __ne__(self, other):
        return not self.__eq__(other)

    # ----------------------------------------------------------------------- methods
    def copy(self):
        """A copy of the series."""
        return self._new(self.coef)

    def degree(self):
        """The degree of the series (len(coef) - 1; trailing zeros count)."""
        return len(self) - 1

    def cutdeg(self, deg):
        """The series truncated to degree deg."""
        return self.truncate(deg + 1)

    def trim(self, tol=0):
        """The series without trailing coefficients of magnitude at most tol."""
        return self._new(pu.trimcoef(self.coef, tol))

    def truncate(self, size):
        """The series with its first size coefficients only."""
        isize = int(size)
        if isize != size or isize < 1:
            raise ValueError(f"[{type(self).__name__}.truncate] size must be a positive "
                             f"integer")
        return self._new(self.coef if isize >= len(self.coef) else self.coef[:isize])

    def convert(self, domain=None, kind=None, window=None):
        """The series as one of class kind with the given domain and window."""
        if kind is None:
            kind = self.__class__
        if domain is None:
            domain = kind.domain
        if window is None:
            window = kind.window
        return self(kind.identity(domain, window=window, symbol=self.symbol))

    def mapparms(self):
        """(off, scl) of the map off + scl*x from domain onto window."""
        return pu.mapparms(self.domain, self.window)

    def integ(self, m=1, k=[], lbnd=None):  # noqa: B006 (NumPy's default)
        """The m-th integral of the series (constants k, lower bound lbnd in the domain)."""
        off, scl = self.mapparms()
        lbnd = 0 if lbnd is None else off + scl * lbnd
        return self._new(self._int(self.coef, m, k, lbnd, 1.0 / scl))

    def deriv(self, m=1):
        """The m-th derivative of the series."""
        off, scl = self.mapparms()
        return self._new(self._der(self.coef, m, scl))

    def roots(self):
        """The roots of the series, in the domain."""
        return pu.mapdomain(self._roots(self.coef), self.window, self.domain)

    def linspace(self, n=100, domain=None):
        """(x, self(x)) at n equally spaced points x of domain (the series's by default)."""
        if domain is None:
            domain = self.domain
        domain = pu._to_nd(domain)
        dtype = _np.result_type(domain, _np.float64)
        x = _np.linspace(domain[0], domain[1], n, dtype=dtype)
        return x, self(x)

    @classmethod
    def fit(cls, x, y, deg, domain=None, rcond=None, full=False, w=None, window=None,
            symbol="x"):
        """The least-squares series of degree deg through (x, y); the domain is the data's
        range unless given ([] for the class's)."""
        if domain is None:
            domain = pu.getdomain(x)
            if bool(domain[0] == domain[1]):
                domain = domain + _np.asarray([-1, 1], dtype=str(domain.dtype))
        elif isinstance(domain, list) and len(domain) == 0:
            domain = cls.domain
        if window is None:
            window = cls.window
        xnew = pu.mapdomain(x, domain, window)
        res = cls._fit(xnew, y, deg, w=w, rcond=rcond, full=full)
        if full:
            coef, status = res
            return cls(coef, domain=domain, window=window, symbol=symbol), status
        return cls(res, domain=domain, window=window, symbol=symbol)

    @classmethod
    def fromroots(cls, roots, domain=[], window=None, symbol="x"):  # noqa: B006 (NumPy's)
        """The series with the given roots."""
        [roots] = pu.as_series([roots], trim=False)
        if domain is None:
            domain = pu.getdomain(roots)
        elif isinstance(domain, list) and len(domain) == 0:
            domain = cls.domain
        if window is None:
            window = cls.window
        deg = len(roots)
        off, scl = pu.mapparms(pu._to_nd(domain), pu._to_nd(window))
        rnew = off + scl * roots
        coef = cls._fromroots(rnew) / scl ** deg
        return cls(coef, domain=domain, window=window, symbol=symbol)

    @classmethod
    def identity(cls, domain=None, window=None, symbol="x"):
        """The identity x of the class, as a series on domain and window."""
        if domain is None:
            domain = cls.domain
        if window is None:
            window = cls.window
        off, scl = pu.mapparms(pu._to_nd(window), pu._to_nd(domain))
        return cls(cls._line(off, scl), domain, window, symbol)

    @classmethod
    def basis(cls, deg, domain=None, window=None, symbol="x"):
        """The basis polynomial of degree deg."""
        if domain is None:
            domain = cls.domain
        if window is None:
            window = cls.window
        ideg = int(deg)
        if ideg != deg or ideg < 0:
            raise ValueError(f"[{cls.__name__}.basis] deg must be non-negative integer")
        return cls([0] * ideg + [1], domain, window, symbol)

    @classmethod
    def cast(cls, series, domain=None, window=None):
        """The series converted to this class."""
        if domain is None:
            domain = cls.domain
        if window is None:
            window = cls.window
        return series.convert(domain, cls, window)
