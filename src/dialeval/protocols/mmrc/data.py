"""MMRC conversations: ordered user turns with images, and six evaluation questions.

One record is one conversation. Images are numbered 1, 2, ... in the order they appear
across the turns; image-management questions name their ground truth by that number.
Local image paths are resolved against the data file's folder and must be images inside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dialeval.data.images import ImageRef, resolve_image
from dialeval.data.io import DataError, read_records, validate_all

Ability = Literal["IE", "CR", "IU", "IM", "MR", "AR"]
ABILITIES: tuple[Ability, ...] = ("IE", "CR", "IU", "IM", "MR", "AR")
ABILITY_NAMES: dict[str, str] = {
    "IE": "information extraction",
    "CR": "cross-turn reasoning",
    "IU": "information update",
    "IM": "image management",
    "MR": "memory recall",
    "AR": "answer refusal",
}
QuestionFormat = Literal["open", "multiple_choice", "true_false"]


class Turn(BaseModel):
    """One user turn (text, images or both) and, optionally, the recorded assistant reply."""

    model_config = ConfigDict(extra="forbid")

    user: str = ""
    images: list[ImageRef] = Field(default_factory=list)
    assistant: str | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Turn:
        if not self.user.strip() and not self.images:
            raise ValueError("a turn needs user text or at least one image")
        return self


class Question(BaseModel):
    """One evaluation question with its ground truth and what the objective metrics need.

    - ``items`` (IE): the ground-truth items the answer should list (EP).
    - ``images`` (IM): the 1-based numbers of the ground-truth images (IMP).
    - ``refuse`` (AR, optional elsewhere): whether the right behaviour is to refuse (RP).
    """

    model_config = ConfigDict(extra="forbid")

    ability: Ability
    format: QuestionFormat = "open"
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    options: list[str] = Field(default_factory=list)
    items: list[str] = Field(default_factory=list)
    images: list[int] = Field(default_factory=list)
    refuse: bool | None = None

    @field_validator("images")
    @classmethod
    def _positive(cls, images: list[int]) -> list[int]:
        if any(i < 1 for i in images):
            raise ValueError("image numbers start at 1")
        return images

    @model_validator(mode="after")
    def _fields_for_ability(self) -> Question:
        if self.ability == "IE" and not self.items:
            raise ValueError("IE questions need 'items' (the ground-truth items)")
        if self.ability == "IM" and not self.images:
            raise ValueError("IM questions need 'images' (the ground-truth image numbers)")
        if self.ability == "AR" and self.refuse is None:
            raise ValueError("AR questions need 'refuse' (true when the right answer is a refusal)")
        if self.format == "multiple_choice" and len(self.options) < 2:
            raise ValueError("multiple-choice questions need at least two 'options'")
        return self


class Conversation(BaseModel):
    """An MMRC item: the dialogue history S and its six questions q with answers a."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    domain: str = ""
    turns: list[Turn] = Field(min_length=1)
    questions: list[Question] = Field(min_length=1)

    @property
    def images(self) -> list[ImageRef]:
        """Every image of the conversation, in order; image n is ``images[n - 1]``."""
        return [image for turn in self.turns for image in turn.images]

    def image_offsets(self) -> list[int]:
        """The number of the first image of each turn, minus one."""
        offsets, seen = [], 0
        for turn in self.turns:
            offsets.append(seen)
            seen += len(turn.images)
        return offsets


def _check(conv: Conversation, path: Path, record: str) -> Conversation:
    abilities = [q.ability for q in conv.questions]
    missing = [a for a in ABILITIES if a not in abilities]
    if missing:
        raise DataError(path, f"no question for abilities {missing}; each conversation has all six", record, "questions")
    n_images = len(conv.images)
    for index, q in enumerate(conv.questions):
        for number in q.images:
            if number > n_images:
                raise DataError(
                    path, f"image {number} does not exist (the conversation has {n_images})", record, f"questions.{index}.images"
                )
    resolved = []
    for t_index, turn in enumerate(conv.turns):
        images = [
            resolve_image(image, path.parent, path, record, f"turns.{t_index}.images.{i_index}")
            for i_index, image in enumerate(turn.images)
        ]
        resolved.append(turn.model_copy(update={"images": images}))
    return conv.model_copy(update={"turns": resolved})


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read a JSON/JSONL file of conversations; bad input names file, record and field."""
    path = Path(path)
    raws = read_records(path)
    items = validate_all(Conversation, raws, path, id_field="id")
    seen: set[str] = set()
    out = []
    for index, conv in enumerate(items):
        record = f"{index} (id={conv.id!r})"
        if conv.id in seen:
            raise DataError(path, f"duplicate id {conv.id!r}", record=index, field="id")
        seen.add(conv.id)
        out.append(_check(conv, path, record))
    return out
