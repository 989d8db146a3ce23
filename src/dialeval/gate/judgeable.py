"""Whether a run can be gated: finished, not a dry run, of the same benchmark, on the same units.

Why: the gate's exit code is what CI trusts. A run killed after 4 of 40 items, a dry run's
placeholder scores, or a baseline that judged other conversations under the same ids all
hold numbers a rule can read; none of them measures the change. Every run records in
``metrics.json`` whether it is ``complete`` and a content hash per item (``unit_hashes``,
see :func:`dialeval.report.writer.judgeable`); here the gate reads them back and refuses,
exit 2 with the reason, what it cannot judge. ``--allow-incomplete`` judges an unfinished
run anyway (never another benchmark's, nor other data), and every line then says so.
"""

from __future__ import annotations

from typing import Any, Callable

from dialeval.gate.figure_catalog import measured_by_dry_run
from dialeval.gate.figures import resolve_dimension
from dialeval.gate.rules import GateError, Regression, Rule, Threshold, joined
from dialeval.report.results import RunData

SHOWN_UNITS = 5  # unit ids named in a message


def is_dry_run(run: RunData) -> bool:
    return bool((run.metrics.get("run") or {}).get("dry_run"))


def unfinished(run: RunData) -> list[str]:
    """Why ``run`` is not a finished measurement (empty: it is); a dry run's reason is left to the rules."""
    info = run.metrics.get("run")
    if not run.metrics or not isinstance(info, dict):
        return [f"no metrics.json: the run never finished ({len(run.items)} item(s) in results.jsonl; killed, or still running)"]
    if "complete" not in info:
        return ["its metrics.json does not say whether it is complete (written by an older dialeval): "
                "run `dialeval report` on it, or run it again"]
    return [r for r in info.get("incomplete") or [] if not str(r).startswith("a dry run")]


def check_runs(rules: list[Rule], run: RunData, baseline: RunData | None, *, allow_incomplete: bool) -> list[str]:
    """:class:`GateError` naming every reason the run or baseline cannot be judged; with
    ``allow_incomplete``, the reasons it was judged anyway (another benchmark is never allowed)."""
    if baseline is not None and baseline.benchmark != run.benchmark:
        raise GateError(f"baseline {baseline.path} is a {baseline.benchmark!r} run and {run.path} a {run.benchmark!r} run: "
                        "a gate compares runs of one benchmark")
    needs_scores = any(isinstance(r, Regression) or not measured_by_dry_run(r.figure) for r in rules if isinstance(r, (Threshold, Regression)))
    reasons = [f"run {run.path}: {r}" for r in unfinished(run)]
    if baseline is not None:
        reasons += [f"baseline {baseline.path}: {r}" for r in unfinished(baseline)]
    if not needs_scores:  # a cost gate of a dry run: its figures are whole whether or not items were scored
        reasons = [r for r in reasons if "no item finished" not in r]
    if reasons and not allow_incomplete:
        raise GateError(joined([f"cannot judge {r}" for r in reasons] + ["(--allow-incomplete judges it anyway, and says so)"]))
    return reasons


def _hashes(run: RunData) -> dict[str, str]:
    """Item id -> content hash: ``metrics.json``'s, else each row's own (a run killed before its metrics)."""
    recorded = (run.metrics.get("run") or {}).get("unit_hashes") or {}
    return {str(k): str(v) for k, v in recorded.items()} or {i.id: i.unit_hash for i in run.items if i.unit_hash}


def check_same_units(run: RunData, baseline: RunData, regressions: list[Regression], *, allow_incomplete: bool = False) -> list[str]:
    """:class:`GateError` when a unit both runs scored for a regression rule was a different
    unit in each (its item's content hash differs): a baseline judged on other data. A run
    that records no hashes (an older dialeval) is refused too, unless ``allow_incomplete``:
    then its units are paired by id alone, and the returned reason says so."""
    if not regressions:
        return []
    mine, theirs = _hashes(run), _hashes(baseline)
    if not mine or not theirs:
        which = run if not mine else baseline
        said = f"{which.path} records no content hash of its units (written by an older dialeval)"
        if allow_incomplete:
            return [f"{said}: units paired by id alone"]
        raise GateError(f"{said}: run it again to gate it against a baseline (--allow-incomplete pairs its units by id alone)")
    run_items, base_items = run.unit_items(), baseline.unit_items()
    for rule in regressions:
        shared = _shared_units(run, baseline, rule.dimension)
        differ = sorted(u for u in shared if _differs(mine.get(run_items.get(u, "")), theirs.get(base_items.get(u, ""))))
        if differ:
            named = ", ".join(differ[:SHOWN_UNITS]) + (f" and {len(differ) - SHOWN_UNITS} more" if len(differ) > SHOWN_UNITS else "")
            raise GateError(f"rule {rule.name!r}: baseline {baseline.path} judged other content under {len(differ)} of "
                            f"{len(shared)} shared unit ids ({named}): not the same units; gate runs over the same data")
    return []


def _shared_units(run: RunData, baseline: RunData, dimension: str) -> set[str]:
    new, base = run.scores(), baseline.scores()
    a, b = resolve_dimension(new, dimension), resolve_dimension(base, dimension)
    return set(new.get(a or "", {})) & set(base.get(b or "", {}))


def _differs(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a != b


def label(reasons: list[str]) -> Callable[[str], str]:
    """Each output line with ``(--allow-incomplete)`` when unfinished runs were judged."""
    return (lambda line: f"{line} [--allow-incomplete: judged although incomplete]") if reasons else (lambda line: line)

