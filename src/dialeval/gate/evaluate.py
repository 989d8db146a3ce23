"""Evaluate gate rules against a run (and a baseline run): one outcome per rule.

Why: thresholds are plain comparisons, but a regression must not fail CI on noise. The
drop is measured unit by unit on the units both runs judged, with the paired bootstrap
95% CI of :func:`dialeval.metrics.paired.paired_test`; a regression rule fails only when
the whole interval lies below ``-margin`` (the drop is surely larger than the margin).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from dialeval.gate.figures import dimension_names, did_you_mean, resolve_dimension, run_figures
from dialeval.gate.rules import GateError, Regression, Rule, Threshold
from dialeval.report.results import RunData

WORST = 5  # units listed under a regression: the largest drops
MISSING_SHOWN = 10  # missing unit ids named in a message (all of them are in the detail)


@dataclass
class Outcome:
    """What one rule found: ``pass`` or ``fail``, a one-line message, and the figures behind it."""

    rule: str
    status: Literal["pass", "fail"]
    message: str
    value: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass
class GateResult:
    """Every rule's outcome for one run; ``exit_code`` 0 when all passed, 1 otherwise."""

    run: str
    baseline: str | None
    outcomes: list[Outcome]

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def is_dry_run(run: RunData) -> bool:
    return bool((run.metrics.get("run") or {}).get("dry_run"))


def check_rules(rules: list[Rule], run: RunData, baseline: RunData | None) -> None:
    """Stop with :class:`GateError` (exit 2) before evaluating when a rule names a figure or
    criterion the run lacks, or a regression rule has no baseline; every such rule is named
    at once (a CI job should not need one run per typo)."""
    figures = run_figures(run)
    scored = {f for f in figures if f.rpartition(".")[0] in dimension_names(run.scores())}
    problems = []
    for rule in rules:
        try:
            _check_rule(rule, run, baseline, figures, scored)
        except GateError as err:
            problems.append(str(err))
    if problems:
        raise GateError("\n".join(problems) if len(problems) > 1 else problems[0])


def _check_rule(rule: Rule, run: RunData, baseline: RunData | None, figures: dict[str, float], scored: set[str]) -> None:
    """:class:`GateError` when ``rule`` cannot be gated on ``run`` (and ``baseline``)."""
    for which in (run, baseline):
        if which is not None and is_dry_run(which) and (isinstance(rule, Regression) or getattr(rule, "figure", "") in scored):
            raise GateError(f"rule {rule.name!r}: {which.path} is a dry run, whose scores are placeholders; "
                            "gate its cost and calls only (cost.usd, calls)")
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


def sequential_detail(base: dict[str, float], new: dict[str, float], margin: float, dimension: str) -> dict[str, Any]:
    """When the anytime-valid sequence would have decided, judging the shared units in a seeded
    random order: ``decision``, ``units_used`` of ``units`` (see :mod:`dialeval.metrics.sequential`)."""
    import numpy as np

    from dialeval.metrics import SEED
    from dialeval.metrics.sequential import first_decision, score_bound

    units = sorted(set(base) & set(new))
    order = np.random.default_rng(SEED).permutation(len(units))
    diffs = [new[units[i]] - base[units[i]] for i in order]
    bound = score_bound(dimension, {}, [*base.values(), *new.values()])
    return first_decision(diffs, margin=margin, gate=True, bound=bound)


def regression_outcome(rule: Regression, run: RunData, baseline: RunData, sequential: bool = False) -> Outcome:
    """The paired drop of ``rule.dimension`` with its CI, the units compared and those missing."""
    from dialeval.metrics.paired import paired_test

    base, new = paired_scores(run, baseline, rule.dimension)
    test = paired_test(dict(base), dict(new))
    only_baseline = sorted(set(base) - set(new))
    only_run = sorted(set(new) - set(base))
    if test["n"] < 2 or test["ci_high"] is None:
        raise GateError(f"rule {rule.name!r}: {test['n']} unit(s) judged in both runs; at least 2 are needed "
                        f"(baseline {baseline.path}: {len(base)} units, run {run.path}: {len(new)})")
    drops = sorted(((u, base[u], new[u], new[u] - base[u]) for u in set(base) & set(new)), key=lambda t: (t[3], t[0]))
    worst = [{"unit": u, "baseline": b, "run": r, "change": d} for u, b, r, d in drops[:WORST] if d < 0]
    failed = test["ci_high"] < -rule.margin
    detail = {
        "dimension": rule.dimension, "margin": rule.margin, "n": test["n"], "mean_baseline": test["mean_a"],
        "mean_run": test["mean_b"], "change": test["mean_diff"], "ci_low": test["ci_low"], "ci_high": test["ci_high"],
        "p_permutation": test["p_permutation"], "few_units": test["few_units"],
        "only_baseline": only_baseline, "only_run": only_run, "worst": worst,
    }
    if sequential:
        detail["decision"] = sequential_detail(base, new, rule.margin, resolve_dimension(run.scores(), rule.dimension) or rule.dimension)
    verdict = (f"surely more than {rule.margin:g} lower" if failed else
               f"not surely more than {rule.margin:g} lower")
    message = (f"{rule.dimension}: change {test['mean_diff']:+.3f} [95% CI {test['ci_low']:+.3f}, {test['ci_high']:+.3f}] "
               f"over {test['n']} units both judged: {verdict}" + missing_note(only_baseline, only_run))
    return Outcome(rule.name, "fail" if failed else "pass", message, test["mean_diff"], detail)


def missing_note(only_baseline: list[str], only_run: list[str]) -> str:
    """``; missing in the run: a, b; missing in the baseline: c`` (empty when none is missing)."""
    def ids(units: list[str]) -> str:
        return ", ".join(units[:MISSING_SHOWN]) + (f" and {len(units) - MISSING_SHOWN} more" if len(units) > MISSING_SHOWN else "")

    parts = [f"{len(only_baseline)} unit(s) missing in the run ({ids(only_baseline)})"] if only_baseline else []
    parts += [f"{len(only_run)} unit(s) missing in the baseline ({ids(only_run)})"] if only_run else []
    return "; " + "; ".join(parts) if parts else ""


def evaluate_gate(rules: list[Rule], run: RunData, baseline: RunData | None = None, *, sequential: bool = False) -> GateResult:
    """Every rule's outcome; :class:`GateError` for input that cannot be gated. ``sequential``:
    each regression also says after how many units an anytime-valid sequence decided."""
    check_rules(rules, run, baseline)
    figures = run_figures(run)
    outcomes = [
        threshold_outcome(rule, figures) if isinstance(rule, Threshold) else regression_outcome(rule, run, baseline, sequential)  # type: ignore[arg-type]
        for rule in rules
    ]
    return GateResult(str(run.path), str(baseline.path) if baseline else None, outcomes)
