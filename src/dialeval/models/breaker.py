"""The run's circuit breaker: a dead server or a wrong key stops the run, not every item one by one."""

from __future__ import annotations

import contextvars
import threading
from typing import TYPE_CHECKING

from dialeval.models.backends.base import STOPPING_KINDS, error_text

if TYPE_CHECKING:
    from dialeval.models.client_view import ClientView


class RunStopped(RuntimeError):
    """The run's circuit breaker opened: calls are no longer sent."""


class CircuitBreaker:
    """Stops a run after ``limit`` consecutive connection or authentication errors.

    A dead server or a wrong key fails every call the same way; going on would only
    spend time (and, with retries, the server's patience) to fail every item. Which
    errors those are is the backend's call (:meth:`Backend.classify`).
    """

    def __init__(self, limit: int):
        self.limit = limit
        self.streak = 0
        self.message: str | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        if self.message is not None:
            raise RunStopped(self.message)

    def succeeded(self) -> None:
        with self._lock:
            self.streak = 0

    def failed(self, client: ClientView, err: BaseException) -> None:
        kind = client.impl.classify(err)
        with self._lock:
            if kind not in STOPPING_KINDS:
                self.streak = 0
                return
            self.streak += 1
            if self.streak >= self.limit and self.message is None:
                from dialeval.secrets import scrub

                self.message = scrub(
                    f"stopped after {self.streak} consecutive {kind} errors: {client.where()}; "
                    f"last error {error_text(err)}"
                )


current_breaker: contextvars.ContextVar[CircuitBreaker | None] = contextvars.ContextVar(
    "dialeval_breaker", default=None
)
