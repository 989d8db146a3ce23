"""`answers` records to numbers: mean score per system, paired tests between systems, per-answer scores for `compare`."""

from __future__ import annotations

from typing import Any

from dialeval.metrics.paired import system_tests
from dialeval.metrics.scores import mean_or_none, scale_to_unit


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    systems: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        systems.setdefault(r["system"], []).append(r)
    table = {}
    for name, rows in sorted(systems.items()):
        scores = [r["score"] for r in rows if r["score"] is not None]
        mean = mean_or_none(scores)
        unread = [_status(r) for r in rows if r["score"] is None]
        table[name] = {
            "items": len(rows),
            "scored": len(scores),
            "unparsed": len(unread) - unread.count("truncated"),  # unreadable verdicts
            "truncated": unread.count("truncated"),  # verdicts cut off at the token limit
            "mean_score": mean,
            "mean_scaled": None if mean is None else scale_to_unit(mean, 1, 5),
        }
    by_system = {name: {"score (1-5)": {r.get("pair", r["id"]): r["score"] for r in rows}} for name, rows in systems.items()}
    return {"systems": table, "system_tests": system_tests(by_system)}


def _status(record: dict[str, Any]) -> str:
    """How the judge's call ended (``truncated``: cut off at the token limit)."""
    calls = record.get("calls") or [{}]
    return str(calls[-1].get("status", "unparsed"))


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {"score (1-5)": [r["score"] for r in records if r["score"] is not None]}


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The judge's 1-5 score per item, readable answers only (for `dialeval compare`)."""
    return {"score (1-5)": {r["id"]: r["score"] for r in records if r["score"] is not None}}
