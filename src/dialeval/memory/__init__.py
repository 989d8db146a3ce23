"""Note memory for agents (NOTE-TAKING), stored in Chroma.

``open_note_store(MemorySettings(...), run_dir)`` gives a :class:`NoteStore`; see
``notes.py`` for how a JSON note maps to Chroma documents.
"""

from dialeval.memory.client import MemorySettings, open_note_store, store_location
from dialeval.memory.notes import NoteChange, NoteEntry, NoteStore, flatten, unflatten

__all__ = [
    "MemorySettings",
    "NoteChange",
    "NoteEntry",
    "NoteStore",
    "flatten",
    "open_note_store",
    "store_location",
    "unflatten",
]
