"""Benchmarks (DESIGN section 8): each script prints a ratio against a baseline run beside it."""
