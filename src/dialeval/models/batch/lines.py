"""The records a batch is made of: a request line, a batch's state, one line's result.

They are plain frozen dataclasses so the runner can keep them in the run folder as JSON
and read them back after a restart without knowing which provider wrote them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

BatchState = Literal["in_progress", "ended", "failed", "expired", "cancelled"]
LineOutcome = Literal["ok", "failed", "expired", "cancelled"]

FINAL_STATES: frozenset[str] = frozenset({"ended", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: ``body`` is exactly what the live call would POST."""

    custom_id: str
    body: dict[str, Any]


@dataclass(frozen=True)
class BatchStatus:
    """Where a submitted batch stands, in the provider-neutral words the runner shows."""

    batch_id: str
    state: BatchState
    total: int
    succeeded: int
    failed: int

    @property
    def final(self) -> bool:
        """No line will change any more: results can be collected."""
        return self.state in FINAL_STATES


@dataclass(frozen=True)
class LineResult:
    """One line of a final batch: the provider's response body when ``outcome`` is ``ok``."""

    custom_id: str
    outcome: LineOutcome
    response: dict[str, Any] | None
    error: str | None
