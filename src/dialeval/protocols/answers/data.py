"""Generic judged answers: one dialogue turn with a reference and a system answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
    question_id: str | None = None  # pairs several systems' answers to one question; default: same context, question, reference

    @property
    def pair_key(self) -> str:
        """What two systems' answers to the same question share, for the paired test."""
        if self.question_id:
            return self.question_id
        import hashlib

        text = "\x00".join((self.context.strip(), self.question.strip(), self.reference.strip()))
        return "q-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def answer_item(record: dict[str, Any]) -> AnswerItem:
    """A graph input (one record of the data file) as an item; the id may be left out
    in Studio. A missing or mistyped field is named in the error."""
    fields = {k: v for k, v in record.items() if k in AnswerItem.model_fields}
    try:
        return AnswerItem.model_validate({"id": "input", **fields})
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        raise ValueError(f"answers input is not a record of the answers format ({problems})") from None


def load_answers(path: str | Path) -> list[AnswerItem]:
    items = validate_all(AnswerItem, read_records(path), path, id_field="id")
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.id in seen:
            raise DataError(path, f"duplicate id {item.id!r}", record=index, field="id")
        seen.add(item.id)
    return items
