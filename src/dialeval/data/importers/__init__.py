"""Importers: conversations kept in tracing systems and datasets, read into dialogue records.

Each format is a reader ``read(path, options, log) -> list[record]`` registered by name
(:mod:`.registry`: the built-in modules and users' own); a record is
what a dialogue data file holds (OpenAI ``messages`` with tool calls), with
``metadata.source`` naming the ids in the source system so scores can be written back
there. The :class:`~.common.ImportLog` collects how calls were grouped, merges that did
not fit and (with ``skip_bad``) the records left out.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from dialeval.data.importers.common import ImportLog
from dialeval.data.importers.registry import BUILT_IN, get_importer, importer_names, register_importer
from dialeval.errors import DataError

__all__ = ["FORMATS", "ImportLog", "MergeWarning", "get_importer", "import_file", "import_records", "importer_names", "register_importer"]

MAX_BYTES = 2 * 2**30  # a file is read whole: larger exports are split, not left to exhaust memory
FORMATS = {name: entry[1] for name, entry in BUILT_IN.items()}  # the built-in formats (importer_names(): all)


def import_file(fmt: str, path: str | Path, options: dict[str, Any] | None = None,
                log: ImportLog | None = None) -> tuple[list[dict[str, Any]], ImportLog]:
    """The dialogue records of ``path`` read as ``fmt``, and what the import noted."""
    importer = get_importer(fmt)
    if importer is None:
        raise DataError(path, f"unknown format {fmt!r}; formats: {', '.join(importer_names())}")
    path = Path(path)
    if not path.exists():
        raise DataError(path, "file not found")
    if path.is_dir() and not importer.folders:
        raise DataError(path, f"is a folder; {fmt} reads one exported file (give the file inside it)")
    if path.is_file() and path.stat().st_size > MAX_BYTES:
        raise DataError(path, f"{path.stat().st_size / 2**30:.1f} GiB, more than the {MAX_BYTES / 2**30:.0f} GiB an import reads "
                        "into memory; split the export (by day or by project) and import the parts")
    log = log or ImportLog()
    try:
        records = list(importer.read(path, options or {}, log))
    except DataError as err:
        from dialeval.data.importers.sniff import hint

        err.args = (str(err) + hint(path, fmt),)  # the file may be another format: say which
        raise
    return records, log


class MergeWarning(UserWarning):
    """A merge of calls that did not fit, said where a run reads an export directly."""


def import_records(fmt: str, path: str | Path, options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The dialogue records of ``path`` read as ``fmt`` (merges that did not fit as warnings)."""
    records, log = import_file(fmt, path, options)
    for line in log.warnings:
        warnings.warn(f"{path}: {line}", MergeWarning, stacklevel=2)
    return records
