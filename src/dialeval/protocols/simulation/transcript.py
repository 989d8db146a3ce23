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
PROMPT_TURN_CHARS = 6_000  # of one turn in a simulator, auditor or judge prompt: under every default budget


def cut(text: str, limit: int = PROMPT_TURN_CHARS) -> str:
    """``text`` as a prompt shows it: a reply longer than ``limit`` cut, with a marker saying so
    (the record keeps it whole). Why: a 10 MB reply would leave no room for anything else, and
    the budget that drops old turns cannot make one turn shorter."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... cut here: {len(text) - limit:,} more characters of this turn are not shown]"


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


def bot_words(turn: Turn) -> str:
    """What the bot said in a turn, without its tool calls and results (what it asked the user)."""
    return "\n".join(content_text(m.get("content")).strip() for m in turn.get("messages", []) if m.get("role") == "assistant")


def turn_line(turn: Turn) -> str:
    if turn["role"] == "user":
        picture = f"\n(shows picture {Path(turn['image']).name if not turn['image'].startswith('data:') else 'inline'})" if turn.get("image") else ""
        stop = f"\n(ends the conversation: {turn['stop']})" if turn.get("stop") else ""
        return f"[turn {turn['number']}] User: {cut(turn.get('text', ''))}{picture}{stop}"
    return f"[turn {turn['number']}] Bot: {cut(bot_text(turn))}"


def _native_call(call: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    """One tool call in OpenAI's shape (an id always, arguments as JSON text)."""
    function = call.get("function") or {}
    args = function.get("arguments")
    text = args if isinstance(args, str) else json.dumps(args if args is not None else {}, ensure_ascii=False)
    return {"id": str(call.get("id") or fallback_id), "type": "function",
            "function": {"name": str(function.get("name") or "?"), "arguments": text}}


def turn_messages(turn: Turn) -> list[dict[str, Any]]:
    """A bot turn as the OpenAI messages of one ``dialogue`` turn: assistant messages with their
    ``tool_calls`` (each with an id), ``tool`` messages answering them by ``tool_call_id``.

    Why: the dialogue loader starts a new turn at an assistant message unless the turn still
    waits on tool results, so a text message that would start one joins the message before it;
    a tool result that answers no call of the turn stays as a text line rather than being lost.
    """
    out: list[dict[str, Any]] = []
    made: list[str] = []  # ids of the turn's calls, in order
    answered: set[str] = set()
    waiting = False  # the turn goes on after tool results, as the loader reads it

    def say(text: str, calls: list[dict[str, Any]]) -> None:
        nonlocal waiting
        if not text and not calls:
            return
        if out and out[-1]["role"] == "assistant" and not waiting:
            last = out[-1]
            last["content"] = "\n".join(t for t in (last["content"], text) if t)
            if calls:
                last["tool_calls"] = last.get("tool_calls", []) + calls
        else:
            out.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})})
        waiting = bool(calls) or (waiting and not text)

    for message in turn.get("messages", []):
        text = content_text(message.get("content")).strip()
        if message.get("role") == "tool":
            asked = message.get("tool_call_id")
            free = [c for c in made if c not in answered]
            target = (str(asked) if str(asked) in free else None) if asked is not None else (free[0] if free else None)
            if target is None:
                say(f"[tool result] {text}", [])
                continue
            answered.add(target)
            out.append({"role": "tool", "tool_call_id": target, "content": text})
            waiting = True
            continue
        calls = [_native_call(c, f"call_{turn['number']}_{len(made) + i + 1}") for i, c in enumerate(message.get("tool_calls") or [])]
        made += [c["id"] for c in calls]
        say(text, calls)
    return out or [{"role": "assistant", "content": "(empty)"}]


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # unreadable arguments stay text, as the dialogue loader keeps them


def loaded_bot_turn(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The text and tool calls (with results) of one bot turn's :func:`turn_messages`, in the
    dialogue loader's form."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "tool":
            next(c for c in calls if c["id"] == message["tool_call_id"])["result"] = message["content"]
            continue
        texts.append(message["content"])
        calls += [{"name": c["function"]["name"], "arguments": _arguments(c["function"]["arguments"]), "id": c["id"]}
                  for c in message.get("tool_calls", [])]
    return {"text": "\n".join(t for t in texts if t), "tool_calls": calls}


def dialogue_turns(turns: list[Turn]) -> list[dict[str, Any]]:
    """The turns in the dialogue benchmark's loaded form (one assistant turn per bot turn, its
    tool calls and their results kept, renumbered; empty stop messages and failed bot turns
    left out): what the dialogue loader reads back from :func:`dialogue_record`."""
    out: list[dict[str, Any]] = []
    for turn in turns:
        if turn["role"] == "user":
            if not turn.get("text", "").strip() and not turn.get("image"):
                continue
            images = [{"source": turn["image"]}] if turn.get("image") else []
            out.append({"number": len(out) + 1, "role": "user", "text": turn.get("text") or "(a picture)", "images": images})
        elif not turn.get("failure"):
            loaded = loaded_bot_turn(turn_messages(turn))
            out.append({"number": len(out) + 1, "role": "assistant", **loaded, "text": cut(loaded["text"])})
    return out


def dialogue_record(conversation_id: str, turns: list[Turn], metadata: dict[str, Any]) -> dict[str, Any]:
    """One conversation as a line of a ``dialogue``-format file: OpenAI messages, the bot's
    tool calls and tool results as they are (:func:`turn_messages`), pictures as ``data:`` URLs."""
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn["role"] == "assistant":
            if not turn.get("failure"):
                messages += turn_messages(turn)
            continue
        if not turn.get("text", "").strip() and not turn.get("image"):
            continue
        text = turn.get("text") or "(a picture)"
        source = turn.get("image")
        if source:
            url = image_url(source) if source.startswith(("http", "data:")) or Path(source).is_file() else source
            messages.append({"role": "user", "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}]})
        else:
            messages.append({"role": "user", "content": text})
    return {"id": conversation_id, "messages": messages, "metadata": metadata}
