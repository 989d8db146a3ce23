"""``assert_gate`` and ``assert_no_regression``: the gate's rules as test assertions.

Why: a team's pytest suite can gate a release with the same rules as ``dialeval gate``,
and a failure message that shows the figure, its interval and the worst units says what
to look at without opening the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.gate.evaluate import Outcome, evaluate_gate
from dialeval.gate.figures import resolve_dimension
from dialeval.gate.rules import Regression, parse_rule
from dialeval.report.results import RunData

WORST = 5


def as_run(run: Any) -> RunData:
    """A :class:`RunData` from a run folder path, a ``RunResult`` (``run_dir``) or itself."""
    from dialeval.report.results import read_run

    if isinstance(run, RunData):
        return run
    path = getattr(run, "run_dir", run)
    return read_run(Path(path))


def lowest_units(run: RunData, dimension: str) -> list[tuple[str, float]]:
    """The ``WORST`` lowest-scored units of a criterion."""
    scores = run.scores()
    units = scores.get(resolve_dimension(scores, dimension) or dimension, {})
    return sorted(units.items(), key=lambda kv: (kv[1], kv[0]))[:WORST]


def threshold_message(outcome: Outcome, run: RunData, figure: str) -> str:
    """The outcome, the mean's bootstrap 95% interval and the lowest units when the figure is a criterion's."""
    from dialeval.metrics.intervals import mean_with_interval

    lines = [f"gate {outcome.rule!r} failed: {outcome.message}", f"run: {run.path}"]
    dimension, _, stat = figure.rpartition(".")
    scores = run.scores()
    resolved = resolve_dimension(scores, dimension) if dimension else None
    if resolved is not None:
        mean, interval = mean_with_interval(list(scores[resolved].values()))
        if stat == "mean" and interval is not None:
            lines.append(f"{figure} = {mean:.3f} [95% CI {interval[0]:.3f}, {interval[1]:.3f}] over {len(scores[resolved])} units")
        lines.append("lowest units: " + ", ".join(f"{u} ({v:g})" for u, v in lowest_units(run, dimension)))
    return "\n".join(lines)


def assert_gate(run: Any, rule: str, *, allow_incomplete: bool = False) -> None:
    """Fail the test unless ``rule`` (``"relevance.mean >= 4"``) holds for ``run``; a run the
    gate cannot judge (unfinished, a dry run's scores) raises :class:`GateError` as the CLI
    exits 2, unless ``allow_incomplete``."""
    data = as_run(run)
    threshold = parse_rule(rule)
    (outcome,) = evaluate_gate([threshold], data, allow_incomplete=allow_incomplete).outcomes
    if not outcome.passed:
        raise AssertionError(threshold_message(outcome, data, threshold.figure))


def assert_no_regression(run: Any, baseline: Any, criterion: str, *, margin: float = 0.0, when_undecided: str = "pass",
                         allow_incomplete: bool = False) -> Outcome:
    """Fail the test when ``criterion`` dropped surely more than ``margin`` against ``baseline``
    (paired over the units both judged); skip it (pytest's ``skipped``, with the reason) when
    the units cannot decide, or fail then too with ``when_undecided="fail"``; returns the
    outcome (CI, units compared, missing) when it passes."""
    from dialeval.gate.rules import finite, undecided_choice

    data, base = as_run(run), as_run(baseline)
    rule = Regression(criterion, finite(margin, "assert_no_regression", "margin", low=0.0), undecided_choice(when_undecided, "assert_no_regression"))
    (outcome,) = evaluate_gate([rule], data, base, allow_incomplete=allow_incomplete).outcomes
    if outcome.status == "undecided":
        import pytest

        pytest.skip(f"{outcome.rule} undecided: {outcome.message}")
    if not outcome.passed:
        worst = ", ".join(f"{w['unit']} ({w['baseline']:g} -> {w['run']:g})" for w in outcome.detail["worst"])
        raise AssertionError(f"{outcome.rule} failed: {outcome.message}\nrun: {data.path}\nbaseline: {base.path}\n"
                             f"largest drops: {worst}")
    return outcome
