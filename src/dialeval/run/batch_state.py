"""The batches of a run, kept in ``<run>/batches/`` so no request is ever submitted twice.

Two append-only JSONL files, one line per event, each written with a single write:
``batches.jsonl`` says which lines (custom id -> call key) a chunk holds *before* it is
submitted, then its batch id, then that it was collected; ``answers.jsonl`` keeps every
line's outcome and response body as it is collected. A ``kill -9`` at any instant leaves
at most one torn last line, which the reader ignores, so a re-run always knows which
calls already sit in a submitted batch (poll it), which were answered (read the answer
from disk) and which chunk may have been submitted without its id written (ask the
provider with :meth:`BatchProvider.find` before sending it again).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BATCH_DIR = "batches"
EVENTS = "batches.jsonl"
ANSWERS = "answers.jsonl"
ROUNDS = "rounds.json"


@dataclass
class Chunk:
    """One batch as the run folder knows it: its lines, and its provider id once submitted."""

    chunk_id: str
    model: str
    round: int
    lines: dict[str, str]  # custom_id -> call key
    batch_id: str | None = None
    collected: bool = False
    abandoned: bool = False  # never reached the provider (``find`` says so): its lines may go again
    at: float | None = None  # when it was written as submitting (Unix time; older run folders: unknown)

    @property
    def open(self) -> bool:
        """Submitted and not collected yet: its lines must be polled, never sent again."""
        return self.batch_id is not None and not self.collected

    @property
    def unconfirmed(self) -> bool:
        """Written as ``submitting`` but no batch id followed (the process died in between)."""
        return self.batch_id is None and not self.abandoned


@dataclass(frozen=True)
class Answer:
    """One collected line: the response body of an ``ok`` line, else why it has none."""

    key: str
    model: str
    outcome: str
    response: dict[str, Any] | None
    error: str | None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every complete JSON line; a torn last line (a write cut by a crash) is skipped."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue  # only the last line can be torn: every write is one whole line
        if isinstance(value, dict):
            out.append(value)
    return out


def _append(path: Path, event: dict[str, Any]) -> None:
    """One line, one ``write`` on an O_APPEND descriptor, fsynced: a crash keeps it or tears only it."""
    blob = (json.dumps(event, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8", "surrogatepass")
    if path.is_file() and path.stat().st_size:
        with path.open("rb") as fh:  # a torn tail gets its own line ended, so the new line stays whole
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                blob = b"\n" + blob
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, blob)
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class BatchState:
    """The run folder's batches, loaded once and kept in step with every write."""

    folder: Path
    chunks: dict[str, Chunk] = field(default_factory=dict)
    answers: dict[str, Answer] = field(default_factory=dict)  # call key -> its latest ``ok`` answer

    @classmethod
    def load(cls, run_dir: str | Path) -> BatchState:
        state = cls(Path(run_dir) / BATCH_DIR)
        for event in _read_jsonl(state.folder / EVENTS):
            state._apply(event)
        for line in _read_jsonl(state.folder / ANSWERS):
            if line.get("outcome") == "ok" and isinstance(line.get("response"), dict):
                state.answers[str(line["key"])] = Answer(
                    str(line["key"]), str(line.get("model")), "ok", line["response"], None
                )
        return state

    def _apply(self, event: dict[str, Any]) -> None:
        kind, chunk_id = event.get("event"), str(event.get("chunk"))
        if kind == "submitting":
            self.chunks[chunk_id] = Chunk(chunk_id, str(event["model"]), int(event["round"]), dict(event["lines"]), at=event.get("at"))
            return
        chunk = self.chunks.get(chunk_id)
        if chunk is None:
            return
        if kind == "submitted":
            chunk.batch_id = str(event["batch_id"])
        elif kind == "collected":
            chunk.collected = True
        elif kind == "abandoned":
            chunk.abandoned = True

    def _event(self, event: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        _append(self.folder / EVENTS, event)
        self._apply(event)

    def next_chunk_id(self) -> str:
        return f"c{len(self.chunks) + 1}"

    def submitting(self, chunk_id: str, model: str, round_number: int, lines: dict[str, str]) -> Chunk:
        """Written before the provider hears of the chunk."""
        self._event({"event": "submitting", "chunk": chunk_id, "model": model, "round": round_number, "lines": lines, "at": time.time()})
        return self.chunks[chunk_id]

    def submitted(self, chunk: Chunk, batch_id: str) -> None:
        self._event({"event": "submitted", "chunk": chunk.chunk_id, "batch_id": batch_id})

    def abandoned(self, chunk: Chunk) -> None:
        self._event({"event": "abandoned", "chunk": chunk.chunk_id})

    def collected(self, chunk: Chunk, state: str, answers: list[Answer]) -> None:
        """Every line's outcome first, then the chunk marked collected (a crash between re-collects it)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for answer in answers:
            _append(self.folder / ANSWERS, {"chunk": chunk.chunk_id, **answer.__dict__})
            if answer.outcome == "ok":
                self.answers[answer.key] = answer
        self._event({"event": "collected", "chunk": chunk.chunk_id, "state": state})

    def open_chunk_of(self, model: str, key: str) -> Chunk | None:
        """The submitted, uncollected chunk of ``model`` that holds ``key``, if any."""
        for chunk in self.chunks.values():
            if chunk.open and chunk.model == model and key in chunk.lines.values():
                return chunk
        return None

    def unconfirmed(self, model: str) -> list[Chunk]:
        return [c for c in self.chunks.values() if c.model == model and c.unconfirmed]

    def save_rounds(self, rounds: dict[str, Any]) -> None:
        """The rounds summary the report reads (replaced whole: temp file + ``os.replace``)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{ROUNDS}.tmp"
        tmp.write_text(json.dumps(rounds, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.folder / ROUNDS)


def read_rounds(run_dir: str | Path) -> dict[str, Any] | None:
    """The batch summary of a run (models, rounds, rate source), or ``None`` for a run without batches."""
    path = Path(run_dir) / BATCH_DIR / ROUNDS
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
