"""Transformations of distributions."""
