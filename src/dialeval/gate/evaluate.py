"""Evaluate gate rules against a run (and a baseline run): one outcome per rule.

Why: thresholds are plain comparisons, but a regression must not fail CI on noise, nor
pass what the units cannot show. The change is measured unit by unit on the units both
runs judged, with the one paired test of :mod:`dialeval.metrics.paired`: a regression rule
fails when the whole 95% interval lies below ``-margin``, passes when it lies at or above,
and is ``undecided`` otherwise (the reason and the smallest drop these units could show
are said). Runs that cannot be judged are refused first (:mod:`dialeval.gate.judgeable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from dialeval.gate.figures import dimension_names, did_you_mean, resolve_dimension, run_figures
from dialeval.gate.figure_catalog import dry_run_figures, measured_by_dry_run
from dialeval.gate.judgeable import check_runs, check_same_units, is_dry_run
from dialeval.gate.rules import GateError, Regression, Rule, Threshold
from dialeval.report.results import RunData

WORST = 5  # units listed under a regression: the largest drops
MISSING_SHOWN = 10  # missing unit ids named in a message (all of them are in the detail)


@dataclass
class Outcome:
    """What one rule found: ``pass``, ``fail`` or ``undecided``, a one-line message, and the figures behind it."""

    rule: str
    status: Literal["pass", "fail", "undecided"]
    message: str
    value: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def failed(self) -> bool:
        return self.status == "fail"


@dataclass
class GateResult:
    """Every rule's outcome for one run; ``exit_code`` 1 when a rule failed, else 0 (an
    undecided rule does not fail unless its ``when_undecided`` is ``fail``).
    ``allowed_incomplete``: why a run could not be judged, when ``--allow-incomplete`` judged it anyway."""

    run: str
    baseline: str | None
    outcomes: list[Outcome]
    allowed_incomplete: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not any(o.failed for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def check_rules(rules: list[Rule], run: RunData, baseline: RunData | None) -> None:
    """Stop with :class:`GateError` (exit 2) before evaluating when a rule names a figure or
    criterion the run lacks, or a regression rule has no baseline; every such rule is named
    at once (a CI job should not need one run per typo)."""
    from dialeval.gate.rules import joined

    figures = run_figures(run)
    problems = []
    for rule in rules:
        try:
            _check_rule(rule, run, baseline, figures)
        except GateError as err:
            problems.append(str(err))
    if problems:
        raise GateError(joined(problems))


def _check_rule(rule: Rule, run: RunData, baseline: RunData | None, figures: dict[str, float]) -> None:
    """:class:`GateError` when ``rule`` cannot be gated on ``run`` (and ``baseline``)."""
    # a threshold reads the run alone; a regression reads the run and the baseline
    judged = [("run", run)] if isinstance(rule, Threshold) else [("run", run), ("baseline", baseline)]
    for role, which in judged:
        if which is not None and is_dry_run(which) and not (isinstance(rule, Threshold) and measured_by_dry_run(rule.figure)):
            raise GateError(f"rule {rule.name!r}: the {role} {which.path} is a dry run, whose scores and figures are placeholders; "
                            f"gate its cost and calls only ({', '.join(dry_run_figures())})")
    if isinstance(rule, Threshold) and rule.figure == "cost.usd" and rule.figure not in figures:
        unpriced = ", ".join((run.usage.get("total") or {}).get("unpriced_models") or []) or "a model"
        raise GateError(f"rule {rule.name!r}: the cost of {run.path} is unknown: no price is known for {unpriced} "
                        "(set `price` or `price_as` for it)")
    if isinstance(rule, Threshold) and rule.figure not in figures:
        raise GateError(f"rule {rule.name!r}: {run.path} has no figure {rule.figure!r}{did_you_mean(rule.figure, list(figures))}")
    if isinstance(rule, Regression):
        if baseline is None:
            raise GateError(f"rule {rule.name!r}: a regression rule needs a baseline run (--baseline RUN)")
        for which in (run, baseline):
            scores = which.scores()
            if resolve_dimension(scores, rule.dimension) is None:
                raise GateError(f"rule {rule.name!r}: {which.path} scored no criterion {rule.dimension!r}"
                                f"{did_you_mean(rule.dimension, dimension_names(scores))}")


def threshold_outcome(rule: Threshold, figures: dict[str, float]) -> Outcome:
    value = figures[rule.figure]
    ok = rule.holds(value)
    return Outcome(rule.name, "pass" if ok else "fail", f"{rule.figure} = {value:.4g} ({'meets' if ok else 'does not meet'} {rule.op} {rule.value:g})", value)


def paired_scores(run: RunData, baseline: RunData, dimension: str) -> tuple[dict[str, float], dict[str, float]]:
    """``{unit: score}`` of the baseline and of the run for the criterion a rule names."""
    base, new = baseline.scores(), run.scores()
    return base[resolve_dimension(base, dimension) or dimension], new[resolve_dimension(new, dimension) or dimension]


def sequential_detail(base: dict[str, float], new: dict[str, float], margin: float, dimension: str, bound: float) -> dict[str, Any]:
    """When the anytime-valid sequence would have decided, judging the shared units in a seeded
    random order: ``decision``, ``units_used`` of ``units`` (see :mod:`dialeval.metrics.sequential`)."""
    from dialeval.metrics.intervals import unit_order
    from dialeval.metrics.sequential import first_decision

    units = sorted(set(base) & set(new))
    order = unit_order(len(units))
    diffs = [new[units[i]] - base[units[i]] for i in order]
    return first_decision(diffs, margin=margin, gate=True, bound=bound)


def regression_bound(run: RunData, dimension: str, seen: list[float]) -> float:
    """The largest possible change of a criterion: its scale's width (the benchmark's
    declared scales, a ``(1-5)`` in its name), else the range of the scores seen."""
    from dialeval.benchmarks import get_benchmark
    from dialeval.metrics.sequential import score_bound

    try:
        scales = dict(get_benchmark(run.benchmark).scales or {})
    except KeyError:
        scales = {}
    return score_bound(dimension, scales, seen)


def regression_outcome(rule: Regression, run: RunData, baseline: RunData, sequential: bool = False) -> Outcome:
    """The paired change of ``rule.dimension`` with its CI and verdict, the units compared and those missing."""
    from dialeval.metrics.paired import paired_test, regression_verdict

    base, new = paired_scores(run, baseline, rule.dimension)
    dimension = resolve_dimension(run.scores(), rule.dimension) or rule.dimension
    bound = regression_bound(run, dimension, [*base.values(), *new.values()])
    test = paired_test(dict(base), dict(new), bound=bound)
    only_baseline = sorted(set(base) - set(new))
    only_run = sorted(set(new) - set(base))
    if test["n"] < 1:
        raise GateError(f"rule {rule.name!r}: no unit judged in both runs "
                        f"(baseline {baseline.path}: {len(base)} units, run {run.path}: {len(new)})")
    drops = sorted(((u, base[u], new[u], new[u] - base[u]) for u in set(base) & set(new)), key=lambda t: (t[3], t[0]))
    worst = [{"unit": u, "baseline": b, "run": r, "change": d} for u, b, r, d in drops[:WORST] if d < 0]
    verdict = regression_verdict(test, rule.margin)
    detail = {
        "dimension": rule.dimension, "margin": rule.margin, "n": test["n"], "mean_baseline": test["mean_a"],
        "mean_run": test["mean_b"], "change": test["mean_diff"], "ci_low": test["ci_low"], "ci_high": test["ci_high"],
        "p_value": test["p_value"], "method": test["method"], "bound": test["bound"], "few_units": test["few_units"],
        "verdict": verdict["status"], "reason": verdict["reason"], "smallest_drop": verdict["smallest_drop"],
        "only_baseline": only_baseline, "only_run": only_run, "worst": worst,
    }
    if sequential:
        detail["decision"] = sequential_detail(base, new, rule.margin, dimension, bound)
    said = {"fail": f"surely more than {rule.margin:g} lower",
            "pass": f"surely not more than {rule.margin:g} lower",
            "undecided": f"undecided: {verdict['reason']}"}[verdict["status"]]
    status = verdict["status"]
    if status == "undecided" and rule.when_undecided == "fail":
        status, said = "fail", said + " (when_undecided: fail)"
    ci = (f"[95% CI {test['ci_low']:+.3f}, {test['ci_high']:+.3f}]" if test["ci_low"] is not None else "[no CI]")
    message = (f"{rule.dimension}: change {test['mean_diff']:+.3f} {ci} over {test['n']} units both judged: {said}"
               + missing_note(only_baseline, only_run))
    return Outcome(rule.name, status, message, test["mean_diff"], detail)  # type: ignore[arg-type]


def missing_note(only_baseline: list[str], only_run: list[str]) -> str:
    """``; missing in the run: a, b; missing in the baseline: c`` (empty when none is missing)."""
    def ids(units: list[str]) -> str:
        return ", ".join(units[:MISSING_SHOWN]) + (f" and {len(units) - MISSING_SHOWN} more" if len(units) > MISSING_SHOWN else "")

    parts = [f"{len(only_baseline)} unit(s) missing in the run ({ids(only_baseline)})"] if only_baseline else []
    parts += [f"{len(only_run)} unit(s) missing in the baseline ({ids(only_run)})"] if only_run else []
    return "; " + "; ".join(parts) if parts else ""


def evaluate_gate(rules: list[Rule], run: RunData, baseline: RunData | None = None, *, sequential: bool = False,
                  allow_incomplete: bool = False) -> GateResult:
    """Every rule's outcome; :class:`GateError` for input that cannot be gated (a run or
    baseline unfinished, a dry run's scores, another benchmark, other data under the same
    unit ids). ``allow_incomplete`` judges unfinished runs anyway and says so in the result.
    ``sequential``: each regression also says after how many units an anytime-valid sequence decided."""
    allowed = check_runs(rules, run, baseline, allow_incomplete=allow_incomplete)
    check_rules(rules, run, baseline)
    if baseline is not None:
        allowed += check_same_units(run, baseline, [r for r in rules if isinstance(r, Regression)], allow_incomplete=allow_incomplete)
    figures = run_figures(run)
    outcomes = [
        threshold_outcome(rule, figures) if isinstance(rule, Threshold) else regression_outcome(rule, run, baseline, sequential)  # type: ignore[arg-type]
        for rule in rules
    ]
    return GateResult(str(run.path), str(baseline.path) if baseline else None, outcomes, allowed)
