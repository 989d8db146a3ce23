"""SQLite files that several processes open at once: two runs may share one response
cache, and the viewer reads a run's prompt store while the run writes it.

Two connections switching a new file to WAL at the same moment can get "database is
locked" at once: SQLite skips the busy timeout where waiting could deadlock. So the
set-up statements are retried for as long as the timeout allows; afterwards WAL lets
readers and one writer work side by side, and writers wait their turn (the timeout).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Sequence


def connect_shared(path: str | Path, setup: Sequence[str], timeout: float = 30.0, **kwargs: Any) -> sqlite3.Connection:
    """A connection to ``path`` in WAL mode with ``setup`` run (schema, pragmas), waiting out
    other processes doing the same; ``kwargs`` go to :func:`sqlite3.connect`."""
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=timeout, **kwargs)
    deadline = time.monotonic() + timeout
    pause = 0.005
    for statement in ("PRAGMA journal_mode=WAL", *setup):
        while True:
            try:
                conn.execute(statement)
                break
            except sqlite3.OperationalError as err:
                if not _contended(err) or time.monotonic() > deadline:
                    conn.close()
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.2)
    if conn.in_transaction:
        conn.commit()
    return conn


def _contended(err: sqlite3.OperationalError) -> bool:
    """Another connection holds the lock (it will let go), as opposed to a broken file."""
    text = str(err).lower()
    return "locked" in text or "busy" in text
