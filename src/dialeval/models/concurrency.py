"""How many requests one model gets in flight: found by itself, within bounds you set.

An API's rate limit is not known in advance, and a fixed limit is either too timid
(slow) or too bold (a storm of 429s, each retried after a back-off). :class:`AdaptiveLimit`
starts where the provider has not yet said no (the configured maximum, or what the last
run against the endpoint learned: :meth:`AdaptiveLimit.start_from`), so the first burst
goes out at full width; it halves the limit whenever the server says "too many" (HTTP
429, or a ``Retry-After``) and raises it by one after a full window of successes
(additive increase, multiplicative decrease). A burst of 429s from requests that were all
sent under the old limit halves it once, not once per response.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from types import TracebackType

# the limit's epoch when the current request was admitted: a 429 to a request sent
# before the last decrease says nothing new about the limit
_admitted_epoch: contextvars.ContextVar[int | None] = contextvars.ContextVar("dialeval_admitted_epoch", default=None)


class AdaptiveLimit:
    """A resizable semaphore whose size follows the server's answers (AIMD)."""

    def __init__(self, initial: int, *, minimum: int = 1, maximum: int | None = None, adaptive: bool = True):
        if initial < 1 or minimum < 1:
            raise ValueError("concurrency limits are at least 1")
        self.maximum = max(maximum or initial, initial)
        self.minimum = min(minimum, initial)
        self.adaptive = adaptive
        self._limit = float(initial)
        self._in_flight = 0
        self._successes = 0
        self._epoch = 0
        self._cooldown_until = 0.0
        self._condition: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.throttled_count = 0
        self.reason: str | None = None  # why the limit last fell ("HTTP 429, Retry-After 5s"): the progress bar shows it
        # told each new limit once the server has said no: what the next run should start at
        self.on_change: Callable[[int], None] | None = None

    def start_from(self, learned: int) -> bool:
        """Start at what an earlier run learned (within bounds) unless this limit has
        already learned something itself; below the maximum it grows one per window, as
        after a 429. Returns whether the learned value was taken."""
        if not self.adaptive or self._epoch or self._in_flight:
            return False
        self._limit = float(min(self.maximum, max(self.minimum, learned)))
        if self._limit < self.maximum:
            self._epoch = 1  # the provider said no above this: no doubling back into it
            self.reason = "learned by an earlier run"
        return True

    @property
    def current(self) -> int:
        """Requests allowed in flight now."""
        return int(self._limit)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _cond(self) -> asyncio.Condition:
        # one per event loop: the limit outlives a run, and each evaluate() has its own loop
        loop = asyncio.get_running_loop()
        if self._condition is None or self._loop is not loop:
            self._condition = asyncio.Condition()
            self._loop = loop
        return self._condition

    async def __aenter__(self) -> AdaptiveLimit:
        cond = self._cond()
        async with cond:
            await cond.wait_for(lambda: self._in_flight < self.current and time.monotonic() >= self._cooldown_until)
            self._in_flight += 1
        _admitted_epoch.set(self._epoch)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _admitted_epoch.set(None)
        cond = self._cond()
        async with cond:
            self._in_flight -= 1
            cond.notify_all()

    async def readmit(self) -> None:
        """A refused request gives up its place and waits for one under the new limit
        before its retry (the SDK retries inside one admission): otherwise a first burst
        refused at full width would keep that width through all its retries."""
        if not self.adaptive or _admitted_epoch.get() is None:
            return
        cond = self._cond()
        async with cond:
            self._in_flight -= 1
            cond.notify_all()
            try:
                await cond.wait_for(lambda: self._in_flight < self.current and time.monotonic() >= self._cooldown_until)
            finally:
                self._in_flight += 1  # on cancellation too: __aexit__ gives it back
        _admitted_epoch.set(self._epoch)

    def succeeded(self) -> None:
        """One answer came back: after ``current`` of them in a row, allow one more.

        A limit made below its maximum grows by one per answer until the server first
        says "too many" (it doubles per window, TCP's slow start); a learned start
        (:meth:`start_from`) counts as said, and grows by one per window."""
        if not self.adaptive:
            return
        if self._epoch == 0 and self._limit < self.maximum:
            self._limit = min(self.maximum, self._limit + 1)
            self._wake()
            return
        self._successes += 1
        if self._successes >= self.current and self._limit < self.maximum:
            self._limit = min(self.maximum, self._limit + 1)
            self._successes = 0
            self._wake()
            self._changed()

    def throttled(self, retry_after: float | None = None, reason: str = "HTTP 429") -> None:
        """The server said "too many" (``reason``, e.g. ``HTTP 529``): halve the limit, once per window of requests."""
        self.throttled_count += 1
        if not self.adaptive:
            return
        admitted = _admitted_epoch.get()
        if admitted is not None and admitted < self._epoch:
            return  # sent under an older, higher limit: already accounted for
        self._epoch += 1
        self._successes = 0
        self._limit = max(self.minimum, self._limit / 2)
        self.reason = reason + (f", Retry-After {retry_after:g}s" if retry_after and retry_after > 0 else "")
        self._changed()
        if retry_after and retry_after > 0:
            self._cooldown_until = max(self._cooldown_until, time.monotonic() + min(retry_after, 60.0))
            try:
                asyncio.get_running_loop().call_later(min(retry_after, 60.0), self._wake)
            except RuntimeError:  # no loop: the next release wakes the waiters
                pass

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.current)

    def _wake(self) -> None:
        cond = self._condition
        if cond is None:
            return

        async def notify() -> None:
            async with cond:
                cond.notify_all()

        try:
            asyncio.get_running_loop().create_task(notify())
        except RuntimeError:  # no loop running (called from a worker thread's hook)
            pass


def retry_after_seconds(headers: object) -> float | None:
    """``Retry-After`` / ``retry-after-ms`` of a response, in seconds, when present."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    millis = get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = get("retry-after")
    if value:
        try:
            return float(value)
        except ValueError:
            return None  # an HTTP date: treat as a plain 429
    return None
