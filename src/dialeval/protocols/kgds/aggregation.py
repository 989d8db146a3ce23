"""KGDS records to numbers: the corpus metrics, the score dimensions and the per-sample scores `compare` aligns."""

from __future__ import annotations

import json
from typing import Any

from dialeval.protocols.kgds.prompt_echo import echoes
from dialeval.protocols.kgds.metrics import SCORED, aggregate_scores, win_rate

PATTERN_TITLES = {"ebs": "EBS-AOS", "abs": "ABS-AOS"}
BACKGROUND_METRIC = {"ebs": "BSP", "abs": "KBSAF"}


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    feedback = [f for r in records for f in r.get("feedback", [])]
    judged = [f for f in feedback if "call" in f]
    skipped = {reason: sum(1 for f in feedback if f.get("skipped") == reason) for reason in {f.get("skipped") for f in feedback} - {None}}
    generation = sorted(
        {json.dumps(s["generation"], sort_keys=True) for r in records for s in r.get("summaries", []) if s.get("generation")}
    )
    return {
        "samples": len(records),
        "patterns": aggregate_scores([r["scores"] for r in records]),
        "feedback": {
            **win_rate([f["winner"] for f in judged], [f.get("status") or f["call"]["status"] for f in judged]),
            "same_as_gold": skipped.pop("same as gold", 0),
            "not_judged": skipped,
        },
        "system_generation": [json.loads(g) for g in generation],
        "prompt_echoes": echoes(records),
    }


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    facts = [float(v) for r in records for c in r.get("fact_checks", []) for v in c["knowable"] if v is not None]
    opinions = [float(c["knowable"]) for r in records for c in r.get("opinion_checks", []) if c["knowable"] is not None]
    return {"fact knowable (0/1)": facts, "opinion knowable (0/1)": opinions}


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per sample, every scored metric as ``"<pattern>/r<round>/<metric>"`` (e.g.
    ``abs/r0/op_gm``): zeros of failed summaries included, judge failures left out."""
    out: dict[str, dict[str, float]] = {}
    for record in records:
        for pattern, rounds in record.get("scores", {}).items():
            for r, summary in rounds.items():
                for name, value in scored_values(pattern, summary).items():
                    out.setdefault(f"{pattern}/r{r}/{name}", {})[record["id"]] = value
    return out


def scored_values(pattern: str, row: dict[str, Any]) -> dict[str, float]:
    """The metrics of one summary that carry a value (outcome ok or system_failed)."""
    prefix = BACKGROUND_METRIC[pattern].lower()
    values: dict[str, float] = {}
    if row["outcome"]["background"] in SCORED and row["background"]:
        for key, short in (("recall", "r"), ("precision", "p"), ("f1", "f1")):
            values[f"{prefix}_{short}"] = row["background"][key]
    for key in ("cao_recall", "op_gm"):
        if row["outcome"][key] in SCORED and row[key] is not None:
            values[key] = row[key]
    return values
