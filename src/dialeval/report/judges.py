"""What the ensembles and cascades of a run did: units, the share escalated, calls and cost per stage.

Each unit a composite judge decided records its stages and votes
(:mod:`dialeval.agents.ensemble`); this sums them for ``usage.json`` and the report.
"""

from __future__ import annotations

from typing import Any, Iterator

from dialeval.report.tables import markdown_table


def _records(value: Any) -> Iterator[dict[str, Any]]:
    """Every composite judge record (``call.judge``) inside one result."""
    if isinstance(value, dict):
        judge = value.get("judge")
        if isinstance(judge, dict) and "votes" in judge and "kind" in judge:
            yield judge
            return
        for v in value.values():
            yield from _records(v)
    elif isinstance(value, list):
        for v in value:
            yield from _records(v)


def judge_stages(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per composite judge: units, escalated units and their share, and per stage the
    model calls, cache hits, tokens and cost (cached answers cost nothing here)."""
    out: dict[str, dict[str, Any]] = {}
    for record in (r for result in results for r in _records(result)):
        row = out.setdefault(record["label"], {"kind": record["kind"], "units": 0, "escalated": 0, "stages": {}})
        row["units"] += 1
        row["escalated"] += bool(record.get("escalated"))
        for vote in record["votes"]:
            stage = row["stages"].setdefault(str(vote["stage"]), {"models": [], "calls": 0, "cached": 0, "input_tokens": 0,
                                                                  "output_tokens": 0, "cost_usd": 0.0})
            if vote["model"] not in stage["models"]:
                stage["models"].append(vote["model"])
            stage["calls"] += 1
            stage["cached"] += bool(vote.get("cached"))
            stage["input_tokens"] += int(vote.get("input_tokens") or 0)
            stage["output_tokens"] += int(vote.get("output_tokens") or 0)
            stage["cost_usd"] = round(stage["cost_usd"] + float(vote.get("cost") or 0.0), 8)
    for row in out.values():
        row["escalated_share"] = row["escalated"] / row["units"] if row["units"] else None
    return out


def judge_lines(judges: dict[str, dict[str, Any]]) -> list[str]:
    """The report's section on composite judges (none: no lines)."""
    if not judges:
        return []
    lines = ["", "## Ensembles and cascades", ""]
    rows = []
    for label, j in judges.items():
        share = "" if j["kind"] == "ensemble" else f"{j['escalated']} ({100 * (j['escalated_share'] or 0):.0f}%)"
        for stage, s in j["stages"].items():
            rows.append([f"`{label}`", stage, ", ".join(f"`{m}`" for m in s["models"]), j["units"] if stage == "0" else "",
                         share if stage == "0" else "", s["calls"], s["cached"], s["input_tokens"], s["output_tokens"],
                         f"{s['cost_usd']:.4f}"])
    lines += markdown_table(["judge", "stage", "models", "units", "escalated", "calls", "cache hits", "input tokens",
                             "output tokens", "cost (USD)"], rows, "llllrrrrrr")
    return lines
