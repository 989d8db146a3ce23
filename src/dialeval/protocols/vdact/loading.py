"""VDAct items: one system's dialogue read for a run, the graph's input, the record kept of it and what the run judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.benchmarks import RunFacts
from dialeval.protocols.vdact.data import Dialogue, load_dialogues
from dialeval.protocols.vdact.options import EXAMPLE_JUDGES, parse_options
from dialeval.protocols.vdact.metrics import question_types


def load(path: Path, options: dict[str, Any]) -> list[Dialogue]:
    opts = parse_options(options)
    return load_dialogues(
        path,
        summary=opts.summary_kind,  # type: ignore[arg-type]
        kg_dir=opts.kg_dir,
        summary_path=opts.summary_path,
        human_scores=opts.human_scores,
        example_path=opts.example_path,
        example_dialogue=opts.example_dialogue,
    )


def to_input(item: Dialogue, options: dict[str, Any]) -> dict[str, Any]:
    """The graph's input: the dialogue in its data file's format, its summary and the example."""
    return {
        "records": item.prediction_records(),
        "summary": item.summary,
        "example": item.example.model_dump() if item.example else None,
    }


def to_record(item: Dialogue, state: dict[str, Any]) -> dict[str, Any]:
    from dialeval.models.usage import current_ledger

    judged = {entry["turn_id"]: entry for entry in state.get("judged", [])}
    calls = [entry["call"] for entry in state.get("judged", []) if entry.get("call")]
    agent = calls[0]["agent"] if calls else None
    ledger = current_ledger.get()
    example = state.get("example") or {}
    return {
        "id": item.id,
        "system": item.system,
        "dial_id": item.dial_id,
        "scenario": item.scenario,
        "agent": agent,
        "summary_used": item.summary is not None,
        "example": (example.get("source") or "built-in") if agent in EXAMPLE_JUDGES else None,
        "turns": [
            {
                "id": t.id,
                "turn_num": t.turn_num,
                "scores": judged.get(t.id, {}).get("scores"),
                "status": judged.get(t.id, {}).get("status", "missing"),
                "types": question_types(t.question, t.reference),
                "human": t.human,
                "reference": t.reference,
                "candidate": t.candidate,
            }
            for t in item.turns
        ],
        "usage": ledger.totals() if ledger is not None else {},
        "source_dialogues": item.source_dialogues,
        "source_turns": item.source_turns,
        "calls": calls,
    }


def describe(run: RunFacts) -> str:
    """The system responses of the data file and the judge that scored them."""
    return f"the system responses in `{run.data}`, judged by `{run.model('judge')}` ({run.options.get('judge', 'session')} judge)"
