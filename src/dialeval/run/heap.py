"""The cycle collector during a run: what was alive before the run is not scanned again.

Why: a process that has imported LangChain, pydantic and matplotlib holds some 200,000
objects, and each full collection walks all of them (80-90 ms on a 2-core machine) to
find no garbage among the imports. A run makes and drops many small objects, which
trigger collections; with the older objects frozen (:func:`gc.freeze`) those collections
look only at the run's own objects, which are the ones that can be garbage.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Freeze the objects alive now for the duration of the block, then thaw them.

    Left alone when something else has frozen objects (a server that froze before
    forking) or turned the collector off: thawing would undo their choice."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
