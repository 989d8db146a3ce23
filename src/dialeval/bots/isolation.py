"""Where Python bots run: a loop of their own, in threads the process never waits for.

Why: a sync callable or a sync LangGraph node blocked past its time-out cannot be
stopped from outside; run through ``asyncio.to_thread`` it sits in an executor thread
that ``asyncio.run`` and the interpreter join at exit, so the run never ends. Here a
Python bot runs on one event loop in a daemon thread, and its sync code (the callable
itself, LangGraph's sync nodes through the loop's default executor) in a daemon thread
per call: at the time-out the call is abandoned, and the process exits whatever the bot
does. A bot that blocks its own loop (an async bot calling ``time.sleep``) stalls only
that loop, which is replaced once a call times out on it. ``SystemExit`` and
``KeyboardInterrupt`` raised by a bot come back as its failure; what it prints to
stdout is kept with its turn, off the run's stdout (which carries the report).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import io
import sys
import threading
from typing import Any, Awaitable, Callable, TextIO

PRINTED_LIMIT = 4000  # characters of a bot's stdout kept with its turn

_printed: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("dialeval_bot_printed", default=None)


class Raised(Exception):
    """A bot raised something that is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``)."""

    def __init__(self, error: BaseException):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


class DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """The bot loop's default executor: each job in a daemon thread of its own, never joined at exit."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as err:  # a bot's SystemExit ends this thread, not the run
                future.set_exception(err)

        threading.Thread(target=work, name="dialeval-bot-sync", daemon=True).start()
        return future


class _Stdout(io.TextIOBase):
    """sys.stdout while bots run: a bot call's writes go to its turn, every other write passes through."""

    def __init__(self, real: TextIO):
        self.real = real

    def write(self, text: str) -> int:
        kept = _printed.get()
        if kept is None:
            return self.real.write(text)
        if sum(map(len, kept)) < PRINTED_LIMIT:
            kept.append(text)
        return len(text)

    def flush(self) -> None:
        self.real.flush()

    def fileno(self) -> int:
        return self.real.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.real, "encoding", "utf-8")

    def isatty(self) -> bool:
        return self.real.isatty()


def _capture_stdout() -> None:
    if not isinstance(sys.stdout, _Stdout):
        sys.stdout = _Stdout(sys.stdout)


class BotLoop:
    """An event loop in a daemon thread, for Python bots."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(DaemonExecutor(max_workers=1))
        threading.Thread(target=self.loop.run_forever, name="dialeval-bot-loop", daemon=True).start()

    async def healthy(self, seconds: float = 1.0) -> bool:
        """Whether the loop still runs (a bot may have blocked it)."""
        probe = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), self.loop)
        try:
            await asyncio.wait_for(asyncio.wrap_future(probe), seconds)
            return True
        except asyncio.TimeoutError:
            return False


_loop: list[BotLoop] = []
_loop_lock = threading.Lock()


def bot_loop() -> BotLoop:
    with _loop_lock:
        if not _loop:
            _loop.append(BotLoop())
        return _loop[0]


async def _guarded(make: Callable[[], Awaitable[Any]]) -> tuple[Any, BaseException | None, str]:
    """Run on the bot loop: the result, or what was raised (any kind), and what was printed."""
    kept: list[str] = []
    _printed.set(kept)
    try:
        return await make(), None, "".join(kept)
    except asyncio.CancelledError:
        raise
    except BaseException as err:  # SystemExit, KeyboardInterrupt: the bot's failure, not the run's
        return None, err, "".join(kept)


async def run_isolated(make: Callable[[], Awaitable[Any]], timeout: float) -> tuple[Any, str]:
    """``make()`` on the bot loop, bounded by ``timeout`` (``asyncio.TimeoutError`` then):
    its result and what it printed. Raises what the bot raised, ``Raised`` for a non-Exception."""
    _capture_stdout()
    where = bot_loop()
    future = asyncio.run_coroutine_threadsafe(_guarded(make), where.loop)
    try:
        value, error, printed = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    except asyncio.TimeoutError:
        if not await where.healthy():  # a bot blocked its loop: later calls get a fresh one
            with _loop_lock:
                if _loop and _loop[0] is where:
                    _loop.clear()
        raise
    if error is not None:
        raise error if isinstance(error, Exception) else Raised(error)
    return value, printed


def call_sync(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Awaitable[Any]:
    """A sync function in a daemon thread of its own (on the bot loop, with its context)."""
    context = contextvars.copy_context()
    return asyncio.get_running_loop().run_in_executor(None, lambda: context.run(function, *args, **kwargs))
