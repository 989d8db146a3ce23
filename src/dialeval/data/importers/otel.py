"""OpenTelemetry GenAI telemetry (OTLP/JSON, see :mod:`.otlp`): spans and log records.

A model call is found in any of the shapes the GenAI semantic conventions have had:

- current: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (``[{role, parts}]``
  with ``text``, ``tool_call`` and ``tool_call_response`` parts), as span attributes, on
  a span event, or on the ``gen_ai.client.inference.operation.details`` log record the
  instrumentations write in their event mode; ``gen_ai.system_instructions``,
  ``gen_ai.tool.definitions``;
- older: per-message events ``gen_ai.{system,user,assistant,tool}.message`` and
  ``gen_ai.choice`` (log records with an OpenAI-like body, tied to their span);
  ``gen_ai.prompt`` / ``gen_ai.completion`` JSON on span events; the flattened
  ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes (with
  ``llm.request.functions.N.*`` tool definitions).

Calls become conversations by ``gen_ai.conversation.id`` (else ``session.id``), else by
trace and parent span, else by the time-and-prefix rule (:mod:`.calls`).
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

from dialeval.data.importers.calls import Call, build
from dialeval.data.importers.common import ImportLog, Message, as_text, from_openai, message, openai_call, tool_definition
from dialeval.jsonsafe import parsed
from dialeval.data.importers.otlp import Item, items
from dialeval.errors import DataError

GROUP_KEYS = ("gen_ai.conversation.id", "session.id")
LEGACY_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user", "gen_ai.assistant.message": "assistant",
                 "gen_ai.tool.message": "tool", "gen_ai.choice": "assistant"}
FLAT = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")
FUNCTIONS = re.compile(r"llm\.request\.functions\.(\d+)\.(name|description|parameters)")


def parts_messages(raw: Any, fail: Any) -> list[Message]:
    """GenAI messages (``[{role, parts}]``, JSON text or a structured value) as OpenAI messages."""
    raw = parsed(raw)
    if not isinstance(raw, list):
        raise fail("expected a list of messages {role, parts}", "")
    out: list[Message] = []
    for i, item in enumerate(raw):
        at = f".{i}"
        if not isinstance(item, dict) or not isinstance(item.get("parts"), list):
            raise fail("a message is {role, parts: [...]}", at)
        role = item.get("role")
        texts = [str(p.get("content", "")) for p in item["parts"] if isinstance(p, dict) and p.get("type") == "text"]
        calls = []
        for j, p in enumerate(item["parts"]):
            if isinstance(p, dict) and p.get("type") in ("tool_call", "function_call"):
                if not isinstance(p.get("name"), str) or not p["name"]:
                    raise fail("a tool_call part needs a name", f"{at}.parts.{j}.name")
                calls.append(openai_call(p.get("id"), p["name"], p.get("arguments")))
        results = [p for p in item["parts"] if isinstance(p, dict) and p.get("type") == "tool_call_response"]
        if role in ("system", "user", "assistant") and not results:
            out.append(message(str(role), "\n".join(texts), tool_calls=calls))
        elif role in ("tool", "user") and results:
            out += [message("tool", as_text(p.get("response")), tool_call_id=p.get("id")) for p in results]
        else:
            raise fail(f"role must be system, user, assistant or tool, got {role!r}", f"{at}.role")
    return out


def _definitions(attributes: dict[str, Any]) -> list[Message]:
    raw = parsed(attributes.get("gen_ai.tool.definitions")) or []
    flat: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = FUNCTIONS.fullmatch(key)
        if match:
            flat.setdefault(int(match[1]), {})[match[2]] = parsed(value) if match[2] == "parameters" else value
    found = [tool_definition(t) for t in (raw if isinstance(raw, list) else [])] + [tool_definition(flat[k]) for k in sorted(flat)]
    return [t for t in found if t is not None]


def _flat(attributes: dict[str, Any], fail: Any) -> tuple[list[Message], list[Message]]:
    """The older flattened layout: ``gen_ai.prompt.N.role`` / ``.content`` / ``.tool_calls.M.name``..."""
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attributes.items():
        match = FLAT.fullmatch(key)
        if match:
            row = rows.setdefault((match[1], int(match[2])), {})
            path = match[3].split(".")
            if path[0] == "tool_calls" and len(path) == 3:
                call = row.setdefault("tool_calls", {}).setdefault(int(path[1]), {})
                call[path[2]] = value
            else:
                row[match[3]] = value
    out: dict[str, list[Message]] = {"prompt": [], "completion": []}
    for (side, _), row in sorted(rows.items()):
        calls = [row["tool_calls"][k] for k in sorted(row.get("tool_calls", {}))]
        body = {"role": row.get("role", "assistant" if side == "completion" else None), "content": row.get("content"),
                "tool_calls": [{"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")} for c in calls],
                "tool_call_id": row.get("tool_call_id")}
        out[side].append(from_openai(body, lambda m: fail(m, f".{side}")))
    return out["prompt"], out["completion"]


def _legacy(entries: list[tuple[str, Any]], fail: Any) -> tuple[list[Message], list[Message]]:
    """Per-message events (``gen_ai.user.message``... ``gen_ai.choice``) with their bodies, in order."""
    inputs, outputs = [], []
    for name, body in entries:
        body = parsed(body) if body is not None else {}
        if not isinstance(body, dict):
            raise fail(f"the body of a {name} event is an object", "")
        if name == "gen_ai.choice":
            body = body["message"] if isinstance(body.get("message"), dict) else body
            outputs.append(from_openai({"role": "assistant", **body, "tool_call_id": None}, lambda m: fail(m, "")))
        else:
            raw = {**body, "role": LEGACY_EVENTS[name], "tool_call_id": body.get("id") if name == "gen_ai.tool.message" else None}
            inputs.append(from_openai(raw, lambda m: fail(m, "")))
    return inputs, outputs


def _call(path: Path, item: Item, legacy: list[tuple[str, Any]], parent_attributes: dict[str, Any], parent: str) -> Call | None:
    attributes = dict(item.attributes)
    for name, event_attributes, _ in item.events:
        attributes.update({k: v for k, v in event_attributes.items() if k.startswith("gen_ai.")})
    where = f"{item.kind} {item.span or item.record}"

    def fail(text: str, field: str) -> DataError:
        return DataError(path, text, record=item.record, field=f"{where}: {field}".rstrip(": "))

    if "gen_ai.output.messages" in attributes:
        inputs = parts_messages(attributes.get("gen_ai.input.messages", "[]"), lambda m, f: fail(m, "gen_ai.input.messages" + f))
        outputs = parts_messages(attributes["gen_ai.output.messages"], lambda m, f: fail(m, "gen_ai.output.messages" + f))
        system = parsed(attributes.get("gen_ai.system_instructions"))
        if system:
            text = "\n".join(str(p.get("content", "")) for p in system if isinstance(p, dict)) if isinstance(system, list) else str(system)
            inputs = [message("system", text), *inputs]
    elif any(FLAT.fullmatch(k) for k in attributes):
        inputs, outputs = _flat(attributes, fail)
    elif "gen_ai.completion" in attributes:
        prompt, completion = parsed(attributes.get("gen_ai.prompt") or "[]"), parsed(attributes["gen_ai.completion"])
        inputs = [from_openai(m, lambda t: fail(t, "gen_ai.prompt")) for m in (prompt if isinstance(prompt, list) else [])]
        outputs = [from_openai({"role": "assistant", **m}, lambda t: fail(t, "gen_ai.completion"))
                   for m in (completion if isinstance(completion, list) else [completion]) if isinstance(m, dict)]
    elif legacy:
        inputs, outputs = _legacy(legacy, fail)
    else:
        return None  # not a model call (an agent, a tool execution, an HTTP span)
    if not outputs:
        return None
    context = {**parent_attributes, **attributes}
    key = next((str(context[k]) for k in GROUP_KEYS if context.get(k)), None)
    return Call(owner=item.span or f"log-record-{item.record}", trace=item.trace or f"record-{item.record}", time=item.time,
                index=item.record, inputs=inputs, outputs=outputs, conversation=key, tools=_definitions(context), parent=parent)


def read(path: Path, options: dict[str, Any], log: ImportLog | None = None) -> list[dict[str, Any]]:
    """Dialogue records from an OTLP/JSON export of spans and log records."""
    log = log or ImportLog()
    found = items(path, log)
    spans = {i.span: i for i in found if i.kind == "span"}
    legacy: dict[str, list[tuple[str, Any]]] = {}
    for item in found:
        if item.kind == "log" and item.name in LEGACY_EVENTS and item.span:
            legacy.setdefault(item.span, []).append((item.name, item.body))
    calls: list[Call] = []
    owners: set[str] = set()
    for item in sorted(found, key=lambda i: i.kind != "span"):  # spans first
        if item.kind == "log" and item.name in LEGACY_EVENTS:
            continue  # read with its span
        events = legacy.get(item.span, []) if item.kind == "span" else []
        owner = spans.get(item.span) if item.kind == "log" else item  # a log record's span, when the file has it
        context = owner.attributes if owner is not None and owner is not item else {}
        parent = owner.parent if owner is not None else ""
        call = log.attempt(path, item.record, partial(_call, path, item, events, context, parent))
        if call is not None and not (item.kind == "log" and call.owner in owners):
            calls.append(call)  # (a call on its span and on its log record, span_and_event mode: once)
            owners.add(call.owner)
    orphans = set(legacy) - set(spans)
    for span in sorted(orphans):  # per-message events whose span is not in the file
        first = next(i for i in found if i.kind == "log" and i.span == span)
        stand_in = Item("span", first.record, first.trace, span, "", first.time, "", {}, [])
        call = log.attempt(path, first.record, partial(_call, path, stand_in, legacy[span], {}, ""))
        if call is not None:
            calls.append(call)
    if not calls:
        raise DataError(path, "no model call found: no span or log record holds gen_ai.output.messages, gen_ai.completion.*, "
                        "or gen_ai.choice events (the GenAI semantic conventions' model calls)")
    return build(calls, "otel", log)
