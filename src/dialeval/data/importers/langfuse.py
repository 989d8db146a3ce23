"""Langfuse traces with their observations, exported as JSON by its API or SDK
(``GET /api/public/traces/{id}`` objects: a list of them, or ``{"data": [...]}``).

A ``GENERATION`` observation is a model call: ``input`` holds the chat (OpenAI messages,
or ``{"messages": [...]}``), ``output`` the answer message. Traces are grouped into
conversations by ``sessionId`` (else each trace is one), and generations merged in
``startTime`` order. The langfuse SDK is not a dependency: the fields read are declared
below, after the public API's trace and observation objects.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.importers.common import History, Message, from_openai, record
from dialeval.data.io import read_records, validate_record
from dialeval.errors import DataError


class Observation(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str
    trace_id: str | None = Field(default=None, alias="traceId")
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


def _messages(value: Any, fail: Any) -> list[Message]:
    if isinstance(value, dict) and "messages" in value:
        value = value["messages"]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise fail("expected OpenAI messages")
    return [from_openai(m, fail) for m in value]


def read(path: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    """Dialogue records from exported Langfuse traces."""
    raws = read_records(path)
    if len(raws) == 1 and isinstance(raws[0], dict) and isinstance(raws[0].get("data"), list):
        raws = raws[0]["data"]  # a list endpoint's page
    sessions: dict[str, list[tuple[datetime, int, Trace, Observation]]] = {}
    for index, raw in enumerate(raws):
        trace = validate_record(Trace, raw, path, index)
        key = trace.session_id or trace.id
        for observation in trace.observations:
            if observation.type == "GENERATION" and observation.output is not None:
                sessions.setdefault(key, []).append((observation.start_time, index, trace, observation))
    if not sessions:
        raise DataError(path, "no trace holds a GENERATION observation with an output")
    out = []
    for key, calls in sessions.items():
        history = History()
        calls.sort(key=lambda c: (c[0], c[1]))
        for _, index, trace, observation in calls:
            def fail(message: str, part: str = "input", index: int = index, ident: str = observation.id) -> DataError:
                return DataError(path, f"observation {ident}: {message}", record=index, field=f"observations.{part}")

            history.add(_messages(observation.input, fail), _messages(observation.output, lambda m: fail(m, "output")), observation.id)
        out.append(record(key, history.all_messages(), "langfuse", conversation_ids=[c[2].id for c in calls],
                          turn_ids=history.turn_ids(),
                          extra={"session_id": calls[0][2].session_id, "observation_traces": {c[3].id: c[2].id for c in calls}}))
    return out
