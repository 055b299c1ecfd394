"""Exponential families: p(x) = h(x) exp(<eta, T(x)> - A(eta)). A subclass that gives its
natural parameters eta, the log normalizer A and the carrier measure's mean E[log h(x)] gets
its entropy, and the KL divergence to another member of its family, from A's gradient."""
from .distribution import Distribution
from .utils import _ndx

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of the exponential-family distributions."""

    @property
    def _natural_params(self):
        """The natural parameters eta, a tuple of arrays."""
        raise self._unimplemented("_natural_params")

    def _log_normalizer(self, *natural_params):
        """A(eta), the log of the normalizing constant."""
        raise self._unimplemented("_log_normalizer")

    @property
    def _mean_carrier_measure(self):
        """E[log h(x)] under the distribution."""
        raise self._unimplemented("_mean_carrier_measure")

    def _normalizer_and_gradient(self):
        """(eta, A(eta), dA/deta): the gradient is the mean of the sufficient statistics.
        It is taken at a copy of eta, so it is a constant to autograd: the distributions
        whose entropy or KL is trained on override these with closed forms."""
        mx = _ndx()
        eta = [mx.np.array(p) if not hasattr(p, "attach_grad") else p.copy()
               for p in self._natural_params]
        for p in eta:
            p.attach_grad()
        with mx.autograd.record():
            total = self._log_normalizer(*eta).sum()
        grads = mx.autograd.grad(total, eta, create_graph=False)
        return eta, self._log_normalizer(*self._natural_params), grads

    def entropy(self):
        """H = A(eta) - <eta, dA/deta> - E[log h(x)]."""
        _, normalizer, grads = self._normalizer_and_gradient()
        result = normalizer - self._mean_carrier_measure
        for eta, g in zip(self._natural_params, grads):
            result = result - eta * g
        return result
