"""A SQLite cache of model responses shared by all runs.

Keyed by backend, model, messages and generation parameters, so a repeated call never
reaches the model. One connection per process and path; writes are committed at once
so an interrupted run keeps everything it paid for. Several processes (two runs
at once) share one file: WAL lets them read while one writes, and a writer waits its
turn (up to 30 s) rather than failing. Stored answers are scrubbed of API
keys: the cache is shared by every run and outlives them.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from dialeval.jsonsafe import dumps, utf8
from dialeval.models.shared_sqlite import connect_shared

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    payload TEXT NOT NULL,
    created REAL DEFAULT (julianday('now'))
)
"""


def cache_key(parts: dict[str, Any]) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(utf8(blob)).hexdigest()  # a prompt with a lone surrogate still has a key


class ResponseCache:
    """Thread-safe get/put of JSON payloads by key."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # WAL: durable across crashes with synchronous=NORMAL, no fsync per put; runs at once share it
        self._conn = connect_shared(self.path, ("PRAGMA synchronous=NORMAL", _SCHEMA))

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, payload: dict[str, Any]) -> None:
        from dialeval.secrets import scrub

        blob = scrub(dumps(payload))  # keys scrubbed; a reply's lone surrogate stored escaped
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO responses (key, model, payload) VALUES (?, ?, ?)", (key, model, blob))
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


_OPEN: dict[str, ResponseCache] = {}
_OPEN_LOCK = threading.Lock()


_BY_PATH: dict[str, ResponseCache] = {}  # absolute path as given -> cache: no symlink resolution per call


def open_cache(path: str | Path) -> ResponseCache:
    """The process-wide cache object for ``path`` (opened on first use)."""
    absolute = os.path.abspath(os.path.expanduser(path))  # string work only: called twice per model call
    cache = _BY_PATH.get(absolute)
    if cache is not None:
        return cache
    resolved = str(Path(absolute).resolve())
    with _OPEN_LOCK:
        if resolved not in _OPEN:
            _OPEN[resolved] = ResponseCache(resolved)
        _BY_PATH[absolute] = _OPEN[resolved]
        return _OPEN[resolved]


_inherited: list[ResponseCache] = []  # a forked child's copies of the parent's: kept, never used or closed


def _forget_inherited() -> None:
    """In a forked child: open fresh connections, never the parent's
    (an SQLite connection must not cross a fork); closing them could disturb the parent's."""
    global _OPEN_LOCK
    _inherited.extend(_OPEN.values())
    _OPEN.clear()
    _BY_PATH.clear()
    _OPEN_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited)


def store_answer(generation: Any, spec: str) -> None:
    """Keep a :class:`~dialeval.models.generation.Generation` that ended ``ok`` under its key
    (a cache hit, a dry-run estimate or a call without a key is not stored again)."""
    if generation.cached or generation.estimated or not generation.cache_key or not generation.cache_path:
        return
    import time

    open_cache(generation.cache_path).put(
        generation.cache_key,
        spec,
        {
            "text": generation.text,
            "finish_reason": generation.finish_reason,
            "input_tokens": generation.input_tokens,
            "output_tokens": generation.output_tokens,
            "stored": time.time(),
            **({"logprobs": generation.logprobs} if generation.logprobs else {}),
        },
    )
