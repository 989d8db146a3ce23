"""The common function-calling dataset shapes, as OpenAI messages with tool calls.

- ``sharegpt``: ``conversations`` of ``{from, value}`` with ``function_call`` /
  ``observation`` turns and a ``tools`` column (LLaMA-Factory's layout): read by the
  dialogue loader itself, so rows pass through;
- ``hermes`` (NousResearch hermes-function-calling): ShareGPT whose ``gpt`` turns hold
  ``<tool_call>{...}</tool_call>`` and ``tool`` turns ``<tool_response>{...}</tool_response>``,
  the tools inside ``<tools>...</tools>`` of the system turn;
- ``toolace`` (Team-ACE/ToolACE): a ``system`` column listing the functions as JSON and
  assistant turns that call them as ``[name(arg=value, ...)]``;
- ``glaive`` (glaive-function-calling-v2): ``system`` and ``chat`` text with ``USER:``,
  ``ASSISTANT:``, ``<functioncall> {...}`` and ``FUNCTION RESPONSE:``;
- ``xlam`` (Salesforce xlam-function-calling / APIGen): ``query``, ``tools`` and
  ``answers`` columns: one user turn whose reference calls are ``answers`` (also the
  assistant's turn, the dataset's own trajectory);
- ``openai``: a ``messages`` column as it is.

Each converter takes a row (columns already mapped) and returns a dialogue record, or
raises ``ValueError`` with the reason (the importer names the row).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from dialeval.data.importers.common import Message, message, openai_call, tool_definition

SHAPES = ("openai", "sharegpt", "hermes", "toolace", "glaive", "xlam")
TAG = re.compile(r"<(tool_call|tool_response)>\s*(.*?)\s*</\1>", re.DOTALL)
TOOLS_TAG = re.compile(r"<tools>\s*(\[.*?\]|\{.*?\})\s*</tools>", re.DOTALL)  # not the prompt's "<tools> </tools> tags"
GLAIVE_SPEAKER = re.compile(r"(USER|ASSISTANT|FUNCTION RESPONSE):", re.MULTILINE)


def loose(text: str) -> Any:
    """JSON, or the Python literal some datasets write instead (single quotes, True/None)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ValueError(f"not JSON: {text[:80]!r}") from None


def _tools(value: Any) -> list[Message]:
    value = loose(value) if isinstance(value, str) else value
    value = value if isinstance(value, list) else [value]
    found = [tool_definition(t) for t in value]
    return [t for t in found if t is not None]


def _calls(items: Any, turn: int) -> list[Message]:
    items = items if isinstance(items, list) else [items]
    out = []
    for k, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError(f"a tool call is an object with a name, got {str(item)[:80]!r}")
        arguments = item.get("arguments", item.get("parameters", {}))
        arguments = loose(arguments) if isinstance(arguments, str) and arguments.strip().startswith("{") else arguments
        out.append(openai_call(f"call_{turn}_{k}", item["name"], arguments))
    return out


def _results(texts: list[str], calls: list[Message]) -> list[Message]:
    """Tool messages answering ``calls`` in order (a result without a call keeps no id)."""
    ids = [c["id"] for c in calls]
    return [message("tool", t, tool_call_id=ids[i] if i < len(ids) else None) for i, t in enumerate(texts)]


def hermes(row: dict[str, Any]) -> dict[str, Any]:
    messages: list[Message] = []
    tools: list[Message] = []
    pending: list[Message] = []
    for i, turn in enumerate(row["conversations"]):
        speaker, value = turn.get("from"), str(turn.get("value", ""))
        if speaker == "system":
            found = TOOLS_TAG.search(value)
            if found:
                tools = _tools(found.group(1))
            messages.append(message("system", TOOLS_TAG.sub("", value).strip() if found else value))
        elif speaker in ("human", "user"):
            messages.append(message("user", value))
        elif speaker in ("gpt", "assistant"):
            calls = _calls([loose(m.group(2)) for m in TAG.finditer(value) if m.group(1) == "tool_call"], i)
            messages.append(message("assistant", TAG.sub("", value).strip(), tool_calls=calls))
            pending = calls
        elif speaker == "tool":
            texts = [m.group(2) for m in TAG.finditer(value) if m.group(1) == "tool_response"] or [value]
            messages += _results(texts, pending)
        else:
            raise ValueError(f"turn {i + 1}: 'from' is system, human, gpt or tool, got {speaker!r}")
    return {"messages": messages, "tools": tools}


CALL_START = re.compile(r"\s*([^()\[\],]+?)\s*\(")


def _closing(text: str, opening: int) -> int | None:
    """The index of the parenthesis that closes the one at ``opening`` (strings skipped)."""
    depth, quote, k = 0, "", opening
    while k < len(text):
        char = text[k]
        if quote:
            if char == "\\":
                k += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return k
        k += 1
    return None


def _python_calls(text: str, turn: int) -> list[Message] | None:
    """``[name(a=1, b="x"), Other Name()]`` as calls (ToolACE's names may hold spaces), or
    None when the text is not that."""
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]") and "(" in text):
        return None
    body, items, pos = text[1:-1], [], 0
    while pos < len(body):
        start = CALL_START.match(body, pos)
        end = _closing(body, start.end() - 1) if start else None
        if start is None or end is None:
            return None
        try:
            parsed = ast.parse(f"f({body[start.end():end]})", mode="eval").body
            assert isinstance(parsed, ast.Call)
            arguments = {k.arg: ast.literal_eval(k.value) for k in parsed.keywords if k.arg}
        except (SyntaxError, ValueError, AssertionError, MemoryError, RecursionError):
            return None
        items.append({"name": start.group(1).strip(), "arguments": arguments})
        pos = end + 1
        while pos < len(body) and body[pos] in " ,\n":
            pos += 1
    return _calls(items, turn) if items else None


def toolace(row: dict[str, Any]) -> dict[str, Any]:
    system = str(row.get("system") or "")
    listed = system.find("[", max(system.find("functions in JSON format"), 0))
    tools = _tools(json.JSONDecoder().raw_decode(system[listed:])[0]) if listed >= 0 else []
    messages: list[Message] = [message("system", system)] if system else []
    pending: list[Message] = []
    for i, turn in enumerate(row["conversations"]):
        speaker, value = turn.get("from"), str(turn.get("value", ""))
        if speaker in ("user", "human"):
            messages.append(message("user", value))
        elif speaker in ("assistant", "gpt"):
            calls = _python_calls(value, i)
            messages.append(message("assistant", "", tool_calls=calls) if calls else message("assistant", value))
            pending = calls or []
        elif speaker in ("tool", "observation"):
            results = loose(value) if value.strip().startswith("[") else [value]
            texts = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in results] if isinstance(results, list) else [value]
            messages += _results(texts if len(texts) == len(pending) else [value], pending)
        else:
            raise ValueError(f"turn {i + 1}: 'from' is user, assistant or tool, got {speaker!r}")
    return {"messages": messages, "tools": tools}


def _glaive_call(text: str, turn: int) -> list[Message]:
    body = text.strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError:  # glaive quotes the arguments' JSON text with single quotes
        value = json.loads(re.sub(r"'(\{.*\})'", r"\1", body, flags=re.DOTALL))
    return _calls(value, turn)


def glaive(row: dict[str, Any]) -> dict[str, Any]:
    system = str(row.get("system") or "").removeprefix("SYSTEM:").strip()
    tools = []
    brace = system.find("{")
    if brace >= 0:
        decoder, rest = json.JSONDecoder(), system[brace:]
        while rest.strip().startswith("{"):
            value, end = decoder.raw_decode(rest.strip())
            tools.append(value)
            rest = rest.strip()[end:]
        system = system[:brace].strip()
    messages: list[Message] = [message("system", system)] if system else []
    chat = str(row["chat"])
    pieces = GLAIVE_SPEAKER.split(chat)
    pending: list[Message] = []
    for k in range(1, len(pieces) - 1, 2):
        speaker, text = pieces[k], pieces[k + 1].replace("<|endoftext|>", "").strip()
        if speaker == "USER":
            messages.append(message("user", text))
        elif speaker == "ASSISTANT" and text.startswith("<functioncall>"):
            pending = _glaive_call(text.removeprefix("<functioncall>"), k)
            messages.append(message("assistant", "", tool_calls=pending))
        elif speaker == "ASSISTANT":
            messages.append(message("assistant", text))
        else:
            messages += _results([text], pending)
    return {"messages": messages, "tools": _tools(tools) if tools else []}


def xlam(row: dict[str, Any]) -> dict[str, Any]:
    answers = loose(row["answers"]) if isinstance(row["answers"], str) else row["answers"]
    calls = _calls(answers, 1)
    reference = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])} for c in calls]
    messages = [message("user", str(row["query"])), message("assistant", "", tool_calls=calls)]
    return {"messages": messages, "tools": _tools(row.get("tools") or []), "reference_tool_calls": reference}


def detect(row: dict[str, Any]) -> str | None:
    """The shape of a dataset row (columns already mapped), or None."""
    if "query" in row and "answers" in row:
        return "xlam"
    if isinstance(row.get("chat"), str) and "USER:" in row["chat"]:
        return "glaive"
    conversations = row.get("conversations")
    if isinstance(conversations, list):
        values = [str(t.get("value", "")) for t in conversations if isinstance(t, dict)]
        speakers = {t.get("from") for t in conversations if isinstance(t, dict)}
        if any("<tool_call>" in v or "<tool_response>" in v or "<tools>" in v for v in values):
            return "hermes"
        if "assistant" in speakers and any(_python_calls(v, 0) for v in values):
            return "toolace"
        return "sharegpt"
    if "messages" in row:
        return "openai"
    return None


CONVERTERS = {"hermes": hermes, "toolace": toolace, "glaive": glaive, "xlam": xlam}
