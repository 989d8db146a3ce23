"""The pytest plugin (entry point ``pytest11: dialeval``): a fixture that runs a benchmark,
and the gate's assertions.

Why: CI already runs pytest; a test that evaluates a data file and asserts a rule needs no
other tool. Runs land in one folder (``--dialeval-runs`` or the ``dialeval_runs`` ini value,
else the config's ``output_dir``) and go through
the response cache, so a re-run in CI resumes and repeats no call whose answer is cached.
Nothing heavy is imported until a test asks for the fixture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dialeval")
    group.addoption("--dialeval-runs", metavar="DIR", default=None, help="folder for the runs of the dialeval_run fixture")
    parser.addini("dialeval_runs", "folder for the runs of the dialeval_run fixture (default: the config's output_dir)", default="")


@pytest.fixture(scope="session")
def dialeval_run(pytestconfig: pytest.Config) -> Callable[..., Any]:
    """``dialeval_run(benchmark, data, config=None, **overrides)`` runs (or resumes) a benchmark
    and returns the run's :class:`~dialeval.report.results.RunData` for ``assert_gate``."""

    def run(benchmark: str, data: str | Path, config: Any = None, **overrides: Any) -> Any:
        from dialeval import evaluate
        from dialeval.report.results import read_run

        folder = pytestconfig.getoption("dialeval_runs") or pytestconfig.getini("dialeval_runs")
        if folder:
            overrides.setdefault("output_dir", str(Path(str(pytestconfig.rootpath)) / folder))
        return read_run(evaluate(benchmark, data, config, **overrides).run_dir)

    return run


@pytest.fixture
def assert_gate() -> Callable[[Any, str], None]:
    """:func:`dialeval.gate.asserts.assert_gate` as a fixture (or import it)."""
    from dialeval.gate.asserts import assert_gate as check

    return check


@pytest.fixture
def assert_no_regression() -> Callable[..., Any]:
    """:func:`dialeval.gate.asserts.assert_no_regression` as a fixture (or import it)."""
    from dialeval.gate.asserts import assert_no_regression as check

    return check
