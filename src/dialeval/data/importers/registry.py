"""Importers by name: the built-in formats and users' own, like benchmarks (docs/extending.md).

A reader is ``read(path, options, log) -> records`` (dialogue records: OpenAI
``messages``, ``metadata.source``); :func:`register_importer` adds one under a name that
``dialeval import NAME``, the dialogue option ``format`` and :func:`import_records` then
accept. Built-in modules are imported when first used; installed packages register theirs
from a ``dialeval.plugins`` entry point.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from dialeval.data.importers.common import ImportLog

Reader = Callable[[Path, dict[str, Any], "ImportLog"], Iterable[dict[str, Any]]]

# name -> (module with ``read``, what it reads, whether it reads a folder)
BUILT_IN: dict[str, tuple[str, str, bool]] = {
    "otel": ("dialeval.data.importers.otel",
             "OpenTelemetry GenAI spans and log records (OTLP/JSON: the collector's file exporter, or MessageToDict)", False),
    "langsmith": ("dialeval.data.importers.langsmith", "LangSmith runs (JSON/JSONL as the SDK serializes langsmith.schemas.Run)", False),
    "langfuse": ("dialeval.data.importers.langfuse",
                 "Langfuse traces with observations (its API's JSON, or the SDK's spans as OTLP/JSON)", False),
    "hf": ("dialeval.data.importers.hf", "Hugging Face dataset rows (save_to_disk folder, parquet/arrow, or to_json lines)", True),
}


@dataclass(frozen=True)
class Importer:
    """One format: its reader, a line for ``dialeval import --help``, and whether it reads folders."""

    name: str
    description: str
    read: Reader
    folders: bool = False


_REGISTRY: dict[str, Importer] = {}


def register_importer(name: str, description: str, *, folders: bool = False) -> Callable[[Reader], Reader]:
    """Decorate ``read(path, options, log)`` to import files of format ``name``."""
    if name == "dialogue":
        raise ValueError("'dialogue' names dialeval's own data files, not an import format")

    def decorate(read: Reader) -> Reader:
        _REGISTRY[name] = Importer(name, description, read, folders)
        return read

    return decorate


def importer_names(*, plugins: bool = True) -> dict[str, str]:
    """name -> description of every format (``plugins``: installed packages' entry points loaded first)."""
    if plugins:
        from dialeval.plugins import load_entry_points

        load_entry_points()
    return {**{name: entry[1] for name, entry in BUILT_IN.items()}, **{n: i.description for n, i in _REGISTRY.items()}}


def _imported_when_read(module: str) -> Reader:
    """A built-in reader whose module (and its optional dependencies) loads on the first read."""

    def read(path: Path, options: dict[str, Any], log: ImportLog) -> Iterable[dict[str, Any]]:
        reader: Reader = import_module(module).read
        return reader(path, options, log)

    return read


def get_importer(name: str) -> Importer | None:
    """The format registered as ``name`` (a built-in is imported here), or None."""
    if name not in _REGISTRY and name in BUILT_IN:
        module, description, folders = BUILT_IN[name]
        _REGISTRY[name] = Importer(name, description, _imported_when_read(module), folders)
    if name not in _REGISTRY:
        importer_names()  # an installed package's format registers as its entry point loads
    return _REGISTRY.get(name)
