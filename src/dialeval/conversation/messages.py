"""A message list as turns: OpenAI ``messages`` (with ``tool_calls`` and ``tool`` results,
or Anthropic ``tool_use`` / ``tool_result`` blocks) and ShareGPT ``conversations`` (with
``function_call`` / ``observation``).

An assistant's tool calls, their results and the reply that follows them are one turn:
an assistant message continues the turn while it still waits on its calls' results. An
empty assistant message is a turn with empty text (a bot that said nothing), never refused.
Every problem raises the reader's ``DataError`` naming the message and field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dialeval.data.images import ImageRef, resolve_image
from dialeval.data.io import DataError
from dialeval.conversation.toolcalls import parsed_arguments

SHAREGPT_ROLES = {
    "human": "user", "user": "user",
    "gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant", "model": "assistant", "bot": "assistant",
    "system": "system",
    "function_call": "call", "tool_call": "call",
    "observation": "result", "tool": "result", "function": "result",
}
SKIPPED_PARTS = ("thinking", "redacted_thinking")  # a model's hidden reasoning: not part of what it said


class MessageReader:
    """Reads the messages of one record; ``turns`` come back as dicts for :class:`Turn`."""

    def __init__(self, file: Path, record: str | int) -> None:
        self.file, self.record = file, record

    def fail(self, message: str, field: str | None = None) -> DataError:
        return DataError(self.file, message, record=self.record, field=field)

    def text(self, value: Any, field: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"expected text, got {type(value).__name__}", field)
        return value

    def image(self, value: Any, field: str) -> ImageRef:
        url = value.get("url") if isinstance(value, dict) else value
        if not isinstance(url, str) or not url.strip():
            raise self.fail("an image needs a 'url': a data: URL, an http(s) URL or a file inside the data's folder", field)
        if url.startswith("data:") and not (url.startswith("data:image/") and ";base64," in url):
            raise self.fail("a data: URL must be a base64 image (data:image/...;base64,...)", field)
        return resolve_image(ImageRef(source=url), self.file.parent, self.file, self.record, field)

    def anthropic_image(self, source: Any, field: str) -> ImageRef:
        if isinstance(source, dict) and source.get("type") == "base64":
            return self.image(f"data:{source.get('media_type')};base64,{source.get('data')}", field)
        return self.image(source, field)

    def parts(self, value: Any, field: str) -> dict[str, list[Any]]:
        """A message body's pieces: texts, images, tool uses and tool results (in order)."""
        out: dict[str, list[Any]] = {"texts": [], "images": [], "uses": [], "results": []}
        if value is None:
            return out
        if isinstance(value, str):
            out["texts"].append(value)
            return out
        if not isinstance(value, list):
            raise self.fail("expected text or a list of content parts", field)
        for i, part in enumerate(value):
            where = f"{field}.{i}"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                out["texts"].append(self.text(part.get("text"), f"{where}.text"))
            elif kind == "image_url":
                out["images"].append(self.image(part.get("image_url"), f"{where}.image_url"))
            elif kind == "image":
                out["images"].append(self.anthropic_image(part.get("source"), f"{where}.source"))
            elif kind == "tool_use":
                out["uses"].append(self.call(part.get("name"), part.get("input"), part.get("id"), where, "input"))
            elif kind == "tool_result":
                body = self.result_text(part.get("content"), f"{where}.content")
                out["results"].append((part.get("tool_use_id"), body, bool(part.get("is_error")), where))
            elif kind not in SKIPPED_PARTS:
                raise self.fail(
                    f"a content part is text, image_url, image, tool_use or tool_result, got {kind!r}", where
                )
        return out

    def result_text(self, value: Any, field: str) -> str:
        """A tool result as text: a string, or text parts (a picture is named, not kept)."""
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            pieces = []
            for i, part in enumerate(value):
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text":
                    pieces.append(self.text(part.get("text"), f"{field}.{i}.text"))
                elif kind in ("image", "image_url"):
                    pieces.append("[image]")
                else:
                    raise self.fail(f"a tool result part is text or an image, got {kind!r}", f"{field}.{i}")
            return "\n".join(pieces)
        return json.dumps(value, ensure_ascii=False)  # a structured result, kept as JSON text

    def call(self, name: Any, arguments: Any, ident: Any, where: str, key: str = "arguments") -> dict[str, Any]:
        if not isinstance(name, str) or not name.strip():
            raise self.fail("a tool call needs a 'name'", f"{where}.name")
        if ident is not None and not isinstance(ident, (str, int)):
            raise self.fail("a tool call's id is text", f"{where}.id")
        args = parsed_arguments(arguments)
        if not isinstance(args, (dict, list, str)):
            raise self.fail("arguments are a JSON object (or its text)", f"{where}.{key}")
        return {"name": name, "arguments": args, "id": None if ident is None else str(ident)}

    def openai_calls(self, value: Any, field: str) -> list[dict[str, Any]]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail("tool_calls is a list of calls", field)
        calls = []
        for i, raw in enumerate(value):
            where = f"{field}.{i}"
            if not isinstance(raw, dict):
                raise self.fail("a tool call is an object", where)
            function = raw.get("function", raw)
            if not isinstance(function, dict):
                raise self.fail("a tool call's 'function' is an object with name and arguments", f"{where}.function")
            calls.append(self.call(function.get("name"), function.get("arguments"), raw.get("id"),
                                   f"{where}.function" if "function" in raw else where))
        return calls

    def reference_calls(self, value: Any, field: str) -> list[dict[str, Any]] | None:
        """Expected tool calls (``reference_tool_calls``): ``{name, arguments}`` or OpenAI's shape."""
        return None if value is None else self.openai_calls(value, field)


class TurnBuilder:
    """Collects turns; an assistant message joins the open turn while that turn waits on tool results."""

    def __init__(self, reader: MessageReader) -> None:
        self.reader = reader
        self.turns: list[dict[str, Any]] = []
        self.system: list[str] = []
        self.open = False  # the last assistant turn made calls and may go on after their results

    def add_system(self, text: str, where: str) -> None:
        if self.turns:
            raise self.reader.fail("a system message must come before the first turn", where)
        self.system.append(text)

    def add_user(self, texts: list[str], images: list[ImageRef], where: str) -> None:
        text = "\n".join(texts)
        if not text.strip() and not images:
            raise self.reader.fail("the message is empty", where)
        self.open = False
        self.turns.append({"number": len(self.turns) + 1, "role": "user", "text": text, "images": images})

    def add_assistant(self, texts: list[str], images: list[ImageRef], calls: list[dict[str, Any]], message: dict[str, Any], where: str) -> None:
        text = "\n".join(t for t in texts if t.strip())
        reference = message.get("reference")
        if reference is not None and not isinstance(reference, str):
            raise self.reader.fail("a reference is text on an assistant message", f"{where}.reference")
        expected = self.reader.reference_calls(message.get("reference_tool_calls"), f"{where}.reference_tool_calls")
        if self.open:
            turn = self.turns[-1]
            turn["text"] = "\n".join(t for t in (turn["text"], text) if t)
            turn["images"] += images
        else:
            # an empty reply is a turn: the system said nothing, and the judge should see that
            turn = {"number": len(self.turns) + 1, "role": "assistant", "text": text, "images": images, "tool_calls": []}
            self.turns.append(turn)
        turn["tool_calls"] += calls
        if reference is not None:
            turn["reference"] = reference
        if expected is not None:
            turn["reference_tool_calls"] = expected
        self.open = bool(calls) or (self.open and not text)

    def add_result(self, call_id: Any, text: str, error: bool, where: str) -> None:
        """A tool's result, given to its call by id (or to the first call still waiting)."""
        turn = self.turns[-1] if self.turns else None
        if turn is None or turn["role"] != "assistant" or not turn["tool_calls"]:
            raise self.reader.fail("a tool result must follow an assistant message that made a tool call", where)
        waiting = [c for c in turn["tool_calls"] if c.get("result") is None]
        if call_id is not None:
            match = [c for c in turn["tool_calls"] if c["id"] == str(call_id)]
            if not match:
                known = ", ".join(repr(c["id"]) for c in turn["tool_calls"])
                raise self.reader.fail(f"tool call id {str(call_id)!r} matches no call of this turn ({known})", where)
            target = match[0]
        elif waiting:
            target = waiting[0]
        else:
            raise self.reader.fail("a tool result without a call id, and every call of this turn already has one", where)
        if target.get("result") is not None:
            raise self.reader.fail(f"the call {target['name']!r} already has a result", where)
        target["result"], target["error"] = text, error
        self.open = True


def read_messages(reader: MessageReader, raw: list[Any], key: str) -> tuple[str, list[dict[str, Any]]]:
    """System prompt and turns of an OpenAI ``messages`` or ShareGPT ``conversations`` list."""
    build = TurnBuilder(reader)
    for i, message in enumerate(raw):
        where = f"{key}.{i}"
        if not isinstance(message, dict):
            raise reader.fail("a message must be an object", where)
        if key == "messages":
            _openai(reader, build, message, where)
        else:
            _sharegpt(reader, build, message, where)
    return "\n".join(build.system), build.turns


def _openai(reader: MessageReader, build: TurnBuilder, message: dict[str, Any], where: str) -> None:
    role = message.get("role")
    if role not in ("system", "developer", "user", "assistant", "tool", "function"):
        raise reader.fail(f"role must be system, user, assistant or tool, got {role!r}", f"{where}.role")
    parts = reader.parts(message.get("content"), f"{where}.content")
    if role in ("system", "developer"):
        build.add_system("\n".join(parts["texts"]), where)
    elif role in ("tool", "function"):
        body = reader.result_text(message.get("content"), f"{where}.content")
        build.add_result(message.get("tool_call_id"), body, False, where)
    elif role == "user":
        for call_id, body, error, at in parts["results"]:
            build.add_result(call_id, body, error, at)
        if parts["texts"] or parts["images"] or not parts["results"]:
            build.add_user(parts["texts"], parts["images"], where)
    else:
        if parts["results"]:
            raise reader.fail("tool results come in a user or tool message, not the assistant's", f"{where}.content")
        calls = parts["uses"] + reader.openai_calls(message.get("tool_calls"), f"{where}.tool_calls")
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            calls.append(reader.call(legacy.get("name"), legacy.get("arguments"), None, f"{where}.function_call"))
        build.add_assistant(parts["texts"], parts["images"], calls, message, where)


def _sharegpt(reader: MessageReader, build: TurnBuilder, message: dict[str, Any], where: str) -> None:
    speaker = message.get("from")
    role = SHAREGPT_ROLES.get(speaker.lower()) if isinstance(speaker, str) else None
    if role is None:
        raise reader.fail(f"'from' must be one of {sorted(SHAREGPT_ROLES)}, got {speaker!r}", f"{where}.from")
    text = reader.text(message.get("value"), f"{where}.value")
    if role == "system":
        build.add_system(text, where)
    elif role == "user":
        build.add_user([text], [], where)
    elif role == "assistant":
        build.add_assistant([text], [], [], message, where)
    elif role == "call":
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise reader.fail("a function_call's value is JSON: {\"name\": ..., \"arguments\": {...}}", f"{where}.value") from None
        calls = value if isinstance(value, list) else [value]
        if build.turns and build.turns[-1]["role"] == "assistant":
            build.open = True  # a function_call after the assistant's words is the same step of its turn
        if not all(isinstance(c, dict) for c in calls):
            raise reader.fail("a function_call's value is an object with name and arguments", f"{where}.value")
        build.add_assistant([], [], [reader.call(c.get("name"), c.get("arguments"), c.get("id"), f"{where}.value") for c in calls],
                            message, where)
    else:
        build.add_result(message.get("tool_call_id"), text, False, where)
