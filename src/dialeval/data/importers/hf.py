"""Hugging Face datasets on disk: a folder written by ``Dataset.save_to_disk``, a parquet or
arrow file, or the JSON lines ``Dataset.to_json`` writes. Nothing is downloaded.

Each row is one conversation. ``--option columns='{"id": "conv_id", "messages": "chat"}'``
says which column holds which field of a dialogue record (``id``, ``messages`` or
``conversations``, ``system``, ``tools``, ``grounding``, ``summary``, ``metadata``,
``reference_tool_calls``); columns of the same name are taken as they are. Parquet and
arrow need ``pyarrow`` (a saved folder ``datasets``): a clear message says so when absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dialeval.data.io import read_records
from dialeval.errors import DataError

FIELDS = ("id", "messages", "conversations", "system", "tools", "grounding", "documents", "summary", "metadata",
          "reference_tool_calls")


def rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a dataset file or folder, as plain Python values."""
    if path.is_dir():
        try:
            from datasets import load_from_disk
        except ImportError:
            raise DataError(path, "a saved dataset folder needs the `datasets` package (pip install datasets), "
                            "or export it with Dataset.to_json / to_parquet") from None
        return list(load_from_disk(str(path)))
    if path.suffix in (".parquet", ".arrow"):
        try:
            import pyarrow.ipc as ipc
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError(path, f"a {path.suffix} file needs the `pyarrow` package (pip install pyarrow), "
                            "or export the dataset with Dataset.to_json") from None
        if path.suffix == ".parquet":
            return list(pq.read_table(path).to_pylist())
        with path.open("rb") as f:
            try:
                table = ipc.open_stream(f).read_all()  # what save_to_disk writes
            except Exception:
                f.seek(0)
                table = ipc.open_file(f).read_all()
        return list(table.to_pylist())
    return [r if isinstance(r, dict) else {"_": r} for r in read_records(path)]


def read(path: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    """Dialogue records from dataset rows through the column mapping."""
    columns = options.get("columns") or {}
    if isinstance(columns, str):
        columns = json.loads(columns)
    unknown = sorted(set(columns) - set(FIELDS))
    if unknown:
        raise DataError(path, f"option columns: {unknown[0]!r} is not a dialogue field ({', '.join(FIELDS)})")
    out = []
    for index, row in enumerate(rows(path)):
        record: dict[str, Any] = {}
        for field in FIELDS:
            column = columns.get(field, field)
            if column in row and row[column] is not None:
                value = row[column]
                if field in ("messages", "conversations") and isinstance(value, str):
                    try:
                        value = json.loads(value)
                    except json.JSONDecodeError:
                        raise DataError(path, f"column {column!r} is text but not JSON messages", record=index, field=column) from None
                record[field] = value
        if "messages" not in record and "conversations" not in record:
            wanted = columns.get("messages", columns.get("conversations", "messages"))
            raise DataError(path, f"no column {wanted!r} with the messages; name it in the column mapping, e.g. "
                            f"columns={{\"messages\": \"<column>\"}} (dialeval import --columns, or --option columns=...)",
                            record=index, field=wanted)
        record.setdefault("id", str(index))
        metadata = dict(record.get("metadata") or {})
        metadata["source"] = {"format": "hf", "row": index, "conversation_ids": [str(record["id"])], "turn_ids": {}}
        record["metadata"] = metadata
        out.append(record)
    if not out:
        raise DataError(path, "the dataset has no rows")
    return out
