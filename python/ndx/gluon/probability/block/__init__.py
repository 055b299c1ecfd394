"""Stochastic blocks."""
from .stochastic_block import *  # noqa: F401,F403
