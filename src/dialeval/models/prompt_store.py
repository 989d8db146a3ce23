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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from dialeval.jsonsafe import dumps
from dialeval.models.shared_sqlite import connect_shared

PROMPTS = "prompts.sqlite"
_INLINE_LIMIT = 256  # data: URLs longer than this are replaced by a marker

_lock = threading.Lock()


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


# Prompts wait in memory and go into the SQLite store in one transaction every
# FLUSH_EVERY prompts, at the end of the run, at exit and whenever they are read. SQLite
# is opened at the first flush, not at the first prompt: a run's first answers are not
# kept waiting for a database file to be set up.
FLUSH_EVERY = 256


@dataclass
class _Store:
    """One run folder's store in this process: the prompts not yet in SQLite, and the file once opened."""

    run_dir: str
    conn: sqlite3.Connection | None = None
    seen: set[str] = field(default_factory=set)  # refs already stored by this process
    pending: list[tuple[str, bytes]] = field(default_factory=list)  # waiting for the next flush


_stores: dict[str, _Store] = {}


def _open(run_dir: str) -> sqlite3.Connection:
    # WAL: ~30 us an insert instead of ~300 with a rollback journal; synchronous=OFF: a
    # lost prompt costs nothing, the run does not depend on it
    os.makedirs(run_dir, exist_ok=True)
    return connect_shared(Path(run_dir) / PROMPTS, (
        "PRAGMA synchronous=OFF", "CREATE TABLE IF NOT EXISTS prompts (ref TEXT PRIMARY KEY, messages BLOB NOT NULL)",
    ), isolation_level=None)  # fmt: skip


def _insert(conn: sqlite3.Connection, rows: list[tuple[str, bytes]]) -> None:
    if rows:
        with conn:  # one transaction
            conn.execute("BEGIN")
            conn.executemany("INSERT OR IGNORE INTO prompts VALUES (?, ?)", [(r, zlib.compress(t)) for r, t in rows])


def _flush(store: _Store) -> None:
    """The waiting prompts into SQLite."""
    if store.pending:
        if store.conn is None:
            store.conn = _open(store.run_dir)
        _insert(store.conn, store.pending)
        store.pending.clear()


def _close(store: _Store) -> None:
    try:
        _flush(store)
    except (OSError, sqlite3.Error):  # the folder is gone; its prompts with it
        pass
    if store.conn is not None:
        _as_one_file(store.conn)
        store.conn.close()  # checkpoints the WAL into the file and removes the -wal/-shm companions
    if _stores.get(store.run_dir) is store:
        del _stores[store.run_dir]


@contextmanager
def closing(run_dir: str | Path) -> Iterator[None]:
    """The block runs while :func:`close` runs in a thread; the store is closed when it ends.

    Why: closing opens the SQLite file and moves the run's prompts in (a few milliseconds,
    mostly in SQLite, which lets go of the GIL), work the end of a run can overlap with
    writing its report."""
    thread = threading.Thread(target=close, args=(run_dir,), name="dialeval-prompt-store")
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _as_one_file(conn: sqlite3.Connection) -> None:
    """Leave the store a plain one-file database (rollback journal) when this is its last
    connection. Why: a WAL-mode file grows ``-wal``/``-shm`` companions whenever anything
    opens it read-only (the re-run's store check, the viewer), and those cannot remove
    them. Another process with the file open keeps WAL: SQLite refuses the switch at once."""
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.Error:
        pass


def close(run_dir: str | Path) -> None:
    """Store what waits for ``run_dir`` and let go of its file.

    Why: a run's store otherwise stays open until the process exits: a notebook or a
    sweep running evaluations one after another runs out of descriptors."""
    target = os.path.realpath(run_dir)
    with _lock:
        for store in [s for key, s in _stores.items() if os.path.realpath(key) == target]:
            _close(store)


@atexit.register
def _close_all() -> None:
    """Flush every open store and close it."""
    with _lock:
        for store in list(_stores.values()):
            _close(store)


def store_prompt(run_dir: str | Path | None, messages: Iterable[Any]) -> str:
    """Store ``messages`` under the run folder (when there is one) and return their hash."""
    text = _serialised(to_json(messages))  # one serialisation serves the hash and the stored blob
    ref = _ref(text)
    if run_dir is None:
        return ref
    key = str(run_dir)
    with _lock:
        store = _stores.get(key)
        if store is not None and store.conn is not None and not os.path.exists(os.path.join(key, PROMPTS)):
            _close(store)  # the run folder was deleted and made again: its prompts are stored anew
            store = None
        if store is None:
            store = _stores[key] = _Store(key)
        if ref not in store.seen:
            store.pending.append((ref, text))
            store.seen.add(ref)
            if len(store.pending) >= FLUSH_EVERY:
                _flush(store)
    return ref


def flush(run_dir: str | Path) -> None:
    """Move what waits for ``run_dir`` into its SQLite store now."""
    target = os.path.realpath(run_dir)
    with _lock:
        for key, store in _stores.items():
            if os.path.realpath(key) == target:
                _flush(store)


def load_prompts(run_dir: str | Path) -> dict[str, list[dict[str, Any]]]:
    """Every stored prompt of a run: ``{ref: messages}`` (empty when none were stored)."""
    flush(run_dir)  # what this process is still holding
    return {ref: json.loads(zlib.decompress(blob)) for ref, blob in _stored(run_dir)}


def _stored(run_dir: str | Path) -> list[tuple[str, bytes]]:
    """The rows of a run's store as stored (compressed), read-only; none when there is no store."""
    path = Path(run_dir) / PROMPTS
    if not path.is_file():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT ref, messages FROM prompts").fetchall()
    except sqlite3.DatabaseError:  # a store cut short by a crash: the pages say the prompts are missing
        return []
    finally:
        conn.close()


def copy_prompts(sources: Iterable[str | Path], run_dir: str | Path) -> None:
    """Every prompt stored under the ``sources`` run folders into ``run_dir``'s store
    (``dialeval merge``: the joined run's viewer shows every shard's prompts)."""
    conn = _open(str(run_dir))
    try:
        for source in sources:
            with conn:
                conn.execute("BEGIN")
                conn.executemany("INSERT OR IGNORE INTO prompts VALUES (?, ?)", _stored(source))
        _as_one_file(conn)
    finally:
        conn.close()


def _forget_inherited() -> None:
    """In a forked child (a run's worker process): its own stores, never the parent's
    connections (an SQLite connection must not cross a fork) nor its waiting prompts
    (the parent stores those)."""
    global _lock, _stores
    _lock = threading.Lock()
    _stores = {}


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited)
