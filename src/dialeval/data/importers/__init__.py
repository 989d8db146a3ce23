"""Importers: conversations kept in tracing systems and datasets, read into dialogue records.

Each format is one module with ``read(path, options) -> list[record]``; a record is what a
dialogue data file holds (OpenAI ``messages`` with tool calls), with ``metadata.source``
naming the ids in the source system so scores can be written back there.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

from dialeval.errors import DataError

FORMATS = {
    "otel": "OpenTelemetry GenAI spans (OTLP/JSON, the collector's file exporter)",
    "langsmith": "LangSmith runs (JSON/JSONL as the SDK serializes langsmith.schemas.Run)",
    "langfuse": "Langfuse traces with observations (JSON from its API or SDK)",
    "hf": "Hugging Face dataset rows (save_to_disk folder, parquet/arrow, or to_json lines)",
}


def import_records(fmt: str, path: str | Path, options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The dialogue records of ``path`` read as ``fmt``."""
    if fmt not in FORMATS:
        raise DataError(path, f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    path = Path(path)
    if not path.exists():
        raise DataError(path, "file not found")
    module = import_module(f"dialeval.data.importers.{fmt}")
    return list(module.read(path, options or {}))
