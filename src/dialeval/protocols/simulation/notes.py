"""The simulated user's notes: kept in the conversation's state, in Chroma only once they outgrow the prompt.

Why: embedding and storing every note of every turn cost most of a simulation's CPU, for
conversations whose notes all fit the prompt anyway. Each simulated turn keeps the notes it
returned; the note is their merge (latest value wins). While it has at most
``note_top_k`` entries every entry is shown; beyond that the note is written to the run's
Chroma store (embedded once, then only what changed) and the entries closest to the
bot's last turn are shown, as NOTE-TAKING retrieves them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dialeval.config import EvalContext
from dialeval.memory.notes import KEY_SEPARATOR, NoteChange, NoteEntry, _canonical, flatten, unflatten
from dialeval.protocols.simulation.common import SimulationOptions

Turn = dict[str, Any]


def merged(turns: list[Turn]) -> dict[tuple[str, ...], NoteEntry]:
    """The note so far: every simulated turn's ``notes`` merged in order, each entry with the turn that set it."""
    out: dict[tuple[str, ...], NoteEntry] = {}
    for turn in turns:
        if turn["role"] == "user":
            for path, value in flatten(turn.get("notes") or {}).items():
                old = out.get(path)
                if old is None or _canonical(old.value) != _canonical(value):
                    out[path] = NoteEntry(path, value, turn["number"])
    return out


def change_of(turns: list[Turn], new: dict[str, Any], number: int) -> dict[str, Any] | None:
    """What ``new`` (turn ``number``'s notes) adds to or changes in the note, for the record."""
    if not new:
        return None
    before = merged(turns)
    change = NoteChange(turn=number)
    for path, value in flatten(new).items():
        if path not in before:
            change.added.append(KEY_SEPARATOR.join(path))
        elif _canonical(before[path].value) != _canonical(value):
            change.changed.append(KEY_SEPARATOR.join(path))
    return change.as_dict()


def open_store(options: SimulationOptions, context: EvalContext) -> Any:
    from dialeval.memory.client import open_note_store

    return open_note_store(options.memory, context.run_dir)


async def notes_to_show(options: SimulationOptions, context: EvalContext, key: str, turns: list[Turn], query: str) -> list[NoteEntry]:
    """Every entry of the note while they fit ``note_top_k``; else the closest to ``query`` from Chroma."""
    entries = merged(turns)
    if len(entries) <= options.note_top_k:
        return [entries[path] for path in sorted(entries)]
    store = await asyncio.to_thread(open_store, options, context)
    note = unflatten(list(entries.values()))
    last = max(e.turn for e in entries.values())
    await asyncio.to_thread(store.update, key, note, last)  # the note as it is: embeds what changed since the last write
    return list(await asyncio.to_thread(store.search, key, query or "goal", options.note_top_k))
