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
from typing import Callable, Iterable, Iterator

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
def call_bar(enabled: bool, desc: str = "model calls", total: int | None = None) -> Iterator[None]:
    """A second progress bar, under the runner's item bar, counting finished model calls
    (it moves with every judged turn while the item bar waits for whole items); ``total``
    when the protocol knows how many calls its items take, else a bare count."""
    if not enabled:
        yield
        return
    from tqdm.auto import tqdm

    bar = tqdm(desc=desc, unit="call", position=1, leave=False, total=total)
    try:
        with showing(bar.update):
            yield
    finally:
        bar.close()


def known_total(counts: Iterable[int | None]) -> int | None:
    """The sum of per-item call counts, or None as soon as one item's count is unknown."""
    total = 0
    for count in counts:
        if count is None:
            return None
        total += count
    return total


def limit_text(current: int, maximum: int, reason: str | None) -> str:
    """A request limit for the bar: ``64``, or ``64→32 (HTTP 429)`` once it fell and why."""
    if current < maximum and reason:
        return f"{maximum}→{current} ({reason})"
    return str(current)
