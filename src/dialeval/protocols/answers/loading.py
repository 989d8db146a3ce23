"""`answers` items: the answers file read for a run (after its options are checked), the graph's input and the record kept of each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from dialeval.config import parse_options
from dialeval.protocols.answers.data import AnswerItem, load_answers


class AnswersOptions(BaseModel):
    """``options:`` of an answers run: none yet, so any key given is a mistake to name."""

    model_config = ConfigDict(extra="forbid")


def load(path: Path, options: dict[str, Any]) -> list[AnswerItem]:
    """The answers file, after the options are checked as every benchmark checks them."""
    parse_options(AnswersOptions, options, "answers")
    return load_answers(path)


def to_input(item: AnswerItem, options: dict[str, Any]) -> dict[str, Any]:
    return item.model_dump()


def to_record(item: AnswerItem, state: dict[str, Any]) -> dict[str, Any]:
    grade = state["grade"]
    score = grade["value"]["score"] if grade["status"] == "ok" else None
    return {"id": item.id, "system": item.system, "pair": item.pair_key, "score": score, "calls": [grade]}
