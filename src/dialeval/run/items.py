"""The per-item loop of a run: items through the graph, bounded, stopped by the breaker.

A finished item's row goes to ``on_row`` at once, so it reaches ``results.jsonl``
before the next one finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncContextManager, Awaitable, Callable

from dialeval.benchmarks import Benchmark
from dialeval.config import RunConfig
from dialeval.errors import ConfigError, DataError
from dialeval.models.breaker import CircuitBreaker
from dialeval.models.usage import CallRecord

# the item a task evaluates: the breaker notes whose call failed
current_item: contextvars.ContextVar[str | None] = contextvars.ContextVar("dialeval_item", default=None)

Evaluate = Callable[[Benchmark, Any, Any, Any, dict[str, Any], Any], Awaitable[dict[str, Any]]]


class TrippingBreaker(CircuitBreaker):
    """The run's circuit breaker, which also wakes the runner the moment it opens, so
    calls waiting for a dead server are cancelled instead of each waiting out its
    timeout. It notes which items saw a call fail: those finish (as ``failed``, with
    their partial record), the others are cancelled and left for the next run."""

    def __init__(self, limit: int, on_trip: Callable[[], object]):
        super().__init__(limit)
        self._on_trip = on_trip
        self.errored: set[str] = set()

    def failed(self, client: Any, err: BaseException) -> None:
        was_open = self.message is not None
        item = current_item.get()
        if item is not None:
            self.errored.add(item)
        super().failed(client, err)
        if not was_open and self.message is not None:
            self._on_trip()

    def open_from(self, message: str) -> bool:
        """Open from outside (a ``--no-wait`` batch run stops); ``False`` when already open."""
        with self._lock:
            if self.message is not None:
                return False
            self.message = message
        return True


@dataclass
class ItemJob:
    """What evaluating one item needs."""

    bench: Benchmark
    graph: Any
    context: Any
    options: dict[str, Any]
    evaluate: Evaluate
    concurrency: int
    max_consecutive_errors: int
    # around each item's graph (batch rounds: a round starts once every tracked item waits)
    track: Callable[[str], AsyncContextManager[None]] | None = None
    items_at_once: int | None = None  # items running at once; default: :func:`items_open`


def items_open(concurrency: int) -> int:
    """Items running at once by default: an eighth more than the request limit.

    An item of several sequential calls (a VDAct dialogue) holds its place between calls
    and to its end; with exactly ``concurrency`` places the last wave of a run can leave
    most request slots idle for a whole dialogue (VDAct's 450 dialogues at 64: 7 full
    waves and one of 2, 16.0 s where 72 places take 15.0 s at 200 ms a call). The extra
    items wait for a request slot, so no more requests are ever in flight."""
    return concurrency + concurrency // 8


class Turnstile:
    """Lets one waiter through per pass of the event loop (``await turnstile.turn()``)."""

    def __init__(self) -> None:
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._busy = False  # someone went through in this pass

    async def turn(self) -> None:
        if not self._busy:
            self._busy = True
            asyncio.get_running_loop().call_soon(self._next)
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        await waiter

    def _next(self) -> None:
        """At the next pass: the longest waiting goes through (one whose task was cancelled is skipped)."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                asyncio.get_running_loop().call_soon(self._next)
                return
        self._busy = False


class ItemRunner:
    """Runs items as they are added, at most ``concurrency`` at once, until closed and
    drained or stopped. A stop (the breaker opened, or ``halt``) cancels
    every item that saw no failed call; those are left for the next run.

    Each finished task is noticed by a callback (constant work per item), not by
    re-waiting on every pending task, which costs O(items) per completion."""

    def __init__(
        self, job: ItemJob, on_row: Callable[[dict[str, Any]], None], on_call: Callable[[CallRecord], None],
        on_trip: Callable[[str], None] | None = None, on_request: Callable[[str], None] | None = None,
    ):
        self.job = job
        self._on_request = on_request  # told an item's id as each of its requests leaves
        self._on_row = on_row
        self._on_call = on_call
        self._slots = asyncio.Semaphore(job.items_at_once or items_open(job.concurrency))
        # Items begin one per pass of the event loop, so each item's request leaves while the
        # next item is being prepared. Begun all in one pass, every request waits for the last
        # one to be built, the answers come back together, and reading them all is added to
        # the run after the last answer; staggered, each answer is read while later ones are
        # on their way.
        self._starting = Turnstile()
        self._wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._on_trip = on_trip  # told the breaker opened
        self.breaker = TrippingBreaker(job.max_consecutive_errors, lambda: loop.call_soon_threadsafe(self._tripped))
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._closed = False
        self._bug: BaseException | None = None
        from dialeval.models.client import current_breaker, request_slots

        # set in the caller's context before any item task copies it; :meth:`run` resets them
        self._tokens = (request_slots.set(asyncio.Semaphore(job.concurrency)), current_breaker.set(self.breaker))

    def add(self, item: Any) -> None:
        task = asyncio.ensure_future(self._one(item))
        self.tasks[item.id] = task
        self._pending.add(task)
        task.add_done_callback(self._finished)

    def close(self) -> None:
        """No more items will be added: :meth:`run` returns once the added ones finish."""
        self._closed = True
        self._wake.set()

    def _tripped(self) -> None:
        self._wake.set()
        if self._on_trip is not None and self.breaker.message is not None:
            self._on_trip(self.breaker.message)

    def halt(self, message: str) -> None:
        """Stop as the run's own breaker would (``message`` says why)."""
        if self.breaker.open_from(message):
            self._wake.set()

    @property
    def stopped(self) -> bool:
        return self.breaker.message is not None

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None and self._bug is None:
            self._bug = task.exception()  # a bug in the runner itself stops the run loudly
        if self._bug is not None or (self._closed and not self._pending):
            self._wake.set()

    async def _one(self, item: Any) -> None:
        async with self._slots:
            await self._starting.turn()  # one item starts per pass of the event loop (see __init__)
            if self.breaker.message is not None:  # stopped: leave the item for the next run
                return
            current_item.set(item.id)  # this task's own context: the breaker sees whose call failed
            if self._on_request is not None:
                from dialeval.models.client import request_sent

                told, name = self._on_request, item.id
                request_sent.set(lambda: told(name))
            job = self.job
            async with job.track(item.id) if job.track else contextlib.nullcontext():
                row = await job.evaluate(job.bench, job.graph, item, job.context, job.options, self._on_call)
        self._on_row(row)

    async def run(self) -> None:
        """Wait until every added item finished (after :meth:`close`) or the run stops;
        cancelled (Ctrl-C), every item still running is cancelled. Awaited by the task
        that built the runner (the run's request slots and breaker live in its context)."""
        from dialeval.models.client import current_breaker, request_slots
        from dialeval.run.collector import fewer_collections

        try:
            with fewer_collections():  # the collector runs less often while requests are in flight
                await self._drain()
        finally:
            request_slots.reset(self._tokens[0])
            current_breaker.reset(self._tokens[1])

    async def _drain(self) -> None:
        """:meth:`run`'s wait, and the cancellation of what is left when it ends."""
        try:
            while self._bug is None and not self.stopped and (self._pending or not self._closed):
                self._wake.clear()
                await self._wake.wait()
            if self._bug is not None:
                raise self._bug
            if self.stopped:
                for item, task in self.tasks.items():
                    if item not in self.breaker.errored:
                        task.cancel()
            for outcome in await asyncio.gather(*self._pending, return_exceptions=True):
                if isinstance(outcome, Exception):  # a cancelled item is a BaseException, left for the next run
                    raise outcome
        finally:
            for task in self._pending:
                task.cancel()
            await asyncio.gather(*self._pending, return_exceptions=True)


def load_items(bench: Benchmark, data: str, config: RunConfig) -> list[Any]:
    """Every item of the data (``limit`` is applied by the caller: it never changes the run id)."""
    try:
        items = bench.load(Path(data), config.options)
    except UnicodeDecodeError as err:
        raise DataError(data, f"not UTF-8 text (byte offset {err.start}: {err.reason})") from None
    except ConfigError as err:  # a mistyped option names the config file it sits in
        if config.source != "config" and str(err).startswith(f"{bench.name} option "):
            raise ConfigError(f"{config.source}: {err}") from None
        raise
    if not items:
        raise DataError(data, "holds no items to evaluate")
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{data}: item ids are not unique")
    return list(items)


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders digit runs by value (``d2`` before ``d10``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def limit_items(bench: Benchmark, items: list[Any], limit: int | None) -> list[Any]:
    """The items of the first ``limit`` sample keys in natural sort order, in file order.

    Why: the same ``--limit`` must judge the same items in every data file of a benchmark
    (two systems' VDAct files order the same dialogues differently), so runs compare."""
    if not limit:
        return items
    key: Callable[[Any], str] = bench.sample_key or (lambda item: str(item.id))
    kept = set(sorted({key(item) for item in items}, key=natural_key)[:limit])
    return [item for item in items if key(item) in kept]


def shard_items(bench: Benchmark, items: list[Any], part: tuple[int, int] | None) -> list[Any]:
    """The ``i``-th of ``n`` parts (``part = (i, n)``, 1-based): the sample keys in natural
    order dealt out in turn, so the parts differ by at most one key, a key's items (a VDAct
    dialogue) stay together, and every machine given the same data draws the same part."""
    if part is None:
        return items
    index, of = part
    key: Callable[[Any], str] = bench.sample_key or (lambda item: str(item.id))
    mine = set(sorted({key(item) for item in items}, key=natural_key)[index - 1::of])
    return [item for item in items if key(item) in mine]
