"""LangSmith runs exported as JSON or JSONL, one run an object as the ``langsmith`` SDK
serializes a :class:`langsmith.schemas.Run` (``client.list_runs`` then ``run.json()``).

A run is a model call when its ``inputs.messages`` holds the chat (LangChain's serialized
messages, or OpenAI dicts as ``wrap_openai`` logs them) and its ``outputs`` the answer
(``generations``, ``choices``, ``messages`` or ``message``). Runs are grouped into threads
by ``thread_id``, ``session_id`` or ``conversation_id`` in ``extra.metadata`` (LangSmith's
thread keys), else by trace, and merged in start-time order.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from dialeval.data.importers.common import History, Message, from_openai, record
from dialeval.data.io import read_records, validate_record
from dialeval.errors import DataError

THREAD_KEYS = ("thread_id", "session_id", "conversation_id")


def _openai(raw: list[Any], fail: Any) -> list[Message]:
    """Messages in any shape LangSmith logs, as OpenAI dicts (through LangChain's own loaders)."""
    from langchain_core.load import load
    from langchain_core.messages import convert_to_openai_messages, messages_from_dict

    out = []
    for item in raw:
        if isinstance(item, dict) and "lc" in item:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # load() is marked beta; its messages mode is what we need
                item = load(item, allowed_objects="messages")
        elif isinstance(item, dict) and "data" in item and "type" in item:
            item = messages_from_dict([item])[0]
        if not isinstance(item, dict):
            item = convert_to_openai_messages(item)
        out.append(from_openai(item, fail))
    return out


def _outputs(outputs: dict[str, Any], fail: Any) -> list[Message]:
    if "generations" in outputs:
        generations = outputs["generations"]
        first = generations[0][0] if generations and isinstance(generations[0], list) else (generations or [None])[0]
        if not isinstance(first, dict) or "message" not in first:
            raise fail("outputs.generations holds no message")
        return _openai([first["message"]], fail)
    if "choices" in outputs:
        return _openai([outputs["choices"][0]["message"]], fail)
    if "messages" in outputs:
        return _openai(list(outputs["messages"])[-1:], fail)
    if "message" in outputs or "output" in outputs:
        return _openai([outputs.get("message", outputs.get("output"))], fail)
    raise fail("outputs hold none of generations, choices, messages, message")


def read(path: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    """Dialogue records from exported LangSmith runs."""
    from langsmith.schemas import Run

    threads: dict[str, list[tuple[Any, int, Run]]] = {}
    for index, raw in enumerate(read_records(path)):
        run = validate_record(Run, raw, path, index)
        messages = (run.inputs or {}).get("messages")
        if not messages or not run.outputs:
            continue  # a chain, tool or retriever run: its model calls are runs of their own
        metadata = (run.extra or {}).get("metadata") or {}
        key = next((str(metadata[k]) for k in THREAD_KEYS if metadata.get(k)), str(run.trace_id or run.id))
        threads.setdefault(key, []).append((run.start_time, index, run))
    if not threads:
        raise DataError(path, "no run holds inputs.messages and outputs (LangSmith's model calls)")
    out = []
    for key, runs in threads.items():
        history = History()
        for _, index, run in sorted(runs, key=lambda r: (r[0], r[1])):
            def fail(message: str, field: str = "inputs.messages", index: int = index) -> DataError:
                return DataError(path, message, record=index, field=field)

            flat = run.inputs["messages"]
            flat = flat[0] if flat and isinstance(flat[0], list) else flat  # LangChain logs a batch of one
            history.add(_openai(flat, fail), _outputs(run.outputs or {}, lambda m: fail(m, "outputs")), str(run.id))
        roots = [str(r.trace_id or r.id) for _, _, r in sorted(runs, key=lambda r: (r[0], r[1]))]
        out.append(record(key, history.all_messages(), "langsmith", conversation_ids=roots, turn_ids=history.turn_ids()))
    return out
