"""JSON text that always encodes as UTF-8, whatever a server sent.

A reply may hold a lone UTF-16 surrogate (``\\ud800``): Python keeps it in a ``str``,
but UTF-8 cannot encode it, so a plain ``json.dumps(..., ensure_ascii=False).encode()``
raises and the item (or the whole run) is lost. Here such characters are written as
JSON escapes (``\\ud800``), which read back to the very same string: nothing is
replaced, nothing is lost, and everything else stays readable UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")


def lone_surrogates(text: str) -> int:
    """How many characters of ``text`` UTF-8 cannot encode."""
    return len(_LONE.findall(text))


def escape_surrogates(json_text: str) -> str:
    """``json_text`` (as ``json.dumps`` wrote it) with lone surrogates as ``\\uXXXX`` escapes:
    they can only sit inside JSON strings, where the escape means the same character."""
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` (non-ASCII kept as is) whose result always encodes as UTF-8."""
    return escape_surrogates(json.dumps(obj, ensure_ascii=False, **kwargs))


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 for hashing: a lone surrogate hashes as itself instead of raising."""
    return text.encode("utf-8", "surrogatepass")


def replace_surrogates(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD: what can go over the wire as UTF-8."""
    return _LONE.sub("\ufffd", text) if _LONE.search(text) else text


def sendable(messages: list[Any]) -> list[Any]:
    """LangChain messages whose text always encodes as UTF-8 (a reply quoted in a prompt
    may hold a lone surrogate: it is sent, and judged, as U+FFFD); others are returned as is."""
    out = []
    for message in messages:
        content = getattr(message, "content", None)
        if isinstance(content, str) and _LONE.search(content):
            message = message.model_copy(update={"content": replace_surrogates(content)})
        elif isinstance(content, list) and any(_LONE.search(json.dumps(p, ensure_ascii=False)) for p in content):
            parts = [
                {**p, "text": replace_surrogates(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p
                for p in content
            ]
            message = message.model_copy(update={"content": parts})
        out.append(message)
    return out


def parsed(value: Any) -> Any:
    """A value that may be kept as JSON text (tool-call arguments, tracer attributes), parsed;
    text that is not JSON stays text, and anything else is returned as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
