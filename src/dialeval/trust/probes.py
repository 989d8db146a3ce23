"""The probes' figures, each with its interval and the limit it is read against (pure).

A probe *fails* only when its whole 95% interval lies on the wrong side of its limit:
the figures then show the bias beyond resampling noise. A probe that could not be
measured (no pairs, no unit with a known reply model, no long conversation) says so and
neither passes nor fails. Score changes are in shares of the criterion's scale (0.25 on
a 1-5 scale is one point), so criteria on different scales pool.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dialeval.metrics.alpha import krippendorff_alpha
from dialeval.trust import stats
from dialeval.trust.probe_registry import registered

# the built-in probes' limits (registered in builtin_probes): the figure that a judge without the bias stays on the good side of
LIMITS = {
    "position": 0.10,  # share of pairs whose verdict flips with the order
    "verbosity": 0.0,  # mean score rise (share of the scale) when the reply is padded
    "self_preference": 0.0,  # (judge - human) on its own family's replies minus on the others'
    "needle": 0.80,  # share of planted contradictions the judge catches
    "consistency": 0.10,  # share of units whose verdict changes between repeats
}
DESCRIPTIONS = {
    "position": "share of pairs whose verdict changed when the two replies swapped places (should be near 0)",
    "verbosity": "mean score change when each reply is padded with harmless sentences, in shares of the scale (should be 0 or below)",
    "self_preference": "(judge - human) on replies of the judge's own model family minus on other replies, in shares of the scale (should be 0)",
    "needle": "share of planted contradictions (a fact stated early, contradicted late) the judge caught (should be near 1)",
    "consistency": "share of units whose verdict changed between repeated readings (should be near 0)",
}
HIGHER_IS_BAD = {"position": True, "verbosity": True, "self_preference": True, "needle": False, "consistency": True}
Scores = dict[str, dict[str, float]]  # criterion -> unit -> score


def limit_of(name: str) -> tuple[float, bool]:
    """A probe's limit and whether higher is bad: as registered (a probe of your own), or a
    built-in's from the tables above (which its registration reads) when it is not registered."""
    probe = registered().get(name)
    return (probe.limit, probe.higher_is_bad) if probe is not None else (LIMITS[name], HIGHER_IS_BAD[name])


def result(name: str, figure: dict[str, float | None], n: int, **extra: Any) -> dict[str, Any]:
    """A probe's record: its figure, n, limit, whether it fails (``None``: not measured)."""
    limit, higher_is_bad = limit_of(name)
    if figure["value"] is None:
        fails = None
    elif higher_is_bad:
        fails = figure["ci_low"] is not None and figure["ci_low"] > limit
    else:
        fails = figure["ci_high"] is not None and figure["ci_high"] < limit
    return {"name": name, **figure, "n": n, "limit": limit, "fails": fails, **extra}


def paired_change(diffs: list[float]) -> dict[str, float | None]:
    """The mean of paired differences (in shares of the scale: within [-1, 1]) with the 95%
    interval of the one paired test (:mod:`dialeval.metrics.paired`), the gate's and compare's."""
    from dialeval.metrics.paired import paired_difference

    test = paired_difference([0.0] * len(diffs), diffs, bound=1.0)
    return {"value": test["mean_diff"], "ci_low": test["ci_low"], "ci_high": test["ci_high"]}


def not_measured(name: str, why: str) -> dict[str, Any]:
    return result(name, {"value": None, "ci_low": None, "ci_high": None}, 0, why_not=why)


def _span(scales: dict[str, tuple[float, float]], criterion: str) -> float:
    low, high = scales.get(criterion, (0.0, 1.0))
    return (high - low) or 1.0


def verbosity(base: Scores, padded: Scores, scales: dict[str, tuple[float, float]], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """Padded minus original score of the same units, in shares of the scale."""
    diffs = [(padded[c][u] - base[c][u]) / _span(scales, c) for c in base if c in padded for u in base[c] if u in padded[c]]
    if len(diffs) < 2:
        return not_measured("verbosity", "fewer than two units were scored both plain and padded")
    figure = paired_change(diffs)
    return result("verbosity", figure, len(diffs), rose=sum(d > 0 for d in diffs), fell=sum(d < 0 for d in diffs))


def position(pairwise_units: list[dict[str, Any]], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """Share of pairs whose verdict flipped with the order, and the first-shown pick rate."""
    decided = [u for u in pairwise_units if u.get("winner") is not None]
    if len(decided) < 2:
        return not_measured("position", "fewer than two pairs were judged in both orders")
    flips = [1.0 if u.get("position_inconsistent") else 0.0 for u in decided]
    picks = [(order, pick) for u in decided for order, pick in zip(("a", "b"), u.get("orders", [])) if pick in ("a", "b")]
    first = sum(order == pick for order, pick in picks) / len(picks) if picks else None
    return result("position", stats.share(flips, None, resamples), len(decided), first_position_rate=first, failed_pairs=len(pairwise_units) - len(decided))


def self_preference(judge: Scores, consensus: Scores, unit_family: dict[str, str], family: str,
                    scales: dict[str, tuple[float, float]], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """How much more the judge over-scores replies of its own family than the others',
    against the humans' scores of the same units."""
    rows = [((judge[c][u] - consensus[c][u]) / _span(scales, c), unit_family[u] == family)
            for c in consensus if c in judge for u in consensus[c] if u in judge[c] and u in unit_family]
    own = sum(inside for _, inside in rows)
    if own < 2 or len(rows) - own < 2:
        why = "no labelled unit records which model wrote its reply" if not rows else \
            f"fewer than two labelled replies from the judge's family ({family}) or from others ({own} and {len(rows) - own})"
        return not_measured("self_preference", why)
    figure = stats.group_gap([r[0] for r in rows], [r[1] for r in rows], resamples)
    return result("self_preference", figure, len(rows), family=family, own_family=own, other=len(rows) - own)


def needle(turn_units: dict[str, list[dict[str, Any]]], needles: dict[str, int], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """Share of planted contradictions judged inconsistent (verdict ``no``), beside the
    false alarms on the same conversations' other replies."""
    caught: list[float] = []
    alarms: list[float] = []
    for conv, units in turn_units.items():
        if conv not in needles:
            continue
        for u in units:
            if u.get("verdict") is None:
                continue
            (caught if u["turn"] == needles[conv] else alarms).append(1.0 if str(u["verdict"]).lower() == "no" else 0.0)
    if not caught:
        return not_measured("needle", "no conversation was long enough to plant a contradiction in (or none was read)")
    return result("needle", stats.share(caught, None, resamples), len(caught), false_alarm_rate=sum(alarms) / len(alarms) if alarms else None, controls=len(alarms))


def consistency(base: Scores, repeats: list[Scores], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """Share of units whose verdict changed across repeats, and alpha between the first two readings."""
    if not repeats:
        return not_measured("consistency", "no repeat was asked for (--repeats 1)")
    changed, alphas = [], []
    for c, units in base.items():
        shared = [u for u in units if all(u in r.get(c, {}) for r in repeats)]
        changed += [0.0 if all(r[c][u] == units[u] for r in repeats) else 1.0 for u in shared]
        pairs = np.array([[units[u], repeats[0][c][u]] for u in shared], dtype=float).reshape(-1, 2)
        alpha = krippendorff_alpha(pairs) if len(shared) >= 3 else None
        if alpha is not None:
            alphas.append(alpha)
    if len(changed) < 2:
        return not_measured("consistency", "fewer than two units were read in every repeat")
    return result("consistency", stats.share(changed, None, resamples), len(changed), repeat_alpha=sum(alphas) / len(alphas) if alphas else None, readings=len(repeats) + 1)


def failed(probes: dict[str, dict[str, Any]]) -> list[str]:
    return [name for name, probe in probes.items() if probe["fails"]]
