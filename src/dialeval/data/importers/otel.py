"""OpenTelemetry GenAI spans, as the collector's file exporter writes them (OTLP/JSON: one
``TracesData`` object a line whatever the suffix, or one object or a list of them in the file).

A span is a model call when it holds the semantic conventions' ``gen_ai.input.messages``
/ ``gen_ai.output.messages`` (as span attributes or on one of its events); its messages
are lists of ``{role, parts}`` with ``text``, ``tool_call`` and ``tool_call_response``
parts. Calls are grouped into conversations by ``gen_ai.conversation.id`` (else
``session.id``, else the trace) and merged in start-time order. Parsed with the
opentelemetry-proto classes and protobuf's JSON mapping.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from dialeval.data.importers.common import History, Message, as_text, message, openai_call, record
from dialeval.data.io import read_text
from dialeval.errors import DataError

ID_FIELDS = ("traceId", "spanId", "parentSpanId")
GROUP_KEYS = ("gen_ai.conversation.id", "session.id")


def _hex_ids(value: Any) -> Any:
    """OTLP/JSON writes trace and span ids as hex, protobuf's JSON mapping reads bytes as
    base64: turn the ids into base64 before parsing (the OTLP spec asks for this)."""
    if isinstance(value, dict):
        return {k: (base64.b64encode(bytes.fromhex(v)).decode() if k in ID_FIELDS and isinstance(v, str) and v else _hex_ids(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind) if kind else None


def spans(path: Path) -> list[tuple[int, Any]]:
    """Every span of the file with the record (line) it came from."""
    from google.protobuf.json_format import ParseDict, ParseError
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

    text = read_text(path)
    try:  # one object (or a list of them) in the whole file...
        whole = json.loads(text)
        objects = [json.dumps(o) for o in whole] if isinstance(whole, list) else [text]
    except json.JSONDecodeError:  # ...or one a line, as the file exporter writes, whatever the file's suffix
        objects = text.splitlines()
    out = []
    for index, line in enumerate(objects):
        if not line.strip():
            continue
        try:
            data = ParseDict(_hex_ids(json.loads(line)), TracesData(), ignore_unknown_fields=True)
        except (json.JSONDecodeError, ParseError, ValueError) as err:
            raise DataError(path, f"not an OTLP/JSON TracesData object ({err})", record=index) from None
        out += [(index, span) for rs in data.resource_spans for ss in rs.scope_spans for span in ss.spans]
    return out


def _messages(raw: Any, where: str, path: Path, record_index: int) -> list[Message]:
    """GenAI messages (``[{role, parts}]``, JSON text or a structured value) as OpenAI messages."""
    fail = lambda message_, field: DataError(path, message_, record=record_index, field=field)  # noqa: E731
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise fail("expected the messages as JSON text", where) from None
    if not isinstance(raw, list):
        raise fail("expected a list of messages {role, parts}", where)
    out: list[Message] = []
    for i, item in enumerate(raw):
        at = f"{where}.{i}"
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


def read(path: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    """Dialogue records from an OTLP/JSON span export."""
    groups: dict[str, list[tuple[int, int, Any, dict[str, Any]]]] = {}
    for index, span in spans(path):
        attributes = {kv.key: any_value(kv.value) for kv in span.attributes}
        for event in span.events:
            attributes.update({kv.key: any_value(kv.value) for kv in event.attributes if kv.key.startswith("gen_ai.")})
        if "gen_ai.output.messages" not in attributes:
            continue  # not a model call (an agent, a tool execution, an HTTP span)
        trace = span.trace_id.hex()
        key = next((str(attributes[k]) for k in GROUP_KEYS if attributes.get(k)), trace)
        groups.setdefault(key, []).append((span.start_time_unix_nano, index, span, attributes))
    if not groups:
        raise DataError(path, "no span holds gen_ai.output.messages (the GenAI semantic conventions' model calls)")
    out = []
    for key, calls in groups.items():
        history = History()
        tools: list[Any] = []
        for _, index, span, attributes in sorted(calls, key=lambda c: (c[0], c[1])):
            where = f"span {span.span_id.hex()}"
            system = attributes.get("gen_ai.system_instructions")
            inputs = _messages(attributes.get("gen_ai.input.messages", "[]"), f"{where}: gen_ai.input.messages", path, index)
            if system:
                parts = json.loads(system) if isinstance(system, str) else system
                text = "\n".join(str(p.get("content", "")) for p in parts if isinstance(p, dict)) if isinstance(parts, list) else str(parts)
                inputs = [message("system", text), *inputs]
            outputs = _messages(attributes["gen_ai.output.messages"], f"{where}: gen_ai.output.messages", path, index)
            history.add(inputs, outputs, span.span_id.hex())
            definitions = attributes.get("gen_ai.tool.definitions")
            if definitions and not tools:
                tools = json.loads(definitions) if isinstance(definitions, str) else list(definitions)
        traces = [c[2].trace_id.hex() for c in sorted(calls, key=lambda c: (c[0], c[1]))]
        out.append(record(key, history.all_messages(), "otel", conversation_ids=traces, turn_ids=history.turn_ids(), tools=tools))
    return out
