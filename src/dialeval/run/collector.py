"""Fewer garbage collections while a run's items are in flight (:func:`fewer_collections`).

Why: each request allocates a few hundred objects that live until its answer comes back
(the SDK's request and response, LangChain's and LangGraph's runs), so with 64 in flight
CPython's default thresholds (700, 10, 10) start a young collection every few requests and a
full one, over every object of the process (260,000 after the imports), every few hundred:
0.45 ms of CPU per request against a fast server, a tenth of all a request costs
(docs/performance.md). Raised thresholds collect the same cycles, less often; memory
stays bounded (a young collection still runs every 10,000 net allocations)."""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

RUN_THRESHOLDS = (10_000, 10, 10)

_lock = threading.Lock()
_active = 0  # runs in this process inside fewer_collections (notebooks may run two in threads)
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """The collector's thresholds raised to :data:`RUN_THRESHOLDS` (never lowered: a process
    that set higher ones, or switched collection off with a threshold of 0, keeps them) for
    the block, then what they were; the first run to enter saves them and the last to leave
    restores them."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            if _saved[0] != 0:  # 0: the process switched automatic collection off; it stays off
                gc.set_threshold(*(max(mine, theirs) for mine, theirs in zip(RUN_THRESHOLDS, _saved)))
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                gc.set_threshold(*_saved)
