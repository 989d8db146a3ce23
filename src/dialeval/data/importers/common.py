"""What every importer shares: calls of a conversation merged in time order, OpenAI-shaped
messages, and the record that keeps each unit's source id (so scores can go back there).

An importer returns dialogue records (OpenAI ``messages`` with ``tool_calls`` and ``tool``
results); the dialogue loader then checks them like any data file.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

Message = dict[str, Any]


class History:
    """A conversation rebuilt from its model calls in time order, with the call that produced
    each message (None for the inputs: user messages, tool results)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.owners: list[str | None] = []
        self.system: list[str] = []

    def add(self, inputs: list[Message], outputs: list[Message], owner: str) -> None:
        """One call's messages. A chat API is stateless, so a call usually repeats the history:
        the longest tail of the history that opens the call is not added twice; a call that
        sends only the newest messages overlaps nothing, and all of it is added."""
        for message in inputs:
            if message.get("role") == "system" and message.get("content") not in self.system:
                self.system.append(message.get("content") or "")
        call = [m for m in inputs if m.get("role") != "system"] + outputs
        k = next((k for k in range(min(len(self.messages), len(call)), 0, -1) if self.messages[-k:] == call[:k]), 0)
        new = call[k:]
        produced = min(len(outputs), len(new))
        self.messages += new
        self.owners += [None] * (len(new) - produced) + [owner] * produced

    def all_messages(self) -> list[Message]:
        system = [{"role": "system", "content": "\n".join(s for s in self.system if s)}] if any(self.system) else []
        return system + self.messages

    def turn_ids(self) -> dict[int, str]:
        """Each assistant turn's source id: the call that produced its last message (the reply shown)."""
        out: dict[int, str] = {}
        for turn, indices in assistant_turns(self.messages).items():
            owner = self.owners[indices[-1]]
            if owner is not None:
                out[turn] = owner
        return out


def assistant_turns(messages: list[Message]) -> dict[int, list[int]]:
    """Turn number -> indices of its assistant messages, numbered as the dialogue loader
    numbers turns (a reply after tool results continues its turn)."""
    out: dict[int, list[int]] = {}
    turn = 0
    open_turn = False
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "user":
            turn, open_turn = turn + 1, False
        elif role == "assistant":
            if not open_turn:
                turn += 1
            out.setdefault(turn, []).append(index)
            open_turn = bool(message.get("tool_calls")) or (open_turn and not message.get("content"))
        elif role == "tool":
            open_turn = True
    return out


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


def from_openai(raw: Any, fail: Any) -> Message:
    """An OpenAI chat message (as SDKs and tracers log it) in the importers' one shape;
    ``fail(message)`` makes the error that names where it came from."""
    if not isinstance(raw, dict) or raw.get("role") not in ("system", "developer", "user", "assistant", "tool"):
        raise fail(f"expected an OpenAI message with role system, user, assistant or tool, got {raw!r:.80}")
    content = raw.get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    calls = []
    for call in raw.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise fail("a tool call needs a function name")
        calls.append(openai_call(call.get("id"), function["name"], function.get("arguments")))
    role = "system" if raw["role"] == "developer" else raw["role"]
    return message(role, as_text(content), tool_calls=calls, tool_call_id=raw.get("tool_call_id"))
