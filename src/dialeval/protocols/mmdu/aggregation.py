"""MMDU records to numbers: the six dimensions and Overall per system, agreement with humans, the per-turn scores `compare` aligns."""

from __future__ import annotations

from typing import Any

from dialeval.protocols.mmdu import metrics
from dialeval.protocols.mmdu.metrics import DIMENSIONS
from dialeval.protocols.mmdu.loading import read_options


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    opts = read_options(options)
    out = {
        "system": records[0]["system"] if records else None,
        "scores": metrics.benchmark_scores(records, opts.aggregation),
        "human": metrics.human_agreement(records),
        # pictures sent with judge requests: dry runs count their caption lines, not image tokens
        "judge_pictures": sum(len(t["judge_images"]) for r in records for t in r["turns"] if t["judge_status"] is not None),
        "context": {
            "window": opts.context_window,
            "policy": opts.overflow,
            "dialogues_with_dropped_turns": {r["id"]: r["dropped_turns"] for r in records if r["dropped_turns"]},
        },
    }
    return out


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {
        f"{d} (1-10)": [t["scores"][d] for r in records for t in r["turns"] if t["scores"].get(d) is not None]
        for d in DIMENSIONS
    }


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per dimension, the readable 1-10 score of every judged turn, keyed ``<dialogue id>/<turn>``."""
    return {
        d: {f"{r['id']}/{t['turn']}": t["scores"][d] for r in records for t in r["turns"] if t["scores"].get(d) is not None}
        for d in DIMENSIONS
    }
