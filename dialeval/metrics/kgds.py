"""KGDS metrics (paper Sections 4.3-4.6, Appendix C): pure functions, no model calls.

Edge cases are defined, never divided through:

- no gold supporting paragraph / key fact / clear opinion (the denominator of a recall
  is 0): the metric is undefined, ``None``, and the sample is skipped and counted;
- nothing retrieved or nothing knowable (the denominator of a precision is 0, e.g. an
  empty EBS): precision is 0. An empty summary supports nothing; calling it undefined
  would silently drop exactly the failures from the average;
- precision + recall = 0: F1 is 0;
- the overall geometric mean is ``None`` when either part is ``None``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import fmean
from typing import Any, Iterable, Sequence

ERROR_TYPES: dict[str, str] = {
    # code -> name, in the paper's numbering (Error Type1..Type5)
    "OM": "opinion misattribution",
    "IRIC": "implicit reference incorrectly clarified",
    "IRU": "implicit reference unclarified",
    "OSD": "opinion sentiment distortion",
    "OFI": "opinion fact inconsistency",
}


@dataclass(frozen=True)
class PRF:
    recall: float
    precision: float
    f1: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean; 0 when both are 0."""
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def bsp_scores(selected: Iterable[int], supporting: set[int], nonsupporting: set[int]) -> PRF | None:
    """BSP recall, precision and F1 of an extracted background (Eqs. 12-14).

    Indices outside the sample's paragraphs are ignored, as in Eq. 13 (they are in
    neither S nor N). ``None`` when the sample has no supporting paragraph.
    """
    if not supporting:
        return None
    chosen = set(selected)
    hits = len(chosen & supporting)
    retrieved = len(chosen & (supporting | nonsupporting))
    recall = hits / len(supporting)
    precision = hits / retrieved if retrieved else 0.0
    return PRF(recall, precision, f1_score(precision, recall))


def kbsaf_scores(key_knowable: Sequence[bool], nonsupporting_knowable: Sequence[bool]) -> PRF | None:
    """KBSAF recall, precision and F1 from per-fact verdicts (Eqs. 4-6).

    Precision counts knowable key facts among all knowable scored facts (key and
    non-supporting). ``None`` when the sample has no key fact.
    """
    if not key_knowable:
        return None
    key_hits = sum(bool(v) for v in key_knowable)
    knowable = key_hits + sum(bool(v) for v in nonsupporting_knowable)
    recall = key_hits / len(key_knowable)
    precision = key_hits / knowable if knowable else 0.0
    return PRF(recall, precision, f1_score(precision, recall))


def cao_recall(knowable: Sequence[bool]) -> float | None:
    """Share of clear atomic opinions knowable from the opinion summary (Eq. 8)."""
    if not knowable:
        return None
    return sum(bool(v) for v in knowable) / len(knowable)


def overall_gm(background_f1: float | None, cao: float | None) -> float | None:
    """OP_GM = sqrt(background F1 x CAO recall) (Eqs. 9-10)."""
    if background_f1 is None or cao is None:
        return None
    return math.sqrt(background_f1 * cao)


def error_proportions(types: Sequence[str]) -> dict[str, float] | None:
    """Share of each error type among classified errors; ``None`` when there is none."""
    if not types:
        return None
    return {code: sum(1 for t in types if t == code) / len(types) for code in ERROR_TYPES}


def score_summary(
    pattern: str,
    *,
    background: Sequence[int] | None,
    supporting: set[int],
    nonsupporting: set[int],
    fact_verdicts: list[tuple[str, bool | None]] | None,
    opinion_verdicts: list[bool | None] | None,
    error_types: list[str | None],
) -> dict[str, Any]:
    """Every metric of one summary (one sample, pattern and round).

    ``fact_verdicts`` holds ``(kind, knowable)`` per scored fact and ``opinion_verdicts``
    one knowable flag per clear atomic opinion; a ``None`` verdict is an answer that
    could not be read. A part with any unread verdict is not scored (``None``) and the
    reason is kept in ``skipped``, so no missing answer counts as a verdict.
    """
    out: dict[str, Any] = {"skipped": {}}
    if pattern == "ebs":
        if background is None:
            out["skipped"]["background"] = "no readable background summary"
            prf = None
        else:
            prf = bsp_scores(background, supporting, nonsupporting)
            if prf is None:
                out["skipped"]["background"] = "no gold supporting paragraph"
    else:
        prf = None
        if fact_verdicts is None:
            out["skipped"]["background"] = "no readable background summary"
        elif any(v is None for _, v in fact_verdicts):
            out["skipped"]["background"] = f"{sum(v is None for _, v in fact_verdicts)} fact verdicts unreadable"
        else:
            prf = kbsaf_scores(
                [bool(v) for k, v in fact_verdicts if k == "key"],
                [bool(v) for k, v in fact_verdicts if k == "nonsupporting"],
            )
            if prf is None:
                out["skipped"]["background"] = "no key fact"
    out["background"] = prf.as_dict() if prf else None
    cao = None
    if opinion_verdicts is None:
        out["skipped"]["opinion"] = "no opinion summary"
    elif any(v is None for v in opinion_verdicts):
        out["skipped"]["opinion"] = f"{sum(v is None for v in opinion_verdicts)} opinion verdicts unreadable"
    else:
        cao = cao_recall([bool(v) for v in opinion_verdicts])
        if cao is None:
            out["skipped"]["opinion"] = "no clear atomic opinion"
    out["cao_recall"] = cao
    out["op_gm"] = overall_gm(prf.f1 if prf else None, cao)
    classified = [t for t in error_types if t is not None]
    out["errors"] = {"classified": len(classified), "unclassified": len(error_types) - len(classified)}
    out["error_proportions"] = error_proportions(classified)
    return out


def macro(values: Iterable[float | None]) -> dict[str, Any]:
    """Macro average over samples where the metric is defined, with how many were skipped."""
    values = list(values)
    present = [v for v in values if v is not None]
    return {"mean": fmean(present) if present else None, "n": len(present), "skipped": len(values) - len(present)}


def aggregate_scores(per_sample: list[dict[str, dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    """Macro averages per pattern and round from ``[{pattern: {round: score_summary()}}]``."""
    out: dict[str, Any] = {}
    order = {"ebs": 0, "abs": 1}
    patterns = sorted({p for s in per_sample for p in s}, key=lambda p: (order.get(p, 2), p))
    for pattern in patterns:
        rounds = sorted({int(r) for s in per_sample for r in s.get(pattern, {})})
        by_round: dict[str, Any] = {}
        for r in rounds:
            rows = [s.get(pattern, {}).get(str(r)) for s in per_sample]
            rows = [row for row in rows if row is not None]
            missing = len(per_sample) - len(rows)
            bg = [row["background"] for row in rows] + [None] * missing
            table = {
                "recall": macro(b["recall"] if b else None for b in bg),
                "precision": macro(b["precision"] if b else None for b in bg),
                "f1": macro(b["f1"] if b else None for b in bg),
                "cao_recall": macro([row["cao_recall"] for row in rows] + [None] * missing),
                "op_gm": macro([row["op_gm"] for row in rows] + [None] * missing),
                "errors": _error_table(rows),
                "samples_without_summary": missing,
            }
            by_round[str(r)] = table
        out[pattern] = {"rounds": by_round, "change": _change(by_round)}
    return out


def _error_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    props = [row["error_proportions"] for row in rows if row["error_proportions"] is not None]
    return {
        "macro": {code: fmean(p[code] for p in props) if props else None for code in ERROR_TYPES},
        "samples": len(props),
        "classified": sum(row["errors"]["classified"] for row in rows),
        "unclassified": sum(row["errors"]["unclassified"] for row in rows),
    }


def _change(by_round: dict[str, Any]) -> dict[str, float | None] | None:
    """Last round minus round 0 for each headline metric (the paper's arrows)."""
    if "0" not in by_round or len(by_round) < 2:
        return None
    first, last = by_round["0"], by_round[max(by_round, key=int)]
    out: dict[str, float | None] = {}
    for key in ("recall", "precision", "f1", "cao_recall", "op_gm"):
        a, b = first[key]["mean"], last[key]["mean"]
        out[key] = None if a is None or b is None else b - a
    for code in ERROR_TYPES:
        a, b = first["errors"]["macro"][code], last["errors"]["macro"][code]
        out[code] = None if a is None or b is None else b - a
    return out


def win_rate(winners: Sequence[str | None]) -> dict[str, Any]:
    """Gold win rate of the EBS feedback judgement; unreadable judgements are skipped."""
    read = [w for w in winners if w is not None]
    gold = sum(1 for w in read if w == "gold")
    return {
        "gold_win_rate": gold / len(read) if read else None,
        "judged": len(read),
        "gold_wins": gold,
        "unreadable": len(winners) - len(read),
    }


def sample_scores(
    *,
    supporting: set[int],
    nonsupporting: set[int],
    n_opinions: int,
    summaries: list[dict[str, Any]],
    fact_checks: list[dict[str, Any]],
    opinion_checks: list[dict[str, Any]],
    error_checks: list[dict[str, Any]],
    fact_gaps: Sequence[int] = (),
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{pattern: {round: score_summary(...)}}`` for one sample from the graph's checks."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for summary in summaries:
        pattern, r = summary["pattern"], summary["round"]
        readable = summary.get("status") in ("ok", "given")
        mine = lambda rows: [x for x in rows if x["pattern"] == pattern and x["round"] == r]  # noqa: E731
        facts: list[tuple[str, bool | None]] | None = None
        if pattern == "abs" and readable and summary.get("background"):
            facts = [(kind, ok) for c in mine(fact_checks) for kind, ok in zip(c["kinds"], c["knowable"])]
            if fact_gaps:
                facts.append(("key", None))  # facts of some paragraph are unknown: not scored
        opinions: list[bool | None] | None = None
        if readable and summary.get("opinion"):
            by_index = {c["opinion"]: c["knowable"] for c in mine(opinion_checks)}
            opinions = [by_index.get(i) for i in range(n_opinions)]
        result = score_summary(
            pattern,
            background=summary.get("background") if pattern == "ebs" and readable else None,
            supporting=supporting,
            nonsupporting=nonsupporting,
            fact_verdicts=facts,
            opinion_verdicts=opinions,
            error_types=[c["error_type"] for c in mine(error_checks)],
        )
        if not readable:
            result["skipped"]["summary"] = f"summary {summary.get('status')}"
        out.setdefault(pattern, {})[str(r)] = result
    return out
