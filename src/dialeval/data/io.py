"""Reading data files so that bad input stops with file, record and field named."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, TypeVar

from pydantic import BaseModel, ValidationError

from dialeval.errors import DataError  # its old home: `from dialeval.data.io import DataError` keeps working

M = TypeVar("M", bound=BaseModel)
MAX_NESTING = 64  # real records nest a handful of levels; deeper data is refused at load
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},\n]')  # strings skipped whole


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
                raise DataError(path, f"not valid JSON ({err.msg} at column {err.colno})", record=len(records), line=number) from None
            except RecursionError:
                raise DataError(path, _too_deep(), record=len(records), line=number) from None
            except ValueError as err:  # e.g. a number of more digits than Python converts
                raise DataError(path, f"not readable JSON ({str(err)[:120]})", record=len(records), line=number) from None
            _check_depth(path, records[-1], len(records) - 1, number)
            records.lines.append(number)
        return records
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(path, f"not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        deep_record, deep_line = _deep_place(text)
        raise DataError(path, _too_deep(), record=deep_record, line=deep_line) from None
    except ValueError as err:  # e.g. a number of more digits than Python converts
        raise DataError(path, f"not readable JSON ({str(err)[:120]})") from None
    rows = data if isinstance(data, list) else [data]
    for index, raw in enumerate(rows):
        _check_depth(path, raw, index if isinstance(data, list) else None)
    return rows


def _too_deep() -> str:
    return f"nested more than {MAX_NESTING} levels deep; no benchmark record is shaped like this"


def _check_depth(path: Path, record: Any, index: int | None, line: int | None = None) -> None:
    """Refuse a record nested deeper than :data:`MAX_NESTING`, naming its top-level field
    that does (walked without recursion, so any depth json accepted is safe here)."""
    stack: list[tuple[Any, int, str]] = [(record, 1, "")]
    while stack:
        value, depth, field = stack.pop()
        if isinstance(value, dict):
            children = [(v, field or str(k)) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(v, field or str(i)) for i, v in enumerate(value)]
        else:
            continue
        if depth > MAX_NESTING:
            raise DataError(path, _too_deep(), record=index if index is not None else 0, field=field or None, line=line)
        stack.extend((v, depth + 1, f) for v, f in children)


def _deep_place(text: str) -> tuple[int | None, int]:
    """(record index in a top-level array, line from 1) where ``text`` first nests
    deeper than :data:`MAX_NESTING`: json itself gave up, so the text is scanned."""
    depth = record = 0
    line = 1
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > MAX_NESTING:
                break
        elif token in "]}":
            depth -= 1
        elif token == "," and depth == 1:
            record += 1
        else:  # a string: count the line breaks it holds
            line += token.count("\n")
    return (record if text.lstrip().startswith("[") else None), line


def validate_record(model: type[M], raw: Any, file: str | Path, record: str | int) -> M:
    """``model.model_validate(raw)`` with the first problem reported as file/record/field."""
    try:
        return model.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        from dialeval.field_errors import field_message  # an unknown key gets the valid ones and the closest

        message = field_message(model, first)  # else a validator's own sentence
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
