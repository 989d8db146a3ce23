"""`dialeval gate` and the pytest plugin: thresholds on a run's figures and regressions
against a baseline run, turned into exit codes, JUnit XML and a Markdown summary."""

from typing import Any

__all__ = ["assert_gate", "assert_no_regression"]


def __getattr__(name: str) -> Any:
    """``from dialeval.gate import assert_gate``, imported on use (the pytest plugin loads this
    package in every pytest session, so it imports nothing heavy up front)."""
    if name in __all__:
        from dialeval.gate import asserts

        return getattr(asserts, name)
    raise AttributeError(f"module 'dialeval.gate' has no attribute {name!r}")
