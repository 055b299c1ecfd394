"""KL divergence between distributions: ``kl_divergence(p, q)`` finds the implementation
registered for the pair of types (``@register_kl(P, Q)``), taking the most specific match
along both classes' MROs; ``empirical_kl`` estimates it from samples of p."""
from .utils import _ndx

__all__ = ["register_kl", "kl_divergence", "empirical_kl"]

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for p of ``type_p``, q of ``type_q``."""
    from .distribution import Distribution

    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl: expected Distribution subclasses, got {t!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _lookup.cache = {}
        return fn

    return decorator


def _lookup(type_p, type_q):
    cache = _lookup.cache
    key = (type_p, type_q)
    if key not in cache:
        best, best_rank = None, None
        mro_p, mro_q = type_p.__mro__, type_q.__mro__
        for (cand_p, cand_q), fn in _KL_REGISTRY.items():
            if cand_p in mro_p and cand_q in mro_q:
                rank = (mro_p.index(cand_p), mro_q.index(cand_q))
                if best_rank is None or rank < best_rank:
                    best, best_rank = fn, rank
        cache[key] = best
    return cache[key]


_lookup.cache = {}


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], elementwise over the batch.

    Raises NotImplementedError when no implementation is registered for the pair."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"kl_divergence: no KL divergence is registered for "
                                  f"{type(p).__name__} and {type(q).__name__}")
    return fn(p, q)


def empirical_kl(p, q, n_samples=1):
    """A Monte Carlo estimate of KL(p || q): the mean over ``n_samples`` draws x ~ p of
    log p(x) - log q(x)."""
    samples = p.sample_n(n_samples)
    return (p.log_prob(samples) - q.log_prob(samples)).mean(axis=0)


def _kl_exponential_family(p, q):
    """The Bregman divergence of the log normalizer, for two members of one family:
    A(eta_q) - A(eta_p) - <eta_q - eta_p, dA/deta(eta_p)>."""
    if type(p) is not type(q):
        raise NotImplementedError(f"kl_divergence: no KL divergence is registered for "
                                  f"{type(p).__name__} and {type(q).__name__}")
    _, normalizer_p, grads = p._normalizer_and_gradient()
    result = q._log_normalizer(*q._natural_params) - normalizer_p
    for eta_p, eta_q, g in zip(p._natural_params, q._natural_params, grads):
        result = result - (eta_q - eta_p) * g
    return _ndx().np.asarray(result)


def _register_exponential_family():
    from .exp_family import ExponentialFamily

    register_kl(ExponentialFamily, ExponentialFamily)(_kl_exponential_family)


_register_exponential_family()
