"""The prompts of a run's calls, kept beside the run without bloating ``results.jsonl``.

Each agent call records only a ``prompt_ref`` (a hash of the messages it sent); the
messages themselves go once into ``<run>/prompts.sqlite``, compressed and keyed by that
hash, so a prompt repeated across items or re-runs is stored once. The viewer reads
them back. Inline images (``data:`` URLs) are replaced by a short marker: their bytes
are in the data files already. API keys (in the data or in earlier answers) are
scrubbed before hashing and storing, like everything a run writes.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sqlite3
import threading
import zlib
from pathlib import Path
from typing import Any, Iterable

from dialeval.jsonsafe import dumps

PROMPTS = "prompts.sqlite"
_INLINE_LIMIT = 256  # data: URLs longer than this are replaced by a marker

_lock = threading.Lock()
_connections: dict[str, sqlite3.Connection] = {}
_seen: dict[str, set[str]] = {}  # refs already stored by this process, per store


def _content(content: Any) -> Any:
    """Message content as JSON, with inline image bytes left out."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image_url":
            url = part.get("image_url")
            url = url.get("url", "") if isinstance(url, dict) else str(url or "")
            if url.startswith("data:") and len(url) > _INLINE_LIMIT:
                url = f"{url.split(',', 1)[0]},<{len(url)} characters left out>"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append(part)
    return parts


def to_json(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """LangChain messages as ``[{"role": ..., "content": ...}]``."""
    return [{"role": getattr(m, "type", "human"), "content": _content(getattr(m, "content", m))} for m in messages]


def _serialised(payload: list[dict[str, Any]]) -> bytes:
    from dialeval.secrets import scrub

    return scrub(dumps(payload, sort_keys=True)).encode("utf-8")  # keys scrubbed; lone surrogates escaped: always UTF-8


def _ref(serialised: bytes) -> str:
    return hashlib.sha256(serialised).hexdigest()[:24]


def prompt_hash(payload: list[dict[str, Any]]) -> str:
    return _ref(_serialised(payload))


def _connect(run_dir: str) -> sqlite3.Connection:
    """The open store of a run folder (keyed by the folder string: no path resolution per call)."""
    conn = _connections.get(run_dir)
    if conn is not None and not os.path.exists(os.path.join(run_dir, PROMPTS)):  # the folder was deleted and made again
        conn.close()
        conn = None
    if conn is None:
        path = Path(run_dir) / PROMPTS
        path.parent.mkdir(parents=True, exist_ok=True)
        # worker processes of one run share the store: a writer waits for another's insert
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")  # ~30 us an insert instead of ~300 with a rollback journal
        conn.execute("PRAGMA synchronous=OFF")  # a lost prompt costs nothing: the run does not depend on it
        conn.execute("CREATE TABLE IF NOT EXISTS prompts (ref TEXT PRIMARY KEY, messages BLOB NOT NULL)")
        _connections[run_dir] = conn
        _seen[run_dir] = set()
    return conn


@atexit.register
def _close_all() -> None:
    """Closing checkpoints the WAL into the file and removes the -wal/-shm companions."""
    with _lock:
        for conn in _connections.values():
            conn.close()
        _connections.clear()
        _seen.clear()


close_all = _close_all  # a worker process ends without exit hooks: it closes its store itself


def _forget_inherited() -> None:
    """In a forked child: the parent's connections stay the parent's (closing them here
    could checkpoint under it); the child opens its own on first use."""
    global _lock
    _inherited.extend(_connections.values())
    _connections.clear()
    _seen.clear()
    _lock = threading.Lock()  # it may have been held by another thread at the fork


_inherited: list[sqlite3.Connection] = []  # kept referenced: never closed by the collector either
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited)


def store_prompt(run_dir: str | Path | None, messages: Iterable[Any]) -> str:
    """Store ``messages`` under the run folder (when there is one) and return their hash."""
    text = _serialised(to_json(messages))  # one serialisation serves the hash and the stored blob
    ref = _ref(text)
    if run_dir is None:
        return ref
    key = str(run_dir)
    with _lock:
        conn = _connect(key)
        seen = _seen[key]
        if ref not in seen:
            conn.execute("INSERT OR IGNORE INTO prompts VALUES (?, ?)", (ref, zlib.compress(text)))
            seen.add(ref)
    return ref


def load_prompts(run_dir: str | Path) -> dict[str, list[dict[str, Any]]]:
    """Every stored prompt of a run: ``{ref: messages}`` (empty when none were stored)."""
    path = Path(run_dir) / PROMPTS
    if not path.exists():
        return {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT ref, messages FROM prompts").fetchall()
    except sqlite3.DatabaseError:  # a store cut short by a crash: the pages say the prompts are missing
        rows = []
    finally:
        conn.close()
    return {ref: json.loads(zlib.decompress(blob)) for ref, blob in rows}
