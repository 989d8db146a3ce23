"""Hugging Face datasets on disk: a folder written by ``Dataset.save_to_disk``, a parquet or
arrow file, or the JSON lines ``Dataset.to_json`` writes. Nothing is downloaded.

Each row is one conversation, in one of the shapes of :mod:`.hf_shapes` named by
``--option format=...`` (hermes, toolace, glaive, xlam, sharegpt, openai) or detected
from the first row (the output says which). ``--option columns='{"id": "conv_id", ...}'``
says which column holds which field (``id``, ``messages`` or ``conversations``, ``system``,
``tools``, ``grounding``, ``summary``, ``metadata``, ``reference_tool_calls``, and the
shapes' own ``chat``, ``query``, ``answers``); columns of the same name are taken as they
are. Parquet and arrow need ``pyarrow``, a saved folder ``datasets`` (both in the
``import`` extra): a clear message says so when absent.
"""

from __future__ import annotations

import difflib
import json
from functools import partial
from pathlib import Path
from typing import Any

from dialeval.data.importers.common import ImportLog
from dialeval.data.importers.hf_shapes import CONVERTERS, SHAPES, detect
from dialeval.data.io import read_records
from dialeval.errors import DataError

FIELDS = ("id", "messages", "conversations", "system", "tools", "grounding", "documents", "summary", "metadata",
          "reference_tool_calls", "chat", "query", "answers")
RECORD_FIELDS = FIELDS[:10]


def rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a dataset file or folder, as plain Python values."""
    if path.is_dir():
        try:
            from datasets import load_from_disk
        except ImportError:
            raise DataError(path, "a saved dataset folder needs the `datasets` package (pip install 'dialeval[import]'), "
                            "or export it with Dataset.to_json / to_parquet") from None
        try:
            return list(load_from_disk(str(path)))
        except (FileNotFoundError, ValueError) as err:
            raise DataError(path, f"not a folder Dataset.save_to_disk wrote ({str(err)[:160]})") from None
    if path.suffix in (".parquet", ".arrow"):
        try:
            import pyarrow as pa
            import pyarrow.ipc as ipc
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError(path, f"a {path.suffix} file needs the `pyarrow` package (pip install 'dialeval[import]'), "
                            "or export the dataset with Dataset.to_json") from None
        try:
            if path.suffix == ".parquet":
                return list(pq.read_table(path).to_pylist())
            with path.open("rb") as f:
                try:
                    table = ipc.open_stream(f).read_all()  # what save_to_disk writes
                except pa.ArrowInvalid:
                    f.seek(0)
                    table = ipc.open_file(f).read_all()
        except (pa.ArrowException, OSError) as err:
            raise DataError(path, f"not a readable {path.suffix} file ({str(err)[:160]})") from None
        return list(table.to_pylist())
    return [r if isinstance(r, dict) else {"_": r} for r in read_records(path)]


def _shape(path: Path, options: dict[str, Any], first: dict[str, Any], log: ImportLog) -> str:
    named = options.get("format")
    if named is not None:
        if named not in SHAPES:
            close = difflib.get_close_matches(str(named), SHAPES, n=1)
            raise DataError(path, f"option format: {named!r} is not a dataset shape" + (f"; did you mean {close[0]!r}?" if close else "")
                            + f" (shapes: {', '.join(SHAPES)})")
        return str(named)
    found = detect(first)
    if found is None:
        return "openai"
    log.notes.append(f"detected the {found} shape from the first row's columns ({', '.join(sorted(first)[:8])}); "
                     f"name another with --option format=... ({', '.join(SHAPES)})")
    return found


def _mapped(path: Path, index: int, row: dict[str, Any], columns: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in FIELDS:
        column = columns.get(field, field)
        if column in row and row[column] is not None:
            value = row[column]
            if field in ("messages", "conversations") and isinstance(value, str):
                try:
                    value = json.loads(value)
                except json.JSONDecodeError:
                    raise DataError(path, f"column {column!r} is text but not JSON messages", record=index, field=column) from None
            out[field] = value
    return out


def _record(path: Path, index: int, row: dict[str, Any], columns: dict[str, str], shape: str) -> dict[str, Any]:
    mapped = _mapped(path, index, row, columns)
    if shape in CONVERTERS:
        needs = {"xlam": ("query", "answers"), "glaive": ("chat",)}.get(shape, ("conversations",))
        missing = [f for f in needs if f not in mapped]
        if missing:
            raise DataError(path, f"the {shape} shape needs a column {columns.get(missing[0], missing[0])!r}; name it in the "
                            f"column mapping (--option columns='{{\"{missing[0]}\": \"<column>\"}}')", record=index, field=missing[0])
        try:
            converted = CONVERTERS[shape](mapped)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as err:
            raise DataError(path, f"not a {shape} row: {str(err)[:160]}", record=index) from None
        kept = {k: v for k, v in mapped.items() if k in ("id", "grounding", "documents", "summary", "metadata")}
        mapped = {**kept, **{k: v for k, v in converted.items() if v}}
    else:
        mapped = {k: v for k, v in mapped.items() if k in RECORD_FIELDS}
    if "messages" not in mapped and "conversations" not in mapped:
        wanted = columns.get("messages", columns.get("conversations", "messages"))
        raise DataError(path, f"no column {wanted!r} with the messages; name it in the column mapping, e.g. "
                        f"columns={{\"messages\": \"<column>\"}} (--option columns=...), or the shape (--option format=...)",
                        record=index, field=wanted)
    mapped["id"] = str(mapped.get("id", index))
    metadata = dict(mapped.get("metadata") or {}) if isinstance(mapped.get("metadata"), dict) else {}
    metadata["source"] = {"format": "hf", "shape": shape, "row": index, "conversation_ids": [mapped["id"]], "turn_ids": {}}
    mapped["metadata"] = metadata
    return mapped


def read(path: Path, options: dict[str, Any], log: ImportLog | None = None) -> list[dict[str, Any]]:
    """Dialogue records from dataset rows through the column mapping and the row shape."""
    log = log or ImportLog()
    columns = options.get("columns") or {}
    if isinstance(columns, str):
        try:
            columns = json.loads(columns)
        except json.JSONDecodeError:
            raise DataError(path, "option columns: expected a JSON object, e.g. '{\"id\": \"conv_id\"}'") from None
    if not isinstance(columns, dict):
        raise DataError(path, "option columns: expected a JSON object, e.g. '{\"id\": \"conv_id\"}'")
    unknown = sorted(set(columns) - set(FIELDS))
    if unknown:
        raise DataError(path, f"option columns: {unknown[0]!r} is not a dialogue field ({', '.join(FIELDS)})")
    found = rows(path)
    if not found:
        raise DataError(path, "the dataset has no rows")
    first = _mapped(path, 0, found[0], columns) if isinstance(found[0], dict) else {}
    shape = _shape(path, options, first, log)
    out = []
    for index, row in enumerate(found):
        made = log.attempt(path, index, partial(_record, path, index, row, columns, shape))
        if made is not None:
            out.append(made)
    return out
