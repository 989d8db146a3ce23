"""The bot journal: every bot call of a run, flushed to the run folder as it happens.

Why: the bot under test is a live system (it books orders, sends e-mails), so a turn
must reach it at most once. Before a call the journal gets a ``sent`` line (the turn's
idempotency key and what the caller needs to rebuild its state); the moment the bot
answers, a ``reply`` line. A resumed or retried conversation replays its replies and
never calls a finished turn again; a turn ``sent`` without a ``reply`` (the process died
during the call) is sent again with the same key. One ``os.write`` per line: a kill
leaves at most one torn last line, which the reader ignores and the writer cuts off.
Text is scrubbed of the run's secrets and stored escaped (:mod:`dialeval.jsonsafe`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.jsonsafe import dumps

JOURNAL = "bot_journal.jsonl"  # the name run/folder.py sets aside on --fresh


@dataclass
class Entry:
    """One turn of one conversation: what was sent, and the reply once it came."""

    sent: dict[str, Any]
    reply: dict[str, Any] | None = None


@dataclass
class _Index:
    nonce: str
    turns: dict[str, list[Entry]] = field(default_factory=dict)  # conversation -> its turns in order
    stamp: tuple[int, int] = (0, 0)  # (inode, size) of the file as last read or written


class Journal:
    """The journal of one run folder (one process writes it: the run holds the folder's lock)."""

    _open: dict[str, Journal] = {}
    _lock = threading.Lock()

    def __init__(self, path: Path):
        self.path = path
        self._index: _Index | None = None

    @classmethod
    def of(cls, run_dir: str | Path) -> Journal:
        path = (Path(run_dir) / JOURNAL).resolve()
        with cls._lock:
            return cls._open.setdefault(str(path), Journal(path))

    def _stamp(self) -> tuple[int, int]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return (0, 0)
        return (stat.st_ino, stat.st_size)

    def _read(self) -> _Index:
        """The index, read again when the file changed under it (another session, ``--fresh``)."""
        if self._index is not None and self._index.stamp == self._stamp():
            return self._index
        index = _Index(nonce="")
        if self.path.exists():
            data = self.path.read_bytes()
            whole = data[: data.rfind(b"\n") + 1]
            if len(whole) < len(data):  # a torn last line (killed mid-write): cut off, its call is sent again
                os.truncate(self.path, len(whole))
            for line in whole.split(b"\n"):
                if line.strip():
                    self._take(index, json.loads(line.decode("utf-8")))
        if not index.nonce:
            index.nonce = uuid.uuid4().hex
            self._append(index, {"event": "journal", "nonce": index.nonce})
        index.stamp = self._stamp()
        self._index = index
        return index

    @staticmethod
    def _take(index: _Index, line: dict[str, Any]) -> None:
        event = line.get("event")
        if event == "journal":
            index.nonce = str(line["nonce"])
        elif event == "sent":
            index.turns.setdefault(line["conversation"], []).append(Entry(line))
        elif event == "reply":
            entries = index.turns.get(line["conversation"], [])
            match = next((e for e in reversed(entries) if e.sent["key"] == line["key"]), None)
            if match is not None:
                match.reply = line

    def _append(self, index: _Index, line: dict[str, Any]) -> None:
        from dialeval.secrets import scrub

        data = (scrub(dumps(line, default=str)) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        index.stamp = self._stamp()

    def entries(self, conversation: str) -> list[Entry]:
        with self._lock:
            return list(self._read().turns.get(conversation, []))

    def find(self, conversation: str, attempt: int, turn: int) -> Entry | None:
        return next((e for e in reversed(self.entries(conversation))
                     if e.sent["attempt"] == attempt and e.sent["turn"] == turn), None)

    def key(self, conversation: str, attempt: int, turn: int) -> str:
        """The turn's idempotency key: the same for the turn sent again, new for a ``--fresh`` run."""
        with self._lock:
            nonce = self._read().nonce
        digest = hashlib.sha256(json.dumps([nonce, conversation, attempt, turn]).encode("utf-8", "surrogatepass")).hexdigest()
        return f"dialeval-{digest[:32]}"

    def sent(self, conversation: str, attempt: int, turn: int, key: str, **state: Any) -> None:
        """Before the call: the turn is out (``state``: what rebuilds the conversation up to it)."""
        line = {"event": "sent", "conversation": conversation, "attempt": attempt, "turn": turn, "key": key, **state}
        with self._lock:
            index = self._read()
            self._append(index, line)
            self._take(index, json.loads(dumps(line, default=str)))

    def replied(self, conversation: str, key: str, record: dict[str, Any]) -> None:
        """The moment the bot answered (or failed): the turn is finished."""
        line = {"event": "reply", "conversation": conversation, "key": key, "record": record}
        with self._lock:
            index = self._read()
            self._append(index, line)
            self._take(index, line)
