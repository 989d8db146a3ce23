"""Where a ``batch: true`` model's calls wait for the runner's next batch round.

Why a hook here: :class:`~dialeval.models.client.ModelClient` sits below the runner, so
it cannot know about rounds; the runner sets :data:`batch_queue` while it drives the
items, and the client hands each batched call to it instead of sending a request.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.models.client_view import ClientView
    from dialeval.models.generation import Generation


@dataclass(frozen=True)
class QueuedCall:
    """One call as :meth:`ModelClient.generate` would have sent it."""

    messages: list[BaseMessage]
    schema: type[BaseModel] | None
    json_schema: dict[str, Any] | None
    placeholder: str | None  # dry run: the answer to give
    cache_key: str | None  # set when the response cache is in use
    cache_path: str | None


class BatchQueue(Protocol):
    """What the runner's rounds offer the client: a call in, its answer out (or the error a live call would raise)."""

    async def ask(self, client: ClientView, call: QueuedCall) -> Generation: ...


batch_queue: contextvars.ContextVar[BatchQueue | None] = contextvars.ContextVar("dialeval_batch_queue", default=None)

