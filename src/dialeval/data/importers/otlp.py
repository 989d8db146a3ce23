"""OTLP/JSON files read with the opentelemetry-proto classes: spans and log records, with
trace and span ids as hex (what the collector's file exporter writes) or base64
(protobuf's own JSON mapping, what ``MessageToDict`` of an SDK export gives).

One ``TracesData`` / ``LogsData`` object a line whatever the file's suffix, or one
object, or a list of them, in the whole file. Each object is checked alone: a bad one is
named by its record (line) and, with ``--skip-bad``, left out.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from dialeval.data.importers.common import ImportLog
from dialeval.data.io import MAX_NESTING, read_text
from dialeval.errors import DataError

ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
_HEX = re.compile(r"[0-9a-fA-F]*")


@dataclass
class Item:
    """A span or a log record with its attributes as Python values."""

    kind: str  # "span" or "log"
    record: int
    trace: str  # hex
    span: str  # hex ("" for a log record outside a span)
    parent: str
    time: int
    name: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any], Any]]  # (name, attributes, body) of a span's events
    body: Any = None


def _ids(value: Any, path: Path, index: int) -> Any:
    """Trace and span ids as base64 for protobuf's parser: hex ids (OTLP/JSON) are turned,
    base64 ids (protobuf's JSON mapping) kept; anything else is named."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            size = ID_FIELDS.get(key)
            if size and isinstance(item, str) and item:
                if len(item) == 2 * size and _HEX.fullmatch(item):
                    item = base64.b64encode(bytes.fromhex(item)).decode()
                else:
                    try:
                        if len(base64.b64decode(item, validate=True)) != size:
                            raise ValueError
                    except (binascii.Error, ValueError):
                        raise DataError(path, f"{key} {item[:40]!r} is neither {2 * size} hex digits nor {size} bytes "
                                        "in base64", record=index, field=key) from None
            else:
                item = _ids(item, path, index)
            out[key] = item
        return out
    if isinstance(value, list):
        return [_ids(v, path, index) for v in value]
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


def _attributes(values: Any) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in values}


def objects(path: Path) -> list[tuple[int, Any]]:
    """The JSON objects of the file with their record number (line, or place in the list)."""
    text = read_text(path)
    try:
        whole = json.loads(text)
        found = list(enumerate(whole)) if isinstance(whole, list) else [(0, whole)]
    except json.JSONDecodeError:  # one object a line, as the file exporter writes
        found = []
        for index, line in enumerate(text.splitlines()):
            if line.strip():
                try:
                    found.append((index, json.loads(line)))
                except json.JSONDecodeError as err:  # this line alone is bad (--skip-bad leaves it out)
                    found.append((index, DataError(path, f"not valid JSON ({err.msg} at column {err.colno})", record=index)))
                except (RecursionError, ValueError):
                    found.append((index, DataError(path, f"nested more than {MAX_NESTING} levels deep, or a number too long",
                                                   record=index)))
    except (RecursionError, ValueError):
        raise DataError(path, f"nested more than {MAX_NESTING} levels deep, or a number too long") from None
    return found


def items(path: Path, log: ImportLog) -> list[Item]:
    """Every span and log record of the file."""
    out: list[Item] = []
    for index, raw in objects(path):
        found = log.attempt(path, index, partial(_parse, path, index, raw))
        out += found or []
    return out


def _parse(path: Path, index: int, raw: Any) -> list[Item]:
    from google.protobuf.json_format import ParseDict, ParseError
    from opentelemetry.proto.logs.v1.logs_pb2 import LogsData
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

    if isinstance(raw, DataError):
        raise raw
    if not isinstance(raw, dict) or not ({"resourceSpans", "resourceLogs", "resource_spans", "resource_logs"} & set(raw)):
        got = type(raw).__name__ if not isinstance(raw, dict) else "an object with " + (", ".join(sorted(raw)[:4]) or "no fields")
        raise DataError(path, f"not an OTLP/JSON TracesData or LogsData object (resourceSpans / resourceLogs); got {got}", record=index)
    try:
        raw = _ids(raw, path, index)
        traces = ParseDict({k: v for k, v in raw.items() if k in ("resourceSpans", "resource_spans")}, TracesData(), ignore_unknown_fields=True)
        logs = ParseDict({k: v for k, v in raw.items() if k in ("resourceLogs", "resource_logs")}, LogsData(), ignore_unknown_fields=True)
    except (ParseError, ValueError, TypeError, RecursionError) as err:
        raise DataError(path, f"not an OTLP/JSON TracesData or LogsData object ({str(err)[:160]})", record=index) from None
    out = []
    for resource in traces.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                events = [(e.name, _attributes(e.attributes), None) for e in span.events]
                out.append(Item("span", index, span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(),
                                span.start_time_unix_nano, span.name, _attributes(span.attributes), events))
    for resource in logs.resource_logs:
        for scope in resource.scope_logs:
            for entry in scope.log_records:
                attributes = _attributes(entry.attributes)
                name = entry.event_name or str(attributes.get("event.name", ""))
                body = any_value(entry.body) if entry.HasField("body") else None
                out.append(Item("log", index, entry.trace_id.hex(), entry.span_id.hex(), "",
                                entry.time_unix_nano or entry.observed_time_unix_nano, name, attributes, [], body))
    return out
