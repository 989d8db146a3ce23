"""Which format a file looks like, from its first record: so that a file given to the wrong
importer says which importer reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SNIFF_BYTES = 1 << 20  # the first record is looked for in the first MiB


def _first(path: Path) -> Any:
    if path.is_dir():
        return {"_folder": True}
    with path.open("rb") as f:
        head = f.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    for text in (head, head.split("\n", 1)[0]):
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError):
            continue
        while isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, dict) and isinstance(value.get("data"), list) and value["data"]:
            value = value["data"][0]
        return value
    return None


def guess(path: Path) -> str | None:
    """The format ``path`` looks like (``otel``, ``langsmith``, ``langfuse``, ``hf``), or None."""
    first = _first(path)
    if not isinstance(first, dict):
        return None
    keys = set(first)
    if keys & {"resourceSpans", "resourceLogs", "resource_spans", "resource_logs"}:
        spans = json.dumps(first)[:SNIFF_BYTES]
        return "langfuse" if '"langfuse.observation.' in spans else "otel"
    if {"run_type", "dotted_order"} & keys or {"run_type", "trace_id"} <= keys:
        return "langsmith"
    if "observations" in keys or ({"type", "startTime"} <= keys and "traceId" in keys):
        return "langfuse"
    if {"messages", "conversations", "query", "answers", "chat", "system", "_folder"} & keys:
        return "hf"
    return None


def hint(path: Path, fmt: str) -> str:
    """``"; this looks like a langsmith file: dialeval import langsmith ..."`` (empty when it looks like ``fmt``)."""
    try:
        found = guess(path)
    except OSError:
        return ""
    if found is None or found == fmt:
        return ""
    return f" (this file looks like {found}, not {fmt}: try `dialeval import {found} {path} -o ...`)"
