"""MXNet 1.x's gluon.contrib.data.sampler: IntervalSampler (gluon.data.IntervalSampler)."""
from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]
