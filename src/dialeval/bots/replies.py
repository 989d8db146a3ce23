"""A bot's answer as OpenAI messages, and the request body of an HTTP JSON bot. Pure.

Whatever text a bot returns is kept as it came: bytes that are not UTF-8 become lone
surrogates (``surrogateescape``), which every writer stores as JSON escapes
(:mod:`dialeval.jsonsafe`), so nothing is replaced and the run never crashes on them.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages, convert_to_openai_messages

from dialeval.bots.specs import Messages
from dialeval.jsonsafe import dumps


class BotError(Exception):
    """The bot answered with something that is not a reply (empty, unreadable, an HTTP error)."""


def text_of(raw: bytes) -> str:
    """Bytes as text, every byte kept: invalid UTF-8 as lone surrogates (written escaped)."""
    return raw.decode("utf-8", "surrogateescape")


def reply_messages(reply: Any) -> Messages:
    """A bot's reply as OpenAI messages: text (or bytes), a message (dict or LangChain), or a list
    of them. Only assistant and tool messages count; an empty reply is a :class:`BotError`."""
    items = reply if isinstance(reply, list) else [reply]
    out: Messages = []
    for item in items:
        if isinstance(item, (bytes, bytearray)):
            item = text_of(bytes(item))
        if isinstance(item, str):
            out.append({"role": "assistant", "content": item})
            continue
        if isinstance(item, dict) and "role" not in item:
            item = {"role": "assistant", **item}
        if not isinstance(item, (dict, BaseMessage)):
            raise BotError(f"a reply must be text, a message or a list of messages, got {type(item).__name__}")
        try:
            [message] = convert_to_openai_messages(convert_to_messages([item]))  # type: ignore[list-item]
        except Exception as err:  # a malformed message from the bot is its failure
            raise BotError(f"unreadable reply message {dumps(item, default=str)[:200]}: {err}") from None
        if message.get("role") in ("assistant", "tool"):
            out.append(message)
    if not any(m.get("content") or m.get("tool_calls") for m in out):
        raise BotError("empty reply")
    return json.loads(dumps(out, default=str))  # plain JSON values from here on (a LangChain object's extras as text)


def dig(value: Any, path: str) -> Any:
    """The value at a dotted path (``choices.0.message.content``) of a JSON response."""
    for part in path.split(".") if path else []:
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise BotError(f"the response has no {path!r} (stopped at {part!r}): {dumps(value)[:200]}")
    return value


def fill(template: Any, messages: Messages, session_id: str) -> Any:
    """The request body: ``$messages`` (the list), ``$session_id`` and ``$text`` (the user's last text) replaced."""
    text = next((m["content"] if isinstance(m["content"], str) else " ".join(
        p.get("text", "") for p in m["content"] if isinstance(p, dict)) for m in reversed(messages) if m["role"] == "user"), "")
    if isinstance(template, str):
        if template == "$messages":
            return messages
        return template.replace("$session_id", session_id).replace("$text", text)
    if isinstance(template, list):
        return [fill(v, messages, session_id) for v in template]
    if isinstance(template, dict):
        return {k: fill(v, messages, session_id) for k, v in template.items()}
    return template
