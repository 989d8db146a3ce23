"""Pure metric functions: lists of per-item results in, numbers out; no model calls."""
