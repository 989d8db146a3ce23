"""Conversations in the formats people keep them: OpenAI chat messages or ShareGPT, JSON or JSONL.

Every record becomes one :class:`Conversation` of numbered turns (a turn is one user or
assistant message, counted from 1; the system prompt is kept apart). Anything unusable
stops the run before the first model call with the file, record and field named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.images import ImageRef, resolve_image
from dialeval.data.io import DataError, read_records

Speaker = Literal["user", "assistant"]
SHAREGPT_ROLES = {
    "human": "user", "user": "user",
    "gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant", "model": "assistant", "bot": "assistant",
    "system": "system",
}
CONVERSATION_KEYS = ("id", "system", "turns", "grounding", "metadata", "summary", "versus")


class Turn(BaseModel):
    """One message of the conversation; ``reference`` is a model reply written by a person."""

    model_config = ConfigDict(extra="forbid")

    number: int = Field(ge=1)
    role: Speaker
    text: str
    images: list[ImageRef] = Field(default_factory=list)
    reference: str | None = None


class Conversation(BaseModel):
    """One conversation to judge, as the graph receives it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    system: str = ""
    turns: list[Turn]
    grounding: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    summary: str | None = None
    versus: list[Turn] | None = None  # the other system's turns (option versus), same user turns

    def assistant_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "assistant"]

    def turn(self, number: int) -> Turn:
        return self.turns[number - 1]


class _Reader:
    """Reads one record, raising :class:`DataError` at the first bad field."""

    def __init__(self, file: Path, record: str | int) -> None:
        self.file, self.record = file, record

    def fail(self, message: str, field: str | None = None) -> DataError:
        return DataError(self.file, message, record=self.record, field=field)

    def text(self, value: Any, field: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"expected text, got {type(value).__name__}", field)
        return value

    def content(self, value: Any, field: str) -> tuple[str, list[ImageRef]]:
        """A message body: text, or OpenAI content parts (text and image_url)."""
        if isinstance(value, str):
            return value, []
        if not isinstance(value, list):
            raise self.fail("expected text or a list of content parts", field)
        texts: list[str] = []
        images: list[ImageRef] = []
        for i, part in enumerate(value):
            where = f"{field}.{i}"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(self.text(part.get("text"), f"{where}.text"))
            elif kind == "image_url":
                images.append(self.image(part.get("image_url"), f"{where}.image_url"))
            else:
                raise self.fail(f"a content part must be {{'type': 'text'}} or {{'type': 'image_url'}}, got {kind!r}", where)
        return "\n".join(texts), images

    def image(self, value: Any, field: str) -> ImageRef:
        url = value.get("url") if isinstance(value, dict) else value
        if not isinstance(url, str) or not url.strip():
            raise self.fail("an image needs a 'url': a data: URL, an http(s) URL or a file inside the data's folder", field)
        if url.startswith("data:") and not (url.startswith("data:image/") and ";base64," in url):
            raise self.fail("a data: URL must be a base64 image (data:image/...;base64,...)", field)
        return resolve_image(ImageRef(source=url), self.file.parent, self.file, self.record, field)

    def messages(self, raw: list[Any], key: str) -> tuple[str, list[Turn]]:
        """System prompt and turns of an OpenAI ``messages`` or ShareGPT ``conversations`` list."""
        system: list[str] = []
        turns: list[Turn] = []
        for i, message in enumerate(raw):
            where = f"{key}.{i}"
            if not isinstance(message, dict):
                raise self.fail("a message must be an object", where)
            if key == "messages":
                role = message.get("role")
                body = message.get("content")
                if role not in ("system", "user", "assistant"):
                    raise self.fail(f"role must be system, user or assistant, got {role!r}", f"{where}.role")
                text, images = self.content(body, f"{where}.content")
            else:
                speaker = message.get("from")
                role = SHAREGPT_ROLES.get(str(speaker).lower()) if isinstance(speaker, str) else None
                if role is None:
                    raise self.fail(f"'from' must be one of {sorted(SHAREGPT_ROLES)}, got {speaker!r}", f"{where}.from")
                text, images = self.text(message.get("value"), f"{where}.value"), []
            reference = message.get("reference")
            if reference is not None and (role != "assistant" or not isinstance(reference, str)):
                raise self.fail("a reference is text on an assistant message", f"{where}.reference")
            if role == "system":
                if turns:
                    raise self.fail("a system message must come before the first turn", where)
                system.append(text)
                continue
            if not text.strip() and not images:
                raise self.fail("the message is empty", where)
            turns.append(Turn.model_validate({"number": len(turns) + 1, "role": role, "text": text, "images": images, "reference": reference}))
        return "\n".join(system), turns

    def conversation(self, raw: Any) -> Conversation:
        if not isinstance(raw, dict):
            raise self.fail("a conversation must be a JSON object")
        has = [k for k in ("messages", "conversations") if k in raw]
        if len(has) != 1:
            raise self.fail("give exactly one of 'messages' (OpenAI) or 'conversations' (ShareGPT)")
        key = has[0]
        known = {key, "id", "system", "grounding", "documents", "metadata", "summary"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise self.fail(f"unknown field; known: {', '.join(sorted(known))}", unknown[0])
        ident = raw.get("id")
        if not isinstance(ident, (str, int)) or isinstance(ident, bool) or not str(ident).strip():
            raise self.fail("every conversation needs an id (text or number)", "id")
        if not isinstance(raw[key], list):
            raise self.fail("expected a list of messages", key)
        system, turns = self.messages(raw[key], key)
        if "system" in raw:
            system = "\n".join(s for s in (self.text(raw["system"], "system"), system) if s)
        if not any(t.role == "assistant" for t in turns):
            raise self.fail("the conversation has no assistant message to judge", key)
        grounding = raw.get("grounding", raw.get("documents", []))
        field = "grounding" if "grounding" in raw else "documents"
        grounding = [grounding] if isinstance(grounding, str) else grounding
        if not isinstance(grounding, list) or not all(isinstance(d, str) for d in grounding):
            raise self.fail("grounding documents are text or a list of texts", field)
        metadata = raw.get("metadata", {})
        if not isinstance(metadata, dict):
            raise self.fail("metadata must be an object", "metadata")
        summary = raw.get("summary")
        if summary is not None:
            summary = self.text(summary, "summary")
        return Conversation(
            id=str(ident), system=system, turns=turns, grounding=grounding, metadata=metadata, summary=summary
        )


def read_conversations(path: str | Path) -> list[tuple[str | int, Conversation]]:
    """Every conversation of a JSON or JSONL file with its record's name for messages; ids unique."""
    path = Path(path)
    raws = read_records(path)
    lines = getattr(raws, "lines", None)
    out: list[tuple[str | int, Conversation]] = []
    seen: set[str] = set()
    for index, raw in enumerate(raws):
        record: str | int = f"{index} (line {lines[index]})" if lines else index
        conversation = _Reader(path, record).conversation(raw)
        if conversation.id in seen:
            raise DataError(path, f"duplicate id {conversation.id!r}", record=record, field="id")
        seen.add(conversation.id)
        out.append((record, conversation))
    if not out:
        raise DataError(path, "no conversations in the file")
    return out


def load_conversations(path: str | Path) -> list[Conversation]:
    return [conversation for _, conversation in read_conversations(path)]


def conversation_of(state: dict[str, Any]) -> Conversation:
    """The conversation a graph was given: a record of the data file as it is (Studio), or
    the loaded form the runner passes."""
    if "turns" in state:
        return Conversation.model_validate({k: state[k] for k in CONVERSATION_KEYS if k in state})
    raw = {k: v for k, v in state.items() if k in ("messages", "conversations", "id", "system", "grounding", "documents", "metadata", "summary")}
    return _Reader(Path("graph-input.json"), "input").conversation({"id": "input", **raw})


def with_versus(conversations: list[Conversation], path: str | Path) -> list[Conversation]:
    """``conversations`` with the other system's turns from ``path`` (the same conversations:
    same ids, the same user turns, another system's assistant turns)."""
    path = Path(path)
    others = {c.id: (record, c) for record, c in read_conversations(path)}
    out = []
    for conv in conversations:
        if conv.id not in others:
            raise DataError(path, f"conversation {conv.id!r} of the data file is missing here", field="id")
        index, other = others[conv.id]
        if [t.role for t in other.turns] != [t.role for t in conv.turns]:
            raise DataError(path, f"conversation {conv.id!r}: the turns do not match the data file's (user/assistant order)",
                            record=index, field="messages")
        for mine, theirs in zip(conv.turns, other.turns):
            if mine.role == "user" and mine.text != theirs.text:
                raise DataError(path, f"conversation {conv.id!r}: user turn {mine.number} differs from the data file's",
                                record=index, field=f"turn {mine.number}")
        out.append(conv.model_copy(update={"versus": other.turns}))
    return out
