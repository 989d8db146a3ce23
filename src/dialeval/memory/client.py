"""Where notes live: an embedded Chroma under the run folder, or a Chroma server.

By default a ``PersistentClient`` writes to ``<run folder>/notes``; setting ``host``
switches to ``HttpClient`` (a server started with ``chroma run``). Telemetry is off and
the embedding function is always ours, so Chroma never downloads a model.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialeval.memory.notes import NoteStore

DEFAULT_COLLECTION = "dialeval-notes"
FALLBACK_PATH = "runs/notes"  # graphs run outside the runner (LangGraph Studio)


class MemorySettings(BaseModel):
    """The ``memory:`` block of a run's options."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(default=None, description="embedded store folder; default <run folder>/notes")
    host: str | None = Field(default=None, description="Chroma server host; when set, HttpClient is used")
    port: int = Field(default=8000, gt=0, lt=65536)
    ssl: bool = False
    collection: str | None = Field(default=None, description="default: the run folder's name")


def collection_name(settings: MemorySettings, run_dir: str | None) -> str:
    """A valid Chroma collection name; one per run, so runs sharing a server never mix."""
    raw = settings.collection or (Path(run_dir).name if run_dir else DEFAULT_COLLECTION)
    name = re.sub(r"[^A-Za-z0-9._-]", "-", raw).strip("._-")
    return name if len(name) >= 3 else f"notes-{name}".strip("-")


def store_location(settings: MemorySettings, run_dir: str | None) -> str:
    """Human-readable place of the notes: a folder or ``http://host:port``."""
    if settings.host:
        return f"{'https' if settings.ssl else 'http'}://{settings.host}:{settings.port}"
    if settings.path:
        return str(Path(settings.path).resolve())
    return str((Path(run_dir) / "notes").resolve() if run_dir else Path(FALLBACK_PATH).resolve())


def chroma_client(settings: MemorySettings, run_dir: str | None = None) -> Any:
    import chromadb
    from chromadb.config import Settings

    chroma_settings = Settings(anonymized_telemetry=False)
    if settings.host:
        return chromadb.HttpClient(host=settings.host, port=settings.port, ssl=settings.ssl, settings=chroma_settings)
    folder = Path(store_location(settings, run_dir))
    folder.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(folder), settings=chroma_settings)


_STORES: dict[tuple[str, str], NoteStore] = {}
_STORES_LOCK = threading.Lock()


def open_note_store(
    settings: MemorySettings | None = None, run_dir: str | None = None, *, embedding_function: Any = None
) -> NoteStore:
    """The process-wide store for this location and collection (built on first use)."""
    settings = settings or MemorySettings()
    key = (store_location(settings, run_dir), collection_name(settings, run_dir))
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            if embedding_function is None:
                from dialeval.memory.embeddings import MiniLMEmbedding

                embedding_function = MiniLMEmbedding()
            client = chroma_client(settings, run_dir)
            collection = client.get_or_create_collection(
                name=key[1],
                embedding_function=embedding_function,
                configuration={"hnsw": {"space": "cosine"}},
            )
            store = _STORES[key] = NoteStore(collection)
        return store


def forget_stores() -> None:
    """Drop cached stores (tests that delete store folders call this)."""
    with _STORES_LOCK:
        _STORES.clear()
