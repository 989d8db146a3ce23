"""The errors users see: a bad config, bad data, a run that cannot start as asked.

They live here, below every layer, so any module can raise them without importing the
layer that used to define them; the old locations (``dialeval.config.ConfigError``,
``dialeval.data.io.DataError``) import them from here and keep working.
"""

from __future__ import annotations

import re
from pathlib import Path


class ConfigError(ValueError):
    """A config file or value is invalid; the message names file and field."""


class CompareError(ConfigError):
    """The runs cannot be compared (other benchmarks, nothing in common, not a run)."""


class DataError(ValueError):
    """A data file that cannot be used; the message says where and why.

    Code passes ``record`` as the 0-based index it holds (or ``"<index> (id='x')"``); the
    message counts records from 1, as a JSONL file's lines are counted and as editors
    count: the first record of a file is ``record 1`` (``record 1 (line 1)`` in JSONL).
    ``self.record`` keeps what code passed."""

    def __init__(
        self, file: str | Path, message: str, record: str | int | None = None, field: str | None = None, line: int | None = None
    ):
        where = str(file)
        if record is not None:
            where += f", record {counted_from_one(record)}" + (f" (line {line})" if line else "")
        elif line:
            where += f", line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")
        self.file, self.record, self.field = str(file), record, field


_INDEX = re.compile(r"(\d+)( \(.*\))?", re.DOTALL)


def counted_from_one(record: str | int) -> str:
    """A 0-based record index, alone or before a note in parentheses, counted from 1
    (``2`` -> ``"3"``, ``"0 (id='a')"`` -> ``"1 (id='a')"``); any other name unchanged."""
    if isinstance(record, int):
        return str(record + 1)
    index = _INDEX.fullmatch(record)
    return f"{int(index.group(1)) + 1}{index.group(2) or ''}" if index else record


class RunError(ConfigError):
    """A run that cannot start as asked (its folder, lock, stores or setup); the message
    names the path and the fix. A ``ConfigError`` so every caller that stops on bad
    setup (exit code 2) stops on this too."""


class RunLocked(RunError):
    """Another process is writing the run folder."""
