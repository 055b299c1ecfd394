"""MXNet 1.x's gluon.contrib.data: its sampler (IntervalSampler, now gluon.data's). The text
datasets (WikiText), which download their data, are not provided."""
from . import sampler
from .sampler import IntervalSampler

__all__ = ["sampler", "IntervalSampler"]
