"""MMDU dialogues, system answers and human scores.

A dialogue is one record of the released benchmark file: ``{"id", "image": [paths],
"conversations": [{"from": "user"|"assistant", "value": ...}, ...]}``, user and
assistant messages alternating, the assistant messages being the reference answers.
The file is a JSON list of records, a JSON object of records keyed by id (the released
``benchmark.json``), or JSONL. Text marks where image ``i`` belongs with ``<image-i>``;
the released files' ``<ImageHere>`` placeholders (the k-th one in the dialogue is image
k) are read as ``<image-k>``. Every tag must resolve to an image, and local images must
be images inside the data file's folder (or the ``image_root`` option); errors name
the dialogue, the turn and the tag.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from dialeval.data.io import DataError, read_records, validate_record
from dialeval.data.images import ImageRef, resolve_image

TAG = re.compile(r"<image-(\d+)>")
PLACEHOLDER = "<ImageHere>"


class Message(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    role: Literal["user", "assistant"] = Field(validation_alias=AliasChoices("from", "role"))
    value: str

    @field_validator("role", mode="before")
    @classmethod
    def _aliases(cls, value: object) -> object:
        return {"human": "user", "gpt": "assistant"}.get(value, value) if isinstance(value, str) else value


class Turn(BaseModel):
    """One question, its reference answer, and the images its question tags (in tag order)."""

    number: int
    question: str
    reference: str
    images: list[int]


class Dialogue(BaseModel):
    """One MMDU dialogue in the released format (extra keys are kept out, not refused)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    image: list[ImageRef] = Field(default_factory=list, validation_alias=AliasChoices("image", "images"))
    conversations: list[Message] = Field(min_length=2)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) else value

    @property
    def turns(self) -> list[Turn]:
        out = []
        for k in range(0, len(self.conversations) - 1, 2):
            question, reference = self.conversations[k].value, self.conversations[k + 1].value
            out.append(Turn(number=k // 2 + 1, question=question, reference=reference, images=tags_in(question)))
        return out


class MmduItem(BaseModel):
    """What the runner evaluates: a dialogue, and the system's answers when given."""

    id: str
    dialogue: Dialogue
    answers: list[str] | None = None
    system: str = "model under test"
    human: dict[int, float] = Field(default_factory=dict, description="turn -> expert Overall score")


class HumanScore(BaseModel):
    """One expert Overall score (1-10) of one turn's answer."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    turn: int = Field(ge=1)
    overall: float = Field(ge=1, le=10)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) else value


def tags_in(text: str) -> list[int]:
    """Image numbers tagged in ``text``, in order of first appearance."""
    seen: list[int] = []
    for match in TAG.finditer(text):
        number = int(match.group(1))
        if number not in seen:
            seen.append(number)
    return seen


def number_placeholders(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``<ImageHere>`` placeholders of the released files as ``<image-k>``, numbered in dialogue order."""
    count = 0

    def number(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"<image-{count}>"

    out = []
    for message in messages:
        if isinstance(message, dict) and isinstance(message.get("value"), str) and PLACEHOLDER in message["value"]:
            message = {**message, "value": re.sub(re.escape(PLACEHOLDER), number, message["value"])}
        out.append(message)
    return out


def dialogue_problems(dialogue: Dialogue) -> list[tuple[str, str]]:
    """(field, message) for every structural fault: roles out of order, tags without image."""
    problems: list[tuple[str, str]] = []
    messages = dialogue.conversations
    for k, message in enumerate(messages):
        expected = "user" if k % 2 == 0 else "assistant"
        if message.role != expected:
            turn = k // 2 + 1
            problems.append(
                (f"conversations.{k}.from", f"dialogue {dialogue.id!r}, turn {turn}: expected the {expected}'s message, got the {message.role}'s")
            )
    if len(messages) % 2:
        problems.append((f"conversations.{len(messages) - 1}", f"dialogue {dialogue.id!r}: the last question has no reference answer"))
    n = len(dialogue.image)
    for k, message in enumerate(messages):
        for match in TAG.finditer(message.value):
            number = int(match.group(1))
            if not 1 <= number <= n:
                turn = k // 2 + 1
                where = "question" if k % 2 == 0 else "reference answer"
                problems.append(
                    (
                        f"conversations.{k}.value",
                        f"dialogue {dialogue.id!r}, turn {turn} ({where}): tag {match.group(0)} has no image "
                        f"(the dialogue has {n} image{'s' if n != 1 else ''})",
                    )
                )
    return problems


def check_dialogue(dialogue: Dialogue) -> Dialogue:
    """The dialogue if it is well formed, else ``ValueError`` naming dialogue, turn and tag."""
    problems = dialogue_problems(dialogue)
    if problems:
        raise ValueError(problems[0][1])
    return dialogue


def _records(path: Path) -> list[Any]:
    raws = read_records(path)
    if len(raws) == 1 and isinstance(raws[0], dict) and "conversations" not in raws[0]:
        keyed = raws[0]  # the released benchmark.json: {id: record}
        if keyed and all(isinstance(v, dict) for v in keyed.values()):
            return [{"id": key, **value} if "id" not in value else value for key, value in keyed.items()]
    return raws


def _resolve_images(dialogue: Dialogue, root: Path, path: Path, record: str) -> Dialogue:
    images = [
        resolve_image(image, root, path, record, f"image.{index}", what=f"dialogue {dialogue.id!r}: image {index + 1}")
        for index, image in enumerate(dialogue.image)
    ]
    return dialogue.model_copy(update={"image": images})


def load_dialogues(path: str | Path, image_root: str | Path | None = None) -> list[Dialogue]:
    """Read MMDU dialogues; local image paths are resolved against ``image_root`` (default: the file's folder)."""
    path = Path(path)
    root = Path(image_root) if image_root is not None else path.parent
    out: list[Dialogue] = []
    seen: set[str] = set()
    for index, raw in enumerate(_records(path)):
        name = f"{index} (id={raw.get('id')!r})" if isinstance(raw, dict) and "id" in raw else index
        if isinstance(raw, dict) and isinstance(raw.get("conversations"), list):
            raw = {**raw, "conversations": number_placeholders(raw["conversations"])}
        dialogue = validate_record(Dialogue, raw, path, name)
        for field, message in dialogue_problems(dialogue):
            raise DataError(path, message, record=name, field=field)
        if dialogue.id in seen:
            raise DataError(path, f"duplicate id {dialogue.id!r}", record=name, field="id")
        seen.add(dialogue.id)
        out.append(_resolve_images(dialogue, root, path, str(name)))
    return out


def _answers_of(raw: dict[str, Any]) -> list[str] | None:
    if isinstance(raw.get("answers"), list):
        return raw["answers"]
    if isinstance(raw.get("conversations"), list):  # the authors' generation output: the record, answers in place
        return [m.get("value", "") for m in raw["conversations"] if isinstance(m, dict) and m.get("from", m.get("role")) in ("assistant", "gpt")]
    return None


def load_predictions(path: str | Path, dialogues: list[Dialogue]) -> dict[str, list[str]]:
    """System answers per dialogue id, one per turn, from a file or a folder of ``<id>.json``.

    A record is ``{"id", "answers": [...]}`` or the dialogue record with the system's
    answers in place of the references (what the authors' generation scripts write).
    Every dialogue needs an answer for every turn.
    """
    path = Path(path)
    files = sorted(path.glob("*.json")) + sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise DataError(path, "no .json or .jsonl prediction files in this folder")
    found: dict[str, tuple[Path, list[str]]] = {}
    for file in files:
        for index, raw in enumerate(_records(file)):
            if not isinstance(raw, dict):
                raise DataError(file, "a prediction record must be an object", record=index)
            pid = str(raw.get("id") if raw.get("id") is not None else (file.stem if path.is_dir() else ""))
            if not pid:
                raise DataError(file, "a prediction record needs an 'id'", record=index, field="id")
            answers = _answers_of(raw)
            if answers is None or not all(isinstance(a, str) for a in answers):
                raise DataError(file, f"dialogue {pid!r}: expected 'answers' (a list of strings) or 'conversations'", record=index)
            found[pid] = (file, answers)
    out: dict[str, list[str]] = {}
    for dialogue in dialogues:
        if dialogue.id not in found:
            raise DataError(path, f"no answers for dialogue {dialogue.id!r}")
        file, answers = found[dialogue.id]
        n = len(dialogue.turns)
        if len(answers) != n:
            missing = f"turn {len(answers) + 1} has no answer" if len(answers) < n else f"{len(answers) - n} answers too many"
            raise DataError(file, f"dialogue {dialogue.id!r} has {n} turns but {len(answers)} answers: {missing}", record=f"id={dialogue.id!r}", field="answers")
        out[dialogue.id] = answers
    return out


def load_human_scores(path: str | Path, dialogues: list[Dialogue]) -> dict[tuple[str, int], float]:
    """Expert Overall scores: JSON/JSONL rows ``{"id": <dialogue id>, "turn": <1-based>, "overall": 1-10}``."""
    path = Path(path)
    turns = {d.id: len(d.turns) for d in dialogues}
    out: dict[tuple[str, int], float] = {}
    for index, raw in enumerate(read_records(path)):
        row = validate_record(HumanScore, raw, path, index)
        if row.id not in turns:
            raise DataError(path, f"dialogue {row.id!r} is not in the data", record=index, field="id")
        if row.turn > turns[row.id]:
            raise DataError(path, f"dialogue {row.id!r} has {turns[row.id]} turns, not {row.turn}", record=index, field="turn")
        out[(row.id, row.turn)] = row.overall
    return out
