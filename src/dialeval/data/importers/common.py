"""What every importer shares: OpenAI-shaped messages in one comparable form (whatever
shape the tracer logged: OpenAI dicts, LangChain's ``args`` tool calls, tool definitions
logged as messages), and the log of what an import kept, grouped and refused.

An importer returns dialogue records (OpenAI ``messages`` with ``tool_calls`` and ``tool``
results); the dialogue loader then checks them like any data file.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, TypeVar

from dialeval.errors import DataError

Message = dict[str, Any]
T = TypeVar("T")
LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "developer": "system",
                   "user": "user", "assistant": "assistant", "function": "tool"}


class ImportLog:
    """What an import says besides its records: how calls were grouped, merges that did not
    fit, and (with ``skip_bad``) the records it left out, each with file, record and reason.
    Without ``skip_bad`` the first bad record stops the import."""

    def __init__(self, skip_bad: bool = False) -> None:
        self.skip_bad = skip_bad
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.bad: list[DataError] = []

    def reject(self, error: DataError) -> None:
        if not self.skip_bad:
            raise error
        self.bad.append(error)

    def attempt(self, path: Any, record: str | int | None, work: Callable[[], T]) -> T | None:
        """``work()``, or None with the record listed as bad; a value of the wrong type
        deep inside a record is that record's error, never a traceback."""
        try:
            return work()
        except DataError as err:
            self.reject(err)
        except (TypeError, KeyError, AttributeError, ValueError, IndexError, RecursionError) as err:
            self.reject(DataError(path, f"not in the shape this format has ({type(err).__name__}: {str(err)[:120]})", record=record))
        return None


def openai_call(ident: Any, name: str, arguments: Any) -> Message:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {"id": None if ident is None else str(ident), "type": "function", "function": {"name": name, "arguments": text}}


def as_text(value: Any) -> str:
    """A tool result or message body as text (structured values as JSON)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def record(
    ident: str, messages: list[Message], fmt: str, *, conversation_ids: Iterable[str],
    turn_ids: dict[int, str], tools: list[Any] | None = None, extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One dialogue record; ``metadata.source`` names the unit ids in the source system:
    the conversation's (trace, thread or root run ids) and each assistant turn's."""
    source = {"format": fmt, "conversation_ids": list(dict.fromkeys(conversation_ids)),
              "turn_ids": {str(k): v for k, v in sorted(turn_ids.items())}, **(extra or {})}
    out: dict[str, Any] = {"id": ident, "messages": messages, "metadata": {"source": source}}
    if tools:
        out["tools"] = tools
    return out


def message(role: str, text: str = "", *, tool_calls: list[Message] | None = None, tool_call_id: str | None = None) -> Message:
    """A message in the one shape every importer writes (so that repeated history compares equal)."""
    out: Message = {"role": role, "content": text or None}
    if tool_calls:
        out["tool_calls"] = tool_calls
    if tool_call_id is not None:
        out["tool_call_id"] = tool_call_id
    return out


def tool_definition(raw: Any) -> Message | None:
    """A tool definition in OpenAI's ``{"type": "function", "function": {...}}`` form, or None
    when ``raw`` is none (an OpenAI or LangChain tool schema, or Anthropic's ``input_schema``)."""
    if not isinstance(raw, dict):
        return None
    function: dict[str, Any] = raw["function"] if isinstance(raw.get("function"), dict) else raw
    if not isinstance(function.get("name"), str) or not ({"parameters", "input_schema", "description"} & set(function)):
        return None
    body = {k: v for k, v in function.items() if k in ("name", "description", "parameters", "strict")}
    if "parameters" not in body and isinstance(function.get("input_schema"), dict):
        body["parameters"] = function["input_schema"]
    return {"type": "function", "function": body}


def is_definition_message(raw: Any) -> bool:
    """A tool *definition* logged as a ``role: tool`` message (Langfuse's LangChain handler
    appends each bound tool to the input that way): a tool message with a schema as its
    content and no call id."""
    return (isinstance(raw, dict) and raw.get("role") == "tool" and raw.get("tool_call_id") is None
            and tool_definition(raw.get("content")) is not None)


def _arguments(call: dict[str, Any], function: dict[str, Any]) -> Any:
    """A call's arguments: OpenAI's JSON text, or LangChain's ``args`` object."""
    for holder, key in ((function, "arguments"), (call, "args"), (function, "args"), (call, "input")):
        if key in holder:
            return holder[key]
    return None


def from_openai(raw: Any, fail: Any) -> Message:
    """An OpenAI chat message (as SDKs and tracers log it, or LangChain's dict of a message:
    ``type`` for the role, ``args`` for arguments) in the importers' one shape;
    ``fail(message)`` makes the error that names where it came from."""
    role = LANGCHAIN_ROLES.get(str(raw.get("role") or raw.get("type"))) if isinstance(raw, dict) else None
    if role is None or not isinstance(raw, dict):
        raise fail(f"expected an OpenAI message with role system, user, assistant or tool, got {raw!r:.80}")
    content = raw.get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    calls = []
    for call in raw.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise fail("a tool call needs a function name")
        calls.append(openai_call(call.get("id"), function["name"], _arguments(call, function)))
    legacy = raw.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        calls.append(openai_call(None, legacy["name"], legacy.get("arguments")))
    ident = raw.get("tool_call_id")
    return message(role, as_text(content), tool_calls=calls, tool_call_id=None if ident is None else str(ident))


def chat(raw: list[Any], fail: Any) -> tuple[list[Message], list[Message]]:
    """A logged message list as (messages, tool definitions found among them)."""
    messages, tools = [], []
    for item in raw:
        if is_definition_message(item):
            tools.append(tool_definition(item["content"]))
        else:
            messages.append(from_openai(item, fail))
    return messages, [t for t in tools if t is not None]
