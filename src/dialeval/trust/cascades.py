"""Cascades and a jury on the card (``dialeval trust --cascades``), and the calibrated threshold.

From the single-model candidates the card adds: a cascade from the cheapest to each
dearer one, escalating when the cheap judge's readings disagree; a jury of all of them
(majority, ties to the lower verdict); and, once those ran, each cascade *calibrated* on
the labelled units. Calibration follows the fixed-sequence test of Trust or Escalate
(Jung et al., 2024): thresholds on the cheap judge's confidence (the share of its readings
that agree) are tried from the strictest down, and a threshold is kept while the
Clopper-Pearson upper bound, at ``level``, of the kept units' disagreement with the humans
stays at or below the strong judge's disagreement plus ``tolerance``. The first that
fails stops the sequence, which is what makes the bound hold for the chosen one.
"""

from __future__ import annotations

import copy
from typing import Any

from dialeval.config import ModelSettings
from dialeval.judge_spec import LEVEL, Cascade, Ensemble, Escalate
from dialeval.trust.candidates import Candidate

SAMPLES = 2  # readings of the cheap judge in the card's cascades


def _rate(model: ModelSettings) -> float | None:
    """USD for a million tokens in and a million out: the order of cheapness."""
    from dialeval.trust.runs import price_of

    price = price_of(model)
    return None if price is None else price.cost(1_000_000, 1_000_000)


def extend(candidates: list[Candidate], samples: int = SAMPLES) -> list[Candidate]:
    """The candidates, then a cascade from the cheapest single model to each dearer one and a
    jury of all; composites judge as their members do (no context or template of their own)."""
    singles = [c for c in candidates if isinstance(c.model, ModelSettings)]
    priced = sorted((c for c in singles if _rate(c.model) is not None), key=lambda c: _rate(c.model))  # type: ignore[arg-type, return-value]
    if len(singles) < 2:
        from dialeval.errors import ConfigError

        raise ConfigError("dialeval trust --cascades: give at least two single-model judges (a cheap one and a strong one)")
    cheap = (priced or singles)[0]
    out = list(candidates)
    for strong in [c for c in (priced or singles) if c is not cheap]:
        stages: list[ModelSettings | Ensemble] = [cheap.model, strong.model]  # type: ignore[list-item]
        model = Cascade(cascade=stages, escalate=Escalate(when="disagree", samples=samples))
        out.append(Candidate(model=model, name=f"cascade-{cheap.slug}-{strong.slug}"))
    out.append(Candidate(model=Ensemble(ensemble=[c.model for c in singles]), name="jury-" + "-".join(c.slug for c in singles)))  # type: ignore[misc]
    return out


def _stage_scores(records: list[dict[str, Any]], pick: str) -> dict[str, dict[str, float]]:
    """criterion -> unit -> the cascade's first stage's verdict (``first``) or confidence
    (``confidence``), read from the unit records as the card reads scores."""
    from dialeval.agents.ensemble import agreement
    from dialeval.trust.dialogue import scores_by_unit

    changed = copy.deepcopy(records)
    for record in changed:
        for unit in list(record.get("turn_units", [])) + list(record.get("conversation_units", [])):
            judge = (unit.get("call") or {}).get("judge")
            if not judge:
                continue
            votes = [v["vote"] for v in judge["votes"] if v["stage"] == 0]
            unit["score"] = agreement(votes)[0] if pick == "first" else judge.get("confidence")
            unit["status"] = "ok" if unit["score"] is not None else unit.get("status")
    return scores_by_unit(changed)


def upper_bound(errors: int, n: int, level: float) -> float:
    """One-sided Clopper-Pearson upper bound, at ``level``, of a rate seen ``errors`` times in ``n``."""
    from scipy.stats import beta

    return 1.0 if errors >= n else float(beta.ppf(level, errors + 1, n - errors))


def calibrate(cascade_records: list[dict[str, Any]], strong: dict[str, dict[str, float]],
              consensus: dict[str, dict[str, float]], tolerance: float, level: float = LEVEL) -> dict[str, Any]:
    """The loosest confidence threshold the fixed-sequence test supports, with its figures.

    A verdict disagrees with the humans when it is more than half a point from their mean
    (it is not the nearest scale point). ``threshold`` is ``None`` when even the strictest
    one fails: then no unit can be left to the cheap judge with this guarantee."""
    first, sure = _stage_scores(cascade_records, "first"), _stage_scores(cascade_records, "confidence")
    keys = [(c, u) for c in first for u in first[c]
            if u in sure.get(c, {}) and u in strong.get(c, {}) and u in consensus.get(c, {})]
    if not keys:
        return {"threshold": None, "why": "no labelled unit has both judges' verdicts"}

    def wrong(scores: dict[str, dict[str, float]], key: tuple[str, str]) -> bool:
        return abs(scores[key[0]][key[1]] - consensus[key[0]][key[1]]) > 0.5

    strong_rate = sum(wrong(strong, k) for k in keys) / len(keys)
    target = strong_rate + tolerance
    chosen: dict[str, Any] | None = None
    tried = []
    for threshold in sorted({sure[c][u] for c, u in keys}, reverse=True):
        kept = [k for k in keys if sure[k[0]][k[1]] >= threshold]
        errors = sum(wrong(first, k) for k in kept)
        bound = upper_bound(errors, len(kept), level)
        tried.append({"threshold": threshold, "kept": len(kept), "errors": errors, "upper_bound": round(bound, 4)})
        if bound > target:
            break
        chosen = tried[-1]
    out = {"threshold": chosen["threshold"] if chosen else None, "units": len(keys), "strong_disagreement": round(strong_rate, 4),
           "target": round(target, 4), "level": level, "tried": tried,
           "kept_share": round(chosen["kept"] / len(keys), 4) if chosen else 0.0}
    out["guarantee"] = (
        f"With probability at least {level:g} over the labelled sample, the units the cheap judge keeps (confidence >= "
        f"{chosen['threshold']:.2f}) disagree with the humans at most {target:.3f} of the time: the strong judge's rate "
        f"({strong_rate:.3f}) plus the tolerance {tolerance:g}; the escalated units get the strong judge's verdict. "
        "It assumes the judged units are exchangeable with the labelled ones." if chosen else
        f"No threshold passes: even the cheap judge's surest verdicts may disagree with the humans more than "
        f"{target:.3f} of the time (at level {level:g}); the cascade would escalate every unit.")
    return out


def calibrated(candidate: Candidate, found: dict[str, Any], tolerance: float) -> Candidate | None:
    """The cascade with its calibrated threshold (``None`` when calibration found none)."""
    if found.get("threshold") is None or not isinstance(candidate.model, Cascade):
        return None
    esc = candidate.model.escalate.model_copy(update={"when": "calibrated", "threshold": found["threshold"], "tolerance": tolerance})
    return Candidate(model=candidate.model.model_copy(update={"escalate": esc}), name=f"{candidate.label}-calibrated")


def row_extras(candidate: Candidate, records: list[dict[str, Any]]) -> dict[str, Any]:
    """A composite candidate's share escalated and calls per stage (from its base run)."""
    from dialeval.report.judges import judge_stages

    if isinstance(candidate.model, ModelSettings):
        return {}
    stages = next(iter(judge_stages(records).values()), None) or {}
    return {"composite": {"kind": stages.get("kind"), "describe": candidate.model.describe(),
                          "escalated_share": stages.get("escalated_share"), "stages": stages.get("stages", {})}}


def card_lines(card: dict[str, Any]) -> list[str]:
    """The card's section on ensembles and cascades (none: no lines)."""
    from dialeval.report.tables import cell, markdown_table

    rows = [c for c in card["candidates"] if c.get("composite")]
    if not rows:
        return []
    lines = ["", "## Cascades and juries", ""]
    table = []
    for c in rows:
        comp = c["composite"]
        share = comp.get("escalated_share")
        calls = "; ".join(f"stage {k}: {s['calls']} calls ({', '.join(s['models'])})" for k, s in comp["stages"].items())
        table.append([cell(c["label"]), cell(comp["describe"]), "-" if share is None or comp["kind"] == "ensemble" else f"{share:.0%}",
                      cell(calls)])
    lines += markdown_table(["candidate", "judge", "escalated", "calls per stage (base run)"], table, "llrl")
    for found in card.get("calibration") or []:
        lines += ["", f"Calibrated {cell(found['cascade'])}: " + cell(found["guarantee"])]
    return lines
