"""Identical requests within one run are sent once and their answer shared (single flight).

Why: KGDS's EBS rounds 0 and 1 sent 12 identical opinion-verifier prompts; two requests
cost twice, and with a sampling judge the two answers differ while only one is cached,
so a later run replays a mixture. Identical means the response cache's key (backend,
model, endpoint, parameters, messages, and ``sample_index`` where a caller asks for
several samples on purpose). The runner opens one :class:`Flights` per run; a call made
outside a run (no flights open) is sent as it is.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from collections import OrderedDict
from typing import Awaitable, Callable

from dialeval.models.generation import Generation

KEEP = 4096  # answers kept for later identical requests of the run (the response cache keeps the rest)


class Flights:
    """The requests of one run by key: in flight or answered (the latest :data:`KEEP`)."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._answers: OrderedDict[str, asyncio.Future[Generation]] = OrderedDict()

    async def share(self, key: str, send: Callable[[], Awaitable[Generation]]) -> Generation:
        """``send()``'s answer for the first request of ``key``; the same answer, marked
        ``deduplicated`` and free, for every identical one. A request that fails is
        forgotten (the next identical one is sent again) and fails those waiting on it."""
        known = self._answers.get(key)
        if known is not None:
            self._answers.move_to_end(key)
            first = await asyncio.shield(known)
            return dataclasses.replace(first, cached=False, deduplicated=True, cost=0.0, uncached_cost=0.0,
                                       cached_input_tokens=0, cache_write_tokens=0, cache_key=None, cache_path=None)
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # a failure nobody waited for is no warning
        self._answers[key] = future
        while len(self._answers) > self.keep:
            oldest, answered = next(iter(self._answers.items()))
            if not answered.done():
                break
            del self._answers[oldest]
        try:
            generation = await send()
        except BaseException as err:
            self._answers.pop(key, None)
            if isinstance(err, Exception):
                future.set_exception(err)
            else:  # cancelled: those waiting are cancelled with it
                future.cancel()
            raise
        future.set_result(generation)
        return generation


current_flights: contextvars.ContextVar[Flights | None] = contextvars.ContextVar("dialeval_flights", default=None)


async def shared(key: str, send: Callable[[], Awaitable[Generation]], *, alone: bool = False) -> Generation:
    """``send()``'s answer, shared with identical requests when a run's flights are open.

    ``alone``: a call that shares by other means (a batch round answers all identical calls
    of the round at once, and starts only when every item waits on it: an item waiting on
    another item's flight would never count as waiting, and the run would hang)."""
    flights = None if alone else current_flights.get()
    return await (flights.share(key, send) if flights is not None else send())
