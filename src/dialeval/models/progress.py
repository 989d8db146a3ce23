"""Progress inside an item: agents tick once per finished model call.

Why: one MMRC conversation or KGDS sample takes dozens of calls; a bar that moves only
when a whole item finishes looks frozen on a slow local model. :func:`tick` reports one
finished call (a turn noted, a question answered, a fact batch verified) to whatever
display the caller of :func:`showing` installed; with none installed it does nothing.
A context variable carries the display, so concurrent items and LangGraph's node tasks
(which copy the context) all reach it without any argument passing.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Iterator

_display: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "dialeval_progress", default=None
)


def tick(steps: int = 1) -> None:
    """Report ``steps`` finished model calls to the installed display, if any."""
    display = _display.get()
    if display is not None:
        display(steps)


@contextlib.contextmanager
def showing(display: Callable[[int], None]) -> Iterator[None]:
    """Send the ticks of the code run inside (and of the tasks it starts) to ``display``."""
    token = _display.set(display)
    try:
        yield
    finally:
        _display.reset(token)


@contextlib.contextmanager
def call_bar(enabled: bool, desc: str = "model calls") -> Iterator[None]:
    """A second progress bar, under the runner's item bar, counting finished model calls."""
    if not enabled:
        yield
        return
    from tqdm.auto import tqdm

    bar = tqdm(desc=desc, unit="call", position=1, leave=False)
    try:
        with showing(bar.update):
            yield
    finally:
        bar.close()
