"""Generic judged answers: one dialogue turn with a reference and a system answer."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.io import DataError, read_records, validate_all


class AnswerItem(BaseModel):
    """A question asked in a conversation, a reference answer and the answer to grade."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    context: str = ""
    question: str = Field(min_length=1)
    reference: str = Field(min_length=1)
    answer: str
    system: str = "system"


def load_answers(path: str | Path) -> list[AnswerItem]:
    items = validate_all(AnswerItem, read_records(path), path, id_field="id")
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.id in seen:
            raise DataError(path, f"duplicate id {item.id!r}", record=index, field="id")
        seen.add(item.id)
    return items
