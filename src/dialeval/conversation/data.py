"""Conversations in the formats people keep them: OpenAI chat messages or ShareGPT, JSON or JSONL.

Every record becomes one :class:`Conversation` of numbered turns (a turn is one user or
assistant message, counted from 1; the system prompt is kept apart). Anything unusable
stops the run before the first model call with the file, record and field named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.images import ImageRef
from dialeval.data.io import DataError, read_records
from dialeval.conversation.messages import MessageReader, read_messages
from dialeval.conversation.toolcalls import ToolCall

Speaker = Literal["user", "assistant"]
CONVERSATION_KEYS = ("id", "system", "turns", "grounding", "metadata", "summary", "versus", "tools", "reference_tool_calls")
RECORD_KEYS = ("id", "system", "grounding", "documents", "metadata", "summary", "tools", "reference_tool_calls")


class Turn(BaseModel):
    """One message of the conversation; ``reference`` is a model reply written by a person."""

    model_config = ConfigDict(extra="forbid")

    number: int = Field(ge=1)
    role: Speaker
    text: str
    images: list[ImageRef] = Field(default_factory=list)
    reference: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)  # the assistant's calls in this turn, with their results
    reference_tool_calls: list[ToolCall] | None = None  # the calls it should have made (trajectory criteria)


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
    tools: list[dict[str, Any]] = Field(default_factory=list)  # the tool definitions the assistant had
    reference_tool_calls: list[ToolCall] | None = None  # the calls of the whole conversation it should have made

    def tool_calls(self) -> list[ToolCall]:
        return [call for t in self.assistant_turns() for call in t.tool_calls]

    def assistant_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "assistant"]

    def turn(self, number: int) -> Turn:
        return self.turns[number - 1]


class _Reader(MessageReader):
    """Reads one record, raising :class:`DataError` at the first bad field."""

    def messages(self, raw: list[Any], key: str) -> tuple[str, list[Turn]]:
        system, turns = read_messages(self, raw, key)
        return system, [Turn.model_validate(t) for t in turns]

    def tools(self, value: Any) -> list[dict[str, Any]]:
        """The tools the assistant had: a list of definitions (or its JSON text, as LLaMA-Factory keeps it)."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise self.fail("tools are a list of tool definitions (or its JSON text)", "tools") from None
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            raise self.fail("tools are a list of tool definitions (objects)", "tools")
        return value

    def conversation(self, raw: Any) -> Conversation:
        if not isinstance(raw, dict):
            raise self.fail("a conversation must be a JSON object")
        has = [k for k in ("messages", "conversations") if k in raw]
        if len(has) != 1:
            raise self.fail("give exactly one of 'messages' (OpenAI) or 'conversations' (ShareGPT)")
        key = has[0]
        known = {key, *RECORD_KEYS}
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
        tools = self.tools(raw["tools"]) if "tools" in raw else []
        expected = self.reference_calls(raw.get("reference_tool_calls"), "reference_tool_calls")
        return Conversation(
            id=str(ident), system=system, turns=turns, grounding=grounding, metadata=metadata, summary=summary,
            tools=tools, reference_tool_calls=None if expected is None else [ToolCall.model_validate(c) for c in expected],
        )


def check_record(path: str | Path, record: str | int, raw: Any) -> Conversation:
    """One record read alone as a conversation (an importer checks each on its own)."""
    return _Reader(Path(path), record).conversation(raw)


def read_conversations(path: str | Path, fmt: str = "dialogue", columns: dict[str, str] | None = None) -> list[tuple[str | int, Conversation]]:
    """Every conversation of a JSON or JSONL file with its record's name for messages; ids unique.
    Another ``fmt`` (otel, langsmith, langfuse, hf) is imported first (dialeval.data.importers)."""
    path = Path(path)
    if fmt == "dialogue":
        raws = read_records(path)
    else:
        from dialeval.data.importers import import_records

        raws = import_records(fmt, path, {"columns": columns or {}})
    lines = getattr(raws, "lines", None)
    out: list[tuple[str | int, Conversation]] = []
    seen: set[str] = set()
    for index, raw in enumerate(raws):
        record: str | int = f"{index} (line {lines[index]})" if lines else index
        if fmt != "dialogue":
            record = f"{index} (conversation {raw.get('id')!r} imported as {fmt})"
        conversation = _Reader(path, record).conversation(raw)
        if conversation.id in seen:
            raise DataError(path, f"duplicate id {conversation.id!r}", record=record, field="id")
        seen.add(conversation.id)
        out.append((record, conversation))
    if not out:
        raise DataError(path, "no conversations in the file")
    return out


def load_conversations(path: str | Path, fmt: str = "dialogue", columns: dict[str, str] | None = None) -> list[Conversation]:
    return [conversation for _, conversation in read_conversations(path, fmt, columns)]


def conversation_of(state: dict[str, Any]) -> Conversation:
    """The conversation a graph was given: a record of the data file as it is (Studio), or
    the loaded form the runner passes."""
    if "turns" in state:
        return Conversation.model_validate({k: state[k] for k in CONVERSATION_KEYS if k in state})
    raw = {k: v for k, v in state.items() if k in ("messages", "conversations", *RECORD_KEYS)}
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
