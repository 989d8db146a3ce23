"""NOTE-TAKING memory: a conversation's JSON note kept as Chroma documents.

A note is a JSON object (user preferences, events, facts). Each leaf entry of it (a path
of keys such as ``preferences/food`` and its value) is one Chroma document whose id is
derived from (conversation id, key path). Writing the note again after a later turn
therefore overwrites a changed fact in place instead of piling up versions; metadata
keeps the conversation id, the key and the turn of the entry's last change.

Reads give either the whole note of a conversation as one JSON object (the structured
prompt) or the entries semantically closest to a question (for long conversations).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any

KEY_SEPARATOR = "/"


@dataclass(frozen=True)
class NoteEntry:
    """One leaf of a note: where it sits, its value, and the turn it last changed."""

    path: tuple[str, ...]
    value: Any
    turn: int
    distance: float | None = None

    @property
    def key(self) -> str:
        return KEY_SEPARATOR.join(self.path)


@dataclass
class NoteChange:
    """What one write did to the stored note, for the run record."""

    turn: int
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "added": self.added, "changed": self.changed, "removed": self.removed}


def flatten(note: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Leaf entries of a nested note; lists and scalars are leaves, empty objects vanish."""
    out: dict[tuple[str, ...], Any] = {}
    for key, value in note.items():
        path = prefix + (str(key),)
        if isinstance(value, dict):
            out.update(flatten(value, path))
        else:
            out[path] = value
    return out


def unflatten(entries: list[NoteEntry]) -> dict[str, Any]:
    """The nested JSON object made of ``entries`` (sorted by key, so it reads stably)."""
    note: dict[str, Any] = {}
    for entry in sorted(entries, key=lambda e: e.path):
        node = note
        for part in entry.path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[entry.path[-1]] = entry.value
    return note


def entry_id(conversation_id: str, path: tuple[str, ...]) -> str:
    """Stable document id for one key of one conversation's note."""
    blob = json.dumps([conversation_id, list(path)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _document(path: tuple[str, ...], value: Any) -> str:
    """The text that is embedded: readable key words and the value."""
    words = " ".join(part.replace("_", " ") for part in path)
    if isinstance(value, list):
        shown = "; ".join(v if isinstance(v, str) else _canonical(v) for v in value)
    elif isinstance(value, str):
        shown = value
    else:
        shown = _canonical(value)
    return f"{words}: {shown}"


class NoteStore:
    """Notes of many conversations in one Chroma collection, never mixed across them."""

    def __init__(self, collection: Any):
        self.collection = collection
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ writes

    def update(self, conversation_id: str, note: dict[str, Any], turn: int) -> NoteChange:
        """Make the stored note equal ``note``: changed entries get ``turn``, unchanged keep theirs.

        The note is a model's answer and is stored under the run folder, so API keys are scrubbed first."""
        from dialeval.secrets import scrub_data

        note = scrub_data(note)
        with self._lock:
            current = {e.path: e for e in self.entries(conversation_id)}
            new = flatten(note)
            change = NoteChange(turn=turn)
            upsert: dict[tuple[str, ...], Any] = {}
            for path, value in new.items():
                old = current.get(path)
                if old is None:
                    change.added.append(KEY_SEPARATOR.join(path))
                    upsert[path] = value
                elif _canonical(old.value) != _canonical(value):
                    change.changed.append(KEY_SEPARATOR.join(path))
                    upsert[path] = value
            gone = [path for path in current if path not in new]
            change.removed = [KEY_SEPARATOR.join(p) for p in gone]
            if upsert:
                paths = list(upsert)
                self.collection.upsert(
                    ids=[entry_id(conversation_id, p) for p in paths],
                    documents=[_document(p, upsert[p]) for p in paths],
                    metadatas=[
                        {
                            "conversation_id": conversation_id,
                            "key": KEY_SEPARATOR.join(p),
                            "path": json.dumps(list(p), ensure_ascii=False),
                            "value": _canonical(upsert[p]),
                            "turn": turn,
                        }
                        for p in paths
                    ],
                )
            if gone:
                self.collection.delete(ids=[entry_id(conversation_id, p) for p in gone])
            return change

    def clear(self, conversation_id: str) -> None:
        """Forget one conversation's note (a re-run starts from an empty note)."""
        with self._lock:
            self.collection.delete(where={"conversation_id": conversation_id})

    # ------------------------------------------------------------------- reads

    def entries(self, conversation_id: str) -> list[NoteEntry]:
        got = self.collection.get(where={"conversation_id": conversation_id}, include=["metadatas"])
        return [_entry(meta) for meta in got["metadatas"] or []]

    def note(self, conversation_id: str) -> dict[str, Any]:
        """The whole note of a conversation as one JSON object."""
        return unflatten(self.entries(conversation_id))

    def count(self, conversation_id: str | None = None) -> int:
        if conversation_id is None:
            return self.collection.count()
        return len(self.collection.get(where={"conversation_id": conversation_id}, include=[])["ids"])

    def search(self, conversation_id: str, query: str, k: int = 8) -> list[NoteEntry]:
        """The ``k`` entries of this conversation's note closest in meaning to ``query``."""
        if k <= 0:
            return []
        got = self.collection.query(
            query_texts=[query],
            n_results=k,
            where={"conversation_id": conversation_id},
            include=["metadatas", "distances"],
        )
        metas = (got.get("metadatas") or [[]])[0]
        dists = (got.get("distances") or [[]])[0]
        return [_entry(meta, dist) for meta, dist in zip(metas, dists)]


def _entry(meta: dict[str, Any], distance: float | None = None) -> NoteEntry:
    return NoteEntry(
        path=tuple(json.loads(meta["path"])),
        value=json.loads(meta["value"]),
        turn=int(meta["turn"]),
        distance=None if distance is None else float(distance),
    )
