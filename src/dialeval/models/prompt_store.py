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


# The hot path only appends each new prompt to this process's journal beside the store
# (one ``write`` call: once it returns the kernel holds the line, so a SIGKILL loses
# nothing); every FLUSH_EVERY prompts, at the end of the run, at exit and whenever they
# are read, the journal goes into the SQLite store in one transaction and starts empty
# again. A journal left by a killed process is moved into the store by the next process
# that flushes into it. SQLite is opened at the first flush, not at the first prompt: a
# run's first answers are not kept waiting for a database file to be set up.
FLUSH_EVERY = 256
_JOURNAL_GLOB = "prompts.*.journal"


@dataclass
class _Store:
    """One run folder's open store in this process: our journal, and the SQLite file once flushed into."""

    run_dir: str
    journal: int  # file descriptor, O_APPEND
    conn: sqlite3.Connection | None = None
    seen: set[str] = field(default_factory=set)  # refs already stored by this process
    pending: list[tuple[str, bytes]] = field(default_factory=list)  # journalled, not yet in SQLite


_stores: dict[str, _Store] = {}


def _journal_path(run_dir: str, pid: int) -> str:
    return os.path.join(run_dir, f"prompts.{pid}.journal")


def _connect(run_dir: str) -> _Store:
    """The open store of a run folder (keyed by the folder string: no path resolution per call)."""
    store = _stores.get(run_dir)
    if store is not None and not os.path.exists(_journal_path(run_dir, os.getpid())):  # the folder was made again
        _close(store)
        store = None
    if store is None:
        os.makedirs(run_dir, exist_ok=True)
        journal = os.open(_journal_path(run_dir, os.getpid()), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        store = _stores[run_dir] = _Store(run_dir, journal)
    return store


def _database(store: _Store) -> sqlite3.Connection:
    """The run's SQLite store, opened (and the journals of killed processes moved in) on first use."""
    if store.conn is None:
        store.conn = _open(store.run_dir)
        _recover(store.run_dir, store.conn)
    return store.conn


def _open(run_dir: str) -> sqlite3.Connection:
    # worker processes of one run share the store: a writer waits for another's insert;
    # WAL: ~30 us an insert instead of ~300 with a rollback journal; synchronous=OFF: a
    # lost prompt costs nothing, the run does not depend on it
    return connect_shared(Path(run_dir) / PROMPTS, (
        "PRAGMA synchronous=OFF", "CREATE TABLE IF NOT EXISTS prompts (ref TEXT PRIMARY KEY, messages BLOB NOT NULL)",
    ), isolation_level=None)  # fmt: skip


def _journal_lines(path: Path) -> list[tuple[str, bytes]]:
    """The whole lines of a journal (a line cut short by a kill is left out)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    rows = []
    for line in data.split(b"\n")[:-1]:  # the last piece has no newline: torn or empty
        ref, _, text = line.partition(b" ")
        if len(ref) == 24 and text:
            rows.append((ref.decode("ascii", "replace"), text))
    return rows


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _left_by_the_gone(run_dir: str) -> list[Path]:
    """The journals of processes that are gone (killed before they flushed), and our own;
    another live process (a worker of the same run) flushes its own."""
    left = []
    for path in Path(run_dir).glob(_JOURNAL_GLOB):
        pid = path.name.split(".")[1]
        if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            left.append(path)
    return left


def _recover(run_dir: str, conn: sqlite3.Connection, left: list[Path] | None = None) -> None:
    """Move the journals of processes that are gone (``left``, when already listed) into the store."""
    for path in _left_by_the_gone(run_dir) if left is None else left:
        _insert(conn, _journal_lines(path))
        path.unlink(missing_ok=True)


def _take_in_the_gone(run_dir: str) -> None:
    """Journals that processes now gone left in ``run_dir`` into its store. Why: workers
    stopped by Ctrl-C or killed cannot flush their own, and the parent, which sent no
    prompt, has no store open that would take them in; their folder kept one stray
    journal per worker until the re-run."""
    try:
        left = _left_by_the_gone(run_dir)
        if not left:
            return
        conn = _open(run_dir)
    except (OSError, sqlite3.Error):  # the folder is gone; its prompts with it
        return
    try:
        _recover(run_dir, conn, left)
        _as_one_file(conn)
    except (OSError, sqlite3.Error):
        pass
    finally:
        conn.close()


def _insert(conn: sqlite3.Connection, rows: list[tuple[str, bytes]]) -> None:
    if rows:
        with conn:  # one transaction
            conn.execute("BEGIN")
            conn.executemany("INSERT OR IGNORE INTO prompts VALUES (?, ?)", [(r, zlib.compress(t)) for r, t in rows])


def _flush(store: _Store) -> None:
    """The journalled prompts into SQLite, then an empty journal."""
    if store.pending:
        _insert(_database(store), store.pending)
        store.pending.clear()
        os.ftruncate(store.journal, 0)


def _close(store: _Store) -> None:
    try:
        _flush(store)
    except (OSError, sqlite3.Error):  # the folder is gone; its prompts with it
        pass
    os.close(store.journal)
    if store.conn is not None:
        _as_one_file(store.conn)
        store.conn.close()  # checkpoints the WAL into the file and removes the -wal/-shm companions
    if _stores.get(store.run_dir) is store:
        del _stores[store.run_dir]
    journal = _journal_path(store.run_dir, os.getpid())
    if not store.pending and os.path.exists(journal) and os.path.getsize(journal) == 0:
        os.unlink(journal)


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
    them, so a finished run's folder kept two stray files. Another process still writing
    (a worker) keeps WAL: the switch needs the file to itself, and SQLite refuses it at once
    (no busy wait) when another connection has it open."""
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.Error:
        pass


def close(run_dir: str | Path) -> None:
    """Flush what this process journalled for ``run_dir`` and let go of its files; take in
    what processes now gone (stopped workers) journalled there.

    Why: a run's store otherwise stays open until the process exits, four descriptors a
    run: a notebook or a sweep running evaluations one after another runs out of them."""
    target = os.path.realpath(run_dir)
    with _lock:
        for store in [s for key, s in _stores.items() if os.path.realpath(key) == target]:
            _close(store)
        _take_in_the_gone(str(run_dir))


@atexit.register
def _close_all() -> None:
    """Flush every open store and close it."""
    with _lock:
        for store in list(_stores.values()):
            _close(store)


close_all = _close_all  # a worker process ends without exit hooks: it closes its store itself


def _forget_inherited() -> None:
    """In a forked child: the parent's connections and journals stay the parent's (closing
    a connection here could checkpoint under it; the parent's pending prompts are in its
    own journal); the child opens its own store and journal on first use."""
    global _lock
    for store in _stores.values():
        if store.conn is not None:
            _inherited.append(store.conn)
        os.close(store.journal)  # the child's copy of the descriptor only
    _stores.clear()
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
        store = _connect(key)
        if ref not in store.seen:
            os.write(store.journal, ref.encode("ascii") + b" " + text + b"\n")  # JSON text holds no raw newline
            store.pending.append((ref, text))
            store.seen.add(ref)
            if len(store.pending) >= FLUSH_EVERY:
                _flush(store)
    return ref


def flush(run_dir: str | Path) -> None:
    """Move what this process journalled for ``run_dir`` into its SQLite store now."""
    target = os.path.realpath(run_dir)
    with _lock:
        for key, store in _stores.items():
            if os.path.realpath(key) == target:
                _flush(store)


def load_prompts(run_dir: str | Path) -> dict[str, list[dict[str, Any]]]:
    """Every stored prompt of a run: ``{ref: messages}`` (empty when none were stored)."""
    flush(run_dir)  # what this process is still holding in its journal
    path = Path(run_dir) / PROMPTS
    prompts: dict[str, list[dict[str, Any]]] = {}
    if path.exists():
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT ref, messages FROM prompts").fetchall()
        except sqlite3.DatabaseError:  # a store cut short by a crash: the pages say the prompts are missing
            rows = []
        finally:
            conn.close()
        prompts = {ref: json.loads(zlib.decompress(blob)) for ref, blob in rows}
    for journal in Path(run_dir).glob(_JOURNAL_GLOB):  # other processes' (or killed ones') journals
        for ref, text in _journal_lines(journal):
            prompts.setdefault(ref, json.loads(text))
    return prompts
