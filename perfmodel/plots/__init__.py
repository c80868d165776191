"""Plots (matplotlib is imported lazily, only here)."""
