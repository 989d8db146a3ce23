"""MMRC records to numbers: judge means per ability and condition, EP, IMP, RP, and the per-conversation scores `compare` aligns."""

from __future__ import annotations

from typing import Any

from dialeval.protocols.mmrc import metrics

CONDITION_LABEL = {"off": "responder", "on": "+ NOTE-TAKING"}


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    return metrics.aggregate(records)


def _dimension(condition: str, metric: str) -> str:
    return f"{metric}, notes {condition}"


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per condition: the judge score (0-5) of every "<conversation id>/<ability>" (the mean
    when a conversation has several questions of one ability), EP / IMP per question of
    theirs, and RP (1 refused, 0 answered) per question whose right answer is a refusal;
    unreadable verdicts are left out."""
    collected: dict[str, dict[str, list[float]]] = {}

    def add(dimension: str, unit: str, value: float | None) -> None:
        if value is not None:
            collected.setdefault(dimension, {}).setdefault(unit, []).append(value)

    for record in records:
        for q in record["questions"]:
            unit = f"{record['id']}/{q['ability']}"
            add(_dimension(q["condition"], "score (0-5)"), unit, q["score"])
            if q.get("ep") is not None and q["ep"]["status"] == "ok":
                add(_dimension(q["condition"], "EP"), unit, metrics.extraction_precision(q["ep"]["n_model"], q["ep"]["n_hit"]))
            if q.get("imp") is not None:
                add(_dimension(q["condition"], "IMP"), unit, metrics.image_precision(q["imp"]["hits"], q["imp"]["misses"]))
            refusal = q.get("refusal")
            if refusal is not None and refusal["status"] == "ok" and refusal["expected"] and refusal["refused"] is not None:
                add(_dimension(q["condition"], "RP"), unit, float(bool(refusal["refused"])))  # refused where a refusal was right
    return {
        dim: {unit: sum(v) / len(v) for unit, v in sorted(units.items())} for dim, units in sorted(collected.items())
    }


def frame_columns(unit: str, dimension: str) -> dict[str, str]:
    """to_pandas' own columns for the ability (the unit's last part), the condition and the metric
    (the dimension's two parts), which item_scores packs into the unit id and the dimension."""
    metric, _, condition = dimension.rpartition(", notes ")
    return {"ability": unit.rsplit("/", 1)[-1], "condition": condition, "metric": metric}


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Judge scores per ability and condition, for the report's score histograms."""
    out: dict[str, list[float]] = {}
    for record in records:
        for q in record["questions"]:
            if q["score"] is not None and q["score_source"] == "judge":
                out.setdefault(f"{q['ability']} notes {q['condition']} (0-5)", []).append(q["score"])
    return dict(sorted(out.items()))
