"""Registries of maps from the unconstrained reals onto the region of a constraint.

``biject_to(constraint)`` gives a bijection (for reparameterizing a constrained parameter
by an unconstrained one and keeping densities exact); ``transform_to(constraint)`` gives a
transformation onto the region that need not be one-to-one (SoftmaxTransform for Simplex).
"""
import numbers

from ..distributions import constraint as c
from .transformation import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    SoftmaxTransform,
)

__all__ = ["domain_map", "biject_to", "transform_to"]


class domain_map:  # noqa: N801 (MXNet's name)
    """A registry: constraint class -> factory(constraint) returning a Transformation.

    A constraint is looked up by its class, then by its base classes in order, so a subclass
    of a registered constraint maps as its base does unless registered itself. Integer
    constraints (IntegerInterval, ...) have no continuous map and raise NotImplementedError.
    """

    def __init__(self):
        self._storage = {}

    def register(self, constraint, factory=None):
        """Registers ``factory`` for ``constraint`` (a Constraint subclass or instance);
        without ``factory``, returns a decorator that registers the function it decorates.
        """
        if factory is None:
            return lambda fn: self.register(constraint, fn)
        if isinstance(constraint, c.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, c.Constraint)):
            raise TypeError(f"domain_map.register: expected a Constraint subclass or "
                            f"instance, got {constraint!r}")
        if not callable(factory):
            raise TypeError(f"domain_map.register: factory must be callable, got "
                            f"{type(factory).__name__}")
        self._storage[constraint] = factory
        return factory

    def __call__(self, constraint):
        if not isinstance(constraint, c.Constraint):
            raise TypeError(f"domain_map: expected a Constraint instance, got "
                            f"{type(constraint).__name__}")
        if getattr(constraint, "_integer", False):
            raise NotImplementedError(f"domain_map: {type(constraint).__name__} is an integer "
                                      "constraint; no transformation maps the reals onto it")
        for cls in type(constraint).__mro__:
            factory = self._storage.get(cls)
            if factory is not None:
                return factory(constraint)
        raise NotImplementedError(f"domain_map: cannot transform onto "
                                  f"{type(constraint).__name__} constraints")


biject_to = domain_map()
transform_to = domain_map()


def _register_both(*constraints):
    """Registers the decorated factory for every constraint class, in both registries."""
    def decorator(factory):
        for constraint in constraints:
            biject_to.register(constraint, factory)
            transform_to.register(constraint, factory)
        return factory
    return decorator


@_register_both(c.Real)
def _transform_to_real(constraint):
    # the identity: an empty composition
    return ComposeTransform([])


@_register_both(c.Positive)
def _transform_to_positive(constraint):
    return ExpTransform()


@_register_both(c.GreaterThan, c.GreaterThanEq)
def _transform_to_greater_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint._lower_bound, 1)])


@_register_both(c.LessThan, c.LessThanEq)
def _transform_to_less_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint._upper_bound, -1)])


def _is_number(value, target):
    return isinstance(value, numbers.Real) and value == target


@_register_both(c.Interval, c.OpenInterval, c.HalfOpenInterval, c.UnitInterval)
def _transform_to_interval(constraint):
    lower, upper = constraint._lower_bound, constraint._upper_bound
    if _is_number(lower, 0) and _is_number(upper, 1):
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lower, upper - lower)])


@transform_to.register(c.Simplex)
def _transform_to_simplex(constraint):
    # (not a bijection, so it is not registered in biject_to)
    return SoftmaxTransform()
