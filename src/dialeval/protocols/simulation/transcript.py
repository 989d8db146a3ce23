"""A simulated conversation in the forms its readers need: the bot's OpenAI messages, prompt lines, the dialogue format.

A user turn is ``{number, role: "user", text, image, stop}``; a bot turn is ``{number,
role: "assistant", messages}`` (its OpenAI messages, several and tool calls kept) or
``{number, role: "assistant", failure}``. Pure functions over those records.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from pathlib import Path
from typing import Any

Turn = dict[str, Any]


def image_url(source: str) -> str:
    """A picture as a URL a bot can read: URLs as they are, files as ``data:`` URLs."""
    if source.startswith(("http://", "https://", "data:")):
        return source
    kind = mimetypes.guess_type(source)[0] or "image/png"
    return f"data:{kind};base64," + base64.b64encode(Path(source).read_bytes()).decode("ascii")


def bot_messages(turns: list[Turn]) -> list[dict[str, Any]]:
    """The conversation as the bot receives it (OpenAI messages)."""
    out: list[dict[str, Any]] = []
    for turn in turns:
        if turn["role"] == "user":
            if not turn.get("text") and not turn.get("image"):
                continue
            if turn.get("image"):
                parts = [{"type": "text", "text": turn.get("text", "")}, {"type": "image_url", "image_url": {"url": image_url(turn["image"])}}]
                out.append({"role": "user", "content": parts})
            else:
                out.append({"role": "user", "content": turn["text"]})
        else:
            out.extend(turn.get("messages", []))
    return out


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def tool_calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of each tool call of an OpenAI assistant message."""
    out = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        args = function.get("arguments") or "{}"
        try:
            parsed = json.loads(args) if isinstance(args, str) else dict(args)
        except ValueError:
            parsed = {"_raw": args}
        out.append((str(function.get("name", "?")), parsed if isinstance(parsed, dict) else {"_value": parsed}))
    return out


def bot_text(turn: Turn) -> str:
    """A bot turn as one text: its messages in order, tool calls and results on their own lines."""
    if turn.get("failure"):
        return f"(no reply: {turn['failure']})"
    lines: list[str] = []
    for message in turn.get("messages", []):
        text = content_text(message.get("content")).strip()
        if message.get("role") == "tool":
            lines.append(f"[tool result] {text}")
            continue
        if text:
            lines.append(text)
        lines += [f"[tool call] {name}({json.dumps(args, ensure_ascii=False)})" for name, args in tool_calls(message)]
    return "\n".join(lines)


def turn_line(turn: Turn) -> str:
    if turn["role"] == "user":
        picture = f"\n(shows picture {Path(turn['image']).name if not turn['image'].startswith('data:') else 'inline'})" if turn.get("image") else ""
        stop = f"\n(ends the conversation: {turn['stop']})" if turn.get("stop") else ""
        return f"[turn {turn['number']}] User: {turn.get('text', '')}{picture}{stop}"
    return f"[turn {turn['number']}] Bot: {bot_text(turn)}"


def dialogue_turns(turns: list[Turn]) -> list[dict[str, Any]]:
    """The turns in the dialogue benchmark's loaded form (one assistant turn per bot turn,
    renumbered; empty stop messages and failed bot turns left out)."""
    out: list[dict[str, Any]] = []
    for turn in turns:
        if turn["role"] == "user":
            if not turn.get("text", "").strip() and not turn.get("image"):
                continue
            images = [{"source": turn["image"]}] if turn.get("image") else []
            out.append({"number": len(out) + 1, "role": "user", "text": turn.get("text") or "(a picture)", "images": images})
        elif not turn.get("failure"):
            out.append({"number": len(out) + 1, "role": "assistant", "text": bot_text(turn) or "(empty)"})
    return out


def dialogue_record(conversation_id: str, turns: list[Turn], metadata: dict[str, Any]) -> dict[str, Any]:
    """One conversation as a line of a ``dialogue``-format file (OpenAI messages); tool calls
    stay on their assistant message, pictures go as ``data:`` URLs."""
    messages: list[dict[str, Any]] = []
    for turn in dialogue_turns(turns):
        if turn["role"] == "user" and turn["images"]:
            source = turn["images"][0]["source"]
            url = image_url(source) if source.startswith(("http", "data:")) or Path(source).is_file() else source
            messages.append({"role": "user", "content": [{"type": "text", "text": turn["text"]}, {"type": "image_url", "image_url": {"url": url}}]})
        else:
            messages.append({"role": turn["role"], "content": turn["text"]})
    return {"id": conversation_id, "messages": messages, "metadata": metadata}
