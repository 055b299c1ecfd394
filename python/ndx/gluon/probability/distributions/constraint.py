"""Constraints: regions a distribution's parameters or samples must lie in. ``check(value)``
returns ``value`` unchanged when every element satisfies the constraint and raises ValueError
otherwise, through npx.constraint_check, so the check is a node of a hybridized graph too
(``constraint_check(cond) * value`` keeps it on the path to the output)."""
import numbers

from .utils import _ndx

__all__ = ["Constraint", "Real", "Boolean", "Interval", "OpenInterval", "HalfOpenInterval",
           "UnitInterval", "IntegerInterval", "IntegerOpenInterval", "IntegerHalfOpenInterval",
           "GreaterThan", "GreaterThanEq", "IntegerGreaterThan", "IntegerGreaterThanEq",
           "LessThan", "LessThanEq", "IntegerLessThan", "IntegerLessThanEq", "Positive",
           "NonNegative", "PositiveInteger", "NonNegativeInteger", "Simplex", "LowerTriangular",
           "LowerCholesky", "PositiveDefinite", "Cat", "Stack", "dependent_property",
           "is_dependent"]


def _checked(condition, message, value):
    mx = _ndx()
    if isinstance(value, numbers.Number):  # (a Python scalar parameter stays one)
        if not bool(condition):
            raise ValueError(f"{message}, got {value!r}")
        return value
    return mx.npx.constraint_check(condition, message) * value


class Constraint:
    """A region a value must lie in. Subclasses give ``_condition(value)`` (a bool array,
    broadcastable to the value) and ``_describe()`` (the words of the error message)."""

    def check(self, value, name="value"):
        """``value`` when it satisfies the constraint; raises ValueError (naming it ``name``)
        otherwise."""
        return _checked(self._condition(value),
                        f"Constraint violated: {name} should be {self._describe()}", value)

    def _condition(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not define its condition")

    def _describe(self):
        return type(self).__name__

    def __repr__(self):
        return f"{type(self).__name__}()"


class _Dependent(Constraint):
    """Placeholder for a support that depends on the distribution's parameters."""

    def check(self, value, name="value"):
        raise ValueError(f"Cannot validate {name} against a dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property on instances (the support computed from the parameters) that reads as a
    dependent constraint on the class."""


dependent_property = _DependentProperty


class Real(Constraint):
    """Real numbers (no NaN)."""

    def _condition(self, value):
        return value == value  # noqa: PLR0124 (False exactly at NaN)

    def _describe(self):
        return "a real number (not NaN)"


class Boolean(Constraint):
    """0 or 1."""

    def _condition(self, value):
        return (value == 0) | (value == 1)

    def _describe(self):
        return "either 0 or 1"


class _Bounded(Constraint):
    """A region given by a lower and/or an upper bound, open or closed, real or integer."""

    _integer = False
    _lower_open = False
    _upper_open = False

    def __init__(self, lower_bound=None, upper_bound=None):
        self._lower_bound = lower_bound
        self._upper_bound = upper_bound

    def _condition(self, value):
        cond = None

        def both(a, b):
            return b if a is None else a & b

        if self._integer:
            cond = both(cond, value % 1 == 0)
        if self._lower_bound is not None:
            lo = self._lower_bound
            cond = both(cond, value > lo if self._lower_open else value >= lo)
        if self._upper_bound is not None:
            hi = self._upper_bound
            cond = both(cond, value < hi if self._upper_open else value <= hi)
        return cond

    def _describe(self):
        parts = ["an integer"] if self._integer else []
        if self._lower_bound is not None:
            parts.append(f"{'>' if self._lower_open else '>='} {self._lower_bound}")
        if self._upper_bound is not None:
            parts.append(f"{'<' if self._upper_open else '<='} {self._upper_bound}")
        return " and ".join(parts)

    def __repr__(self):
        return f"{type(self).__name__}({self._describe()})"


class Interval(_Bounded):
    """[lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound):
        super().__init__(lower_bound, upper_bound)


class OpenInterval(Interval):
    """(lower_bound, upper_bound)."""

    _lower_open = _upper_open = True


class HalfOpenInterval(Interval):
    """[lower_bound, upper_bound)."""

    _upper_open = True


class UnitInterval(Interval):
    """[0, 1]."""

    def __init__(self):
        super().__init__(0, 1)


class IntegerInterval(Interval):
    """Integers in [lower_bound, upper_bound]."""

    _integer = True


class IntegerOpenInterval(IntegerInterval):
    """Integers in (lower_bound, upper_bound)."""

    _lower_open = _upper_open = True


class IntegerHalfOpenInterval(IntegerInterval):
    """Integers in [lower_bound, upper_bound)."""

    _upper_open = True


class GreaterThan(_Bounded):
    """> lower_bound."""

    _lower_open = True

    def __init__(self, lower_bound):
        super().__init__(lower_bound, None)


class GreaterThanEq(GreaterThan):
    """>= lower_bound."""

    _lower_open = False


class IntegerGreaterThan(GreaterThan):
    """Integers > lower_bound."""

    _integer = True


class IntegerGreaterThanEq(GreaterThanEq):
    """Integers >= lower_bound."""

    _integer = True


class LessThan(_Bounded):
    """< upper_bound."""

    _upper_open = True

    def __init__(self, upper_bound):
        super().__init__(None, upper_bound)


class LessThanEq(LessThan):
    """<= upper_bound."""

    _upper_open = False


class IntegerLessThan(LessThan):
    """Integers < upper_bound."""

    _integer = True


class IntegerLessThanEq(LessThanEq):
    """Integers <= upper_bound."""

    _integer = True


class Positive(GreaterThan):
    """> 0."""

    def __init__(self):
        super().__init__(0)


class NonNegative(GreaterThanEq):
    """>= 0."""

    def __init__(self):
        super().__init__(0)


class PositiveInteger(IntegerGreaterThan):
    """Integers > 0."""

    def __init__(self):
        super().__init__(0)


class NonNegativeInteger(IntegerGreaterThanEq):
    """Integers >= 0."""

    def __init__(self):
        super().__init__(0)


class Simplex(Constraint):
    """Non-negative along the last axis, summing to 1 there (within 1e-6)."""

    def _condition(self, value):
        np = _ndx().np
        return np.all(value >= 0, axis=-1) & (np.abs(value.sum(axis=-1) - 1) < 1e-6)

    def _describe(self):
        return "on the simplex"


class LowerTriangular(Constraint):
    """Square lower-triangular matrices."""

    def _condition(self, value):
        return _ndx().np.tril(value) == value

    def _describe(self):
        return "square lower triangular matrices"


class LowerCholesky(Constraint):
    """Lower-triangular matrices with positive diagonals."""

    def _condition(self, value):
        np = _ndx().np
        lower = np.all(np.tril(value) == value, axis=-1)
        # (the diagonal as a product with the identity: np.diagonal indexes with an integer
        # array, which ndx refuses while hybridize traces a block)
        diagonal = (value * np.eye(value.shape[-1], dtype=value.dtype)).sum(-1)
        return lower & (diagonal > 0)

    def _describe(self):
        return "lower triangular matrices with a positive diagonal"


class PositiveDefinite(Constraint):
    """Symmetric (within 1e-5) matrices with positive eigenvalues."""

    def _condition(self, value):
        np = _ndx().np
        symmetric = np.all(np.abs(value - np.swapaxes(value, -1, -2)) < 1e-5, axis=(-2, -1))
        positive = np.all(np.linalg.eigvalsh(value) > 0, axis=-1)
        return symmetric & positive

    def _describe(self):
        return "positive definite matrices"


class Cat(Constraint):
    """Constraints applied to consecutive slices of ``axis`` (``lengths`` each, 1 by default),
    in the manner of np.concatenate."""

    def __init__(self, constraint_seq, axis=0, lengths=None):
        self._constraint_seq = list(constraint_seq)
        if not all(isinstance(c, Constraint) for c in self._constraint_seq):
            raise TypeError("Cat: constraint_seq must hold Constraint objects")
        self._lengths = [1] * len(self._constraint_seq) if lengths is None else list(lengths)
        if len(self._lengths) != len(self._constraint_seq):
            raise ValueError(f"Cat: {len(self._lengths)} lengths for "
                             f"{len(self._constraint_seq)} constraints")
        self._axis = axis

    def check(self, value, name="value"):
        np = _ndx().np
        pieces, start = [], 0
        for constraint, length in zip(self._constraint_seq, self._lengths):
            index = [slice(None)] * value.ndim
            index[self._axis] = slice(start, start + length)
            pieces.append(constraint.check(value[tuple(index)], name))
            start += length
        return np.concatenate(pieces, axis=self._axis)


class Stack(Constraint):
    """Constraints applied to the entries of ``axis``, in the manner of np.stack."""

    def __init__(self, constraint_seq, axis=0):
        self._constraint_seq = list(constraint_seq)
        if not all(isinstance(c, Constraint) for c in self._constraint_seq):
            raise TypeError("Stack: constraint_seq must hold Constraint objects")
        self._axis = axis

    def check(self, value, name="value"):
        np = _ndx().np
        n = value.shape[self._axis]
        if n != len(self._constraint_seq):
            raise ValueError(f"Stack: {len(self._constraint_seq)} constraints for {n} entries "
                             f"along axis {self._axis}")
        pieces = []
        for i, constraint in enumerate(self._constraint_seq):
            index = [slice(None)] * value.ndim
            index[self._axis] = i
            pieces.append(constraint.check(value[tuple(index)], name))
        return np.stack(pieces, axis=self._axis)
