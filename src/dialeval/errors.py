"""The errors users see: a bad config, bad data, a run that cannot start as asked.

They live here, below every layer, so any module can raise them without importing the
layer that used to define them; the old locations (``dialeval.config.ConfigError``,
``dialeval.data.io.DataError``) import them from here and keep working.
"""

from __future__ import annotations

from pathlib import Path


class ConfigError(ValueError):
    """A config file or value is invalid; the message names file and field."""


class DataError(ValueError):
    """A data file that cannot be used; the message says where and why.

    Records count from 0 (the index in a JSON array); a JSONL file's line, counted from 1
    as editors do, follows in parentheses: ``record 3 (line 4)``."""

    def __init__(
        self, file: str | Path, message: str, record: str | int | None = None, field: str | None = None, line: int | None = None
    ):
        where = str(file)
        if record is not None:
            where += f", record {record}" + (f" (line {line})" if line else "")
        elif line:
            where += f", line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")
        self.file, self.record, self.field = str(file), record, field


class RunError(ConfigError):
    """A run that cannot start as asked (its folder, lock, stores or setup); the message
    names the path and the fix. A ``ConfigError`` so every caller that stops on bad
    setup (exit code 2) stops on this too."""


class RunLocked(RunError):
    """Another process is writing the run folder."""
