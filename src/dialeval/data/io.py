"""Reading data files so that bad input stops with file, record and field named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, TypeVar

from pydantic import BaseModel, ValidationError

from dialeval.errors import DataError  # its old home: `from dialeval.data.io import DataError` keeps working

M = TypeVar("M", bound=BaseModel)


def read_text(path: str | Path) -> str:
    """A data file as UTF-8 text; other encodings stop with the file and byte offset."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise DataError(path, f"not UTF-8 text (byte offset {err.start}: {err.reason}); save it as UTF-8") from None


class Records(list):
    """Records of a JSONL file, with the line (from 1) each came from, for messages."""

    lines: list[int]


def read_records(path: str | Path) -> list[Any]:
    """Records of a JSON array/object file or a JSONL file (one JSON value a line)."""
    path = Path(path)
    if path.is_dir():
        raise DataError(path, "is a folder, not a JSON or JSONL file; give the data file inside it")
    if not path.is_file():
        raise DataError(path, "file not found")
    text = read_text(path)
    if path.suffix == ".jsonl":
        records = Records()
        records.lines = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise DataError(path, f"not valid JSON ({err.msg})", record=len(records), line=number) from None
            records.lines.append(number)
        return records
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(path, f"not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    return data if isinstance(data, list) else [data]


def validate_record(model: type[M], raw: Any, file: str | Path, record: str | int) -> M:
    """``model.model_validate(raw)`` with the first problem reported as file/record/field."""
    try:
        return model.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")  # a validator's own sentence
        raise DataError(file, message, record=record, field=field or None) from None


def validate_all(model: type[M], raws: Iterable[Any], file: str | Path, id_field: str | None = None) -> list[M]:
    """Validate every record; records are named by ``id_field`` when present, else index."""
    out = []
    lines = getattr(raws, "lines", None)
    for index, raw in enumerate(raws):
        notes = [f"line {lines[index]}"] if lines else []
        if id_field and isinstance(raw, dict) and id_field in raw:
            notes.append(f"{id_field}={raw[id_field]!r}")
        name: str | int = f"{index} ({', '.join(notes)})" if notes else index
        out.append(validate_record(model, raw, file, name))
    return out
