"""Pure metric functions: lists of per-item results in, numbers out; no model calls."""

SEED = 0  # bootstrap and permutation draws are reproducible: the same runs give the same report
