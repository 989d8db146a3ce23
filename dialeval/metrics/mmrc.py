"""MMRC metrics (pure): judge means per ability, EP, IMP, RP, and NOTE-TAKING deltas.

Per question records (one per condition and question) carry the judge score (or
``None`` when the answer or the judge's verdict could not be used) and the inputs of the
objective metrics. Edge cases, decided here once:

- EP of a question whose answer names no item is undefined (0/0): skipped, counted as
  ``empty``. EP is the mean over questions of |matched reference items| / |items named|
  (a reference item matched twice counts once, so EP <= 1).
- IMP of a question is |hits| / |hits + misses| = |named and right| / |right images|;
  an answer that names no image number scores 0 (it retrieved nothing).
- RP is the share of refusal-labelled questions whose refusal behaviour matches the
  label; questions whose detector verdict is unusable are skipped and counted.
- Overall is the mean of the six ability means (abilities with no score are left out).
- Every mean over nothing is ``None``, never 0.
"""

from __future__ import annotations

from typing import Any, Iterable

from dialeval.data.mmrc import ABILITIES
from dialeval.metrics.mmrc_text import image_numbers
from dialeval.metrics.scores import mean_or_none

OBJECTIVE = ("EP", "IMP", "RP")


def ep_counts(matches: list[int | None]) -> tuple[int, int]:
    """(items the answer names, distinct reference items among them)."""
    return len(matches), len({m for m in matches if m is not None})


def extraction_precision(n_model: int, n_hit: int) -> float | None:
    """EP of one answer; ``None`` when the answer names no item."""
    return None if n_model == 0 else n_hit / n_model


def image_hits(answer: str, expected: Iterable[int]) -> dict[str, Any]:
    """Image numbers named in ``answer`` against the ground truth: hits and misses."""
    truth = sorted(set(expected))
    named = image_numbers(answer)
    hits = [n for n in truth if n in named]
    return {"expected": truth, "predicted": named, "hits": len(hits), "misses": len(truth) - len(hits)}


def image_precision(hits: int, misses: int) -> float | None:
    """IMP of one answer; ``None`` only if there is no ground-truth image at all."""
    return None if hits + misses == 0 else hits / (hits + misses)


def refusal_precision(pairs: Iterable[tuple[bool, bool]]) -> float | None:
    """Share of (expected, refused) pairs that agree; ``None`` for no pairs."""
    pairs = list(pairs)
    return None if not pairs else sum(1 for e, r in pairs if e == r) / len(pairs)


def summarize(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """One condition's table row from its per-question records."""
    abilities = {}
    for ability in ABILITIES:
        rows = [q for q in questions if q["ability"] == ability]
        scores = [q["score"] for q in rows if q["score"] is not None]
        abilities[ability] = {"mean": mean_or_none(scores), "n": len(scores), "unscored": len(rows) - len(scores)}
    ability_means = [a["mean"] for a in abilities.values() if a["mean"] is not None]

    ep_rows = [q["ep"] for q in questions if q.get("ep") is not None]
    ep_usable = [e for e in ep_rows if e["status"] == "ok"]
    ep_values = [extraction_precision(e["n_model"], e["n_hit"]) for e in ep_usable]
    ep_defined = [v for v in ep_values if v is not None]

    imp_rows = [q["imp"] for q in questions if q.get("imp") is not None]
    imp_values = [image_precision(i["hits"], i["misses"]) for i in imp_rows]

    rp_rows = [q["refusal"] for q in questions if q.get("refusal") is not None]
    rp_usable = [(r["expected"], r["refused"]) for r in rp_rows if r["status"] == "ok" and r["refused"] is not None]

    statuses: dict[str, int] = {}
    for q in questions:
        statuses[q["answer_status"]] = statuses.get(q["answer_status"], 0) + 1
    labelled = {k: sum(1 for q in questions if q["ability"] == k) for k in ("IE", "IM")}
    return {
        "abilities": abilities,
        "overall": mean_or_none(ability_means),
        "EP": {
            "value": mean_or_none(ep_defined),
            "n": len(ep_defined),
            "empty": len(ep_values) - len(ep_defined),
            "skipped": labelled["IE"] - len(ep_usable),
        },
        "IMP": {
            "value": mean_or_none(v for v in imp_values if v is not None),
            "n": sum(1 for v in imp_values if v is not None),
            "skipped": labelled["IM"] - len(imp_rows),
        },
        "RP": {
            "value": refusal_precision(rp_usable),
            "n": len(rp_usable),
            "skipped": sum(1 for q in questions if q.get("refuse") is not None) - len(rp_usable),
        },
        "answers": {"total": len(questions), **statuses},
    }


def _delta(on: float | None, off: float | None) -> float | None:
    return None if on is None or off is None else on - off


def deltas(off: dict[str, Any], on: dict[str, Any]) -> dict[str, float | None]:
    """NOTE-TAKING on minus off, per ability, overall and objective metric."""
    out = {a: _delta(on["abilities"][a]["mean"], off["abilities"][a]["mean"]) for a in ABILITIES}
    out["overall"] = _delta(on["overall"], off["overall"])
    for name in OBJECTIVE:
        out[name] = _delta(on[name]["value"], off[name]["value"])
    return out


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Corpus metrics per condition (``off``/``on``) and the deltas when both ran."""
    conditions: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        for q in record["questions"]:
            conditions.setdefault(q["condition"], []).append(q)
    summary = {c: summarize(qs) for c, qs in sorted(conditions.items(), key=lambda kv: kv[0] != "off")}
    updates = [u for r in records for u in r.get("note_updates", [])]
    out: dict[str, Any] = {
        "conversations": len(records),
        "conditions": summary,
        "note_taking": {
            "updates": len(updates),
            "ok": sum(1 for u in updates if u["status"] == "ok"),
            "unusable": sum(1 for u in updates if u["status"] != "ok"),
        },
    }
    if "off" in summary and "on" in summary:
        out["deltas"] = deltas(summary["off"], summary["on"])
    return out


def radar_values(summary: dict[str, Any]) -> list[float | None]:
    """The six ability means in the paper's order, for the radar chart."""
    return [summary["abilities"][a]["mean"] for a in ABILITIES]
