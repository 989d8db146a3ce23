"""Langfuse observations, in either of the two forms one can save them in:

- the public API's JSON: ``GET /api/public/traces/{id}`` objects with their
  ``observations``, or the v2 observations API's flat rows (``traceId``, ``sessionId``,
  ``type``, ``startTime``, ``input``, ``output``): a list of them, or a page ``{"data": [...]}``;
- the OpenTelemetry spans the Langfuse SDK (v3 and later) sends, as OTLP/JSON (its
  ``span_exporter`` pointed at a file or memory): ``langfuse.observation.*`` attributes.

A ``GENERATION`` observation is a model call: ``input`` holds the chat (OpenAI messages,
or ``{"messages": [...], "tools": [...]}`` from the OpenAI drop-in; the LangChain
handler's list, whose tool *definitions* come as ``role: tool`` messages and whose tool
calls have LangChain's ``args``), ``output`` the answer message. Generations are grouped
by session (``sessionId``; on spans ``langfuse.trace.session_id``, ``session.id`` or the
``langfuse_session_id`` metadata), else by trace and parent, else by the time-and-prefix rule
(:mod:`.calls`). The langfuse SDK is not needed to read them.
"""

from __future__ import annotations

from functools import partial
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.importers.calls import Call, build
from dialeval.data.importers.common import ImportLog, Message, chat, tool_definition
from dialeval.jsonsafe import parsed
from dialeval.data.io import read_records, validate_record
from dialeval.errors import DataError

SESSION_ATTRIBUTES = ("langfuse.trace.session_id", "session.id", "langfuse.observation.metadata.langfuse_session_id",
                      "langfuse.trace.metadata.langfuse_session_id")


class Observation(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str
    trace_id: str | None = Field(default=None, alias="traceId")
    session_id: str | None = Field(default=None, alias="sessionId")  # on the v2 observations API's rows
    type: str
    start_time: datetime = Field(alias="startTime")
    input: Any = None
    output: Any = None


class Trace(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str
    timestamp: datetime
    session_id: str | None = Field(default=None, alias="sessionId")
    observations: list[Observation] = Field(default_factory=list)


def _messages(value: Any, fail: Any) -> tuple[list[Message], list[Message]]:
    """(messages, tool definitions) of a generation's input or output."""
    tools: list[Message] = []
    if isinstance(value, dict) and "messages" in value:
        tools = [t for t in map(tool_definition, value.get("tools") or []) if t is not None]
        value = value["messages"]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise fail("expected OpenAI messages")
    messages, logged = chat(value, fail)
    return messages, tools + logged


def _generation(path: Path, index: int, ident: str, trace: str, time: Any, session: str | None, raw_in: Any, raw_out: Any,
                parent: str = "") -> Call:
    def fail(message: str, part: str = "input") -> DataError:
        return DataError(path, f"observation {ident}: {message}", record=index, field=f"observations.{part}")

    inputs, tools = _messages(raw_in, fail)
    outputs, _ = _messages(raw_out, lambda m: fail(m, "output"))
    return Call(owner=ident, trace=trace, time=time, index=index, inputs=inputs, outputs=outputs, conversation=session, tools=tools,
                parent=parent)


def _api_calls(path: Path, raws: list[Any], log: ImportLog) -> list[Call]:
    if len(raws) == 1 and isinstance(raws[0], dict) and isinstance(raws[0].get("data"), list):
        raws = raws[0]["data"]  # a list endpoint's page
    calls: list[Call] = []
    for index, raw in enumerate(raws):
        def one(raw: Any = raw, index: int = index) -> list[Call]:
            if isinstance(raw, dict) and "observations" not in raw and "startTime" in raw:  # a v2 observations row
                o = validate_record(Observation, raw, path, index)
                keep = o.type == "GENERATION" and o.output is not None
                return [_generation(path, index, o.id, o.trace_id or o.id, o.start_time, o.session_id, o.input, o.output,
                                    str(raw.get("parentObservationId") or ""))] if keep else []
            trace = validate_record(Trace, raw, path, index)
            return [_generation(path, index, o.id, trace.id, o.start_time, trace.session_id, o.input, o.output,
                                str(getattr(o, "parentObservationId", None) or ""))
                    for o in trace.observations if o.type == "GENERATION" and o.output is not None]
        calls += log.attempt(path, index, one) or []
    return calls


def _span_calls(path: Path, log: ImportLog) -> list[Call]:
    from dialeval.data.importers.otlp import items

    calls: list[Call] = []
    for item in items(path, log):
        attributes = item.attributes
        if item.kind != "span" or str(attributes.get("langfuse.observation.type", "")).lower() != "generation":
            continue
        if attributes.get("langfuse.observation.output") is None:
            continue
        session = next((str(parsed(attributes[k])) for k in SESSION_ATTRIBUTES if attributes.get(k)), None)
        call = log.attempt(path, item.record, partial(
            _generation, path, item.record, item.span, item.trace, item.time, session,
            parsed(attributes.get("langfuse.observation.input")), parsed(attributes["langfuse.observation.output"]), item.parent))
        if call is not None:
            calls.append(call)
    return calls


def _looks_like_otlp(path: Path) -> bool:
    with path.open("rb") as f:
        head = f.read(4096).lstrip()
    return head.startswith((b'{"resourceSpans"', b'[{"resourceSpans"', b'{"resource_spans"')) or b'"resourceSpans"' in head[:200]


def read(path: Path, options: dict[str, Any], log: ImportLog | None = None) -> list[dict[str, Any]]:
    """Dialogue records from exported Langfuse traces or the SDK's spans."""
    log = log or ImportLog()
    calls = _span_calls(path, log) if _looks_like_otlp(path) else _api_calls(path, read_records(path), log)
    if not calls:
        raise DataError(path, "no trace holds a GENERATION observation with an output")

    def extra(key: str, members: list[Call]) -> dict[str, Any]:
        session = key if members[0].conversation else None
        return {"session_id": session, "observation_traces": {c.owner: c.trace for c in members}}

    return build(calls, "langfuse", log, extra)
