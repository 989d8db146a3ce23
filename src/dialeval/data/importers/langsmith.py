"""LangSmith runs exported as JSON or JSONL, one run an object as the ``langsmith`` SDK
serializes a :class:`langsmith.schemas.Run` (``client.list_runs`` then ``run.json()``).

A run is a model call when it is an ``llm`` run whose ``inputs.messages`` holds the chat
(LangChain's serialized messages, or OpenAI dicts as ``wrap_openai`` logs them) and its
``outputs`` the answer (``generations``, ``choices``, ``messages`` or ``message``). Its
tool definitions are ``inputs.tools`` (``wrap_openai``) or
``extra.invocation_params.tools`` (LangChain). Runs are grouped by ``thread_id``,
``session_id`` or ``conversation_id`` in ``extra.metadata`` (LangSmith's thread keys),
else by trace and parent run, else by the time-and-prefix rule (:mod:`.calls`).
"""

from __future__ import annotations

import warnings
from functools import partial
from pathlib import Path
from typing import Any

from dialeval.data.importers.calls import Call, build
from dialeval.data.importers.common import ImportLog, Message, chat, tool_definition
from dialeval.data.io import read_records, validate_record
from dialeval.errors import DataError

THREAD_KEYS = ("thread_id", "session_id", "conversation_id")


def _plain(raw: list[Any]) -> list[Any]:
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
        out.append(item)
    return out


def _outputs(outputs: dict[str, Any], fail: Any) -> list[Message]:
    if "generations" in outputs:
        generations = outputs["generations"]
        first = generations[0][0] if generations and isinstance(generations[0], list) else (generations or [None])[0]
        if not isinstance(first, dict) or "message" not in first:
            raise fail("outputs.generations holds no message")
        raw = [first["message"]]
    elif "choices" in outputs:
        raw = [outputs["choices"][0]["message"]]
    elif "messages" in outputs:
        raw = list(outputs["messages"])[-1:]
    elif "message" in outputs or "output" in outputs:
        raw = [outputs.get("message", outputs.get("output"))]
    else:
        raise fail("outputs hold none of generations, choices, messages, message")
    return chat(_plain(raw), fail)[0]


def _tools(run: Any) -> list[Message]:
    params = (run.extra or {}).get("invocation_params") or {}
    raw = (run.inputs or {}).get("tools") or (run.inputs or {}).get("functions") or params.get("tools") or params.get("functions") or []
    found = [tool_definition(t) for t in raw] if isinstance(raw, list) else []
    return [t for t in found if t is not None]


def _call(path: Path, index: int, raw: Any) -> Call | None:
    from langsmith.schemas import Run

    run = validate_record(Run, raw, path, index)
    messages = (run.inputs or {}).get("messages")
    if run.run_type != "llm" or not messages or not run.outputs:
        return None  # a chain, tool or retriever run: its model calls are runs of their own

    def fail(message: str, field: str = "inputs.messages") -> DataError:
        return DataError(path, message, record=index, field=field)

    flat = messages[0] if isinstance(messages[0], list) else messages  # LangChain logs a batch of one
    inputs, logged_tools = chat(_plain(flat), fail)
    metadata = (run.extra or {}).get("metadata") or {}
    key = next((str(metadata[k]) for k in THREAD_KEYS if metadata.get(k)), None)
    return Call(owner=str(run.id), trace=str(run.trace_id or run.id), time=run.start_time, index=index, inputs=inputs,
                outputs=_outputs(run.outputs, lambda m: fail(m, "outputs")), conversation=key, tools=_tools(run) + logged_tools,
                parent=str(run.parent_run_id or ""))


def read(path: Path, options: dict[str, Any], log: ImportLog | None = None) -> list[dict[str, Any]]:
    """Dialogue records from exported LangSmith runs."""
    log = log or ImportLog()
    calls = []
    for index, raw in enumerate(read_records(path)):
        call = log.attempt(path, index, partial(_call, path, index, raw))
        if call is not None:
            calls.append(call)
    if not calls:
        raise DataError(path, "no run holds inputs.messages and outputs (LangSmith's model calls, run_type llm)")
    return build(calls, "langsmith", log)
