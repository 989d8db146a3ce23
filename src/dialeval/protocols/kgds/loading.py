"""KGDS items: the samples (and a system's predictions) read for a run, the graph's input and the record kept of each."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.protocols.kgds.common import KgdsOptions
from dialeval.config import parse_options as config_options
from dialeval.protocols.kgds.data import KgdsSample, load_kgds, load_predictions, missing_predictions
from dialeval.protocols.kgds.prompt_echo import echoed_fields, sample_material


@dataclass
class KgdsItem:
    """One sample to evaluate, with the system's predictions when they are given."""

    id: str
    sample: KgdsSample
    predictions: list[dict[str, Any]] | None = field(default=None)  # Prediction dumps and missing entries


def parse_options(options: dict[str, Any]) -> KgdsOptions:
    return config_options(KgdsOptions, options, "kgds")


def load(path: Path, options: dict[str, Any]) -> list[KgdsItem]:
    opts = parse_options(options)
    samples = load_kgds(path)
    if opts.predictions is None:
        return [KgdsItem(s.id, s) for s in samples]
    preds = load_predictions(opts.predictions, samples)
    missing = missing_predictions(preds, [s.id for s in samples])
    return [KgdsItem(s.id, s, [p.model_dump() for p in preds.get(s.id, [])] + missing[s.id]) for s in samples]


def to_input(item: KgdsItem, options: dict[str, Any]) -> dict[str, Any]:
    """The sample as it is in KGDS.json (the graph's input format), plus options."""
    return {
        **item.sample.model_dump(exclude_none=True),
        "options": parse_options(options).model_dump(),
        "predictions": item.predictions,
    }


def _without_messages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "messages"} for r in rows]


def to_record(item: KgdsItem, state: dict[str, Any]) -> dict[str, Any]:
    parts = ("summaries", "fact_checks", "opinion_checks", "error_checks", "feedback", "decompositions")
    record: dict[str, Any] = {"id": item.id, "scores": state.get("scores", {})}
    for part in parts:
        record[part] = _without_messages(state.get(part) or [])
    material = sample_material(item.sample.model_dump())
    for summary in record["summaries"]:  # flagged, still scored: the summary is the system's
        summary["echoes_prompt"] = echoed_fields(summary, material)
    record["calls"] = [r["call"] for part in parts for r in record[part] if r.get("call")]
    return record
