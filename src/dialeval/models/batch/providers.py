"""What the runner asks of a provider's batch API, and which provider a model uses.

:class:`BatchProvider` is the one shape the rounds runner codes against; the OpenAI
(files + batches, also at an ``openai-compatible`` server's ``base_url``) and Anthropic
(Message Batches) implementations live in their own modules and are built with the
same endpoint, key and time-outs as the model's live calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

from dialeval.models.batch.lines import BatchLine, BatchStatus, LineResult
from dialeval.models.batch.shared import BatchUnsupported, split_lines

if TYPE_CHECKING:
    from dialeval.models.client import ModelClient

__all__ = ["BATCH_BACKENDS", "BatchProvider", "BatchUnsupported", "batch_provider", "split_lines"]

BATCH_BACKENDS = ("openai", "openai-compatible", "anthropic")


class BatchProvider(Protocol):
    """A provider's batch API. Ids and results survive the process: nothing here keeps
    state a restart would lose. A provider object belongs to the event loop that first
    used it (its SDK client holds that loop's connections)."""

    name: str
    max_lines: int  # requests per batch the provider accepts
    max_bytes: int  # size of one batch's request file (OpenAI) or body (Anthropic)
    discount: float  # the published batch price factor (0.5 = half price); 1.0 when none is known

    async def submit(self, lines: list[BatchLine], metadata: dict[str, str]) -> str:
        """Send ``lines`` as one batch tagged with ``metadata``; its id."""
        ...

    async def status(self, batch_id: str) -> BatchStatus:
        """Where the batch stands now."""
        ...

    async def results(self, batch_id: str) -> list[LineResult]:
        """Every line of a final batch; lines that got no answer come back ``expired``,
        ``cancelled`` or ``failed``, never missing."""
        ...

    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to stop the batch; lines already answered stay answered."""
        ...

    async def find(self, metadata: dict[str, str], custom_ids: Sequence[str] = (), since: float | None = None) -> str | None:
        """A batch submitted earlier with this metadata (OpenAI) or these custom ids, no
        earlier than ``since`` (Anthropic), among the provider's recent ones."""
        ...

    async def close(self) -> None:
        """Close the SDK client's connections (call it in the loop that used them)."""
        ...


def batch_provider(client: ModelClient) -> BatchProvider:
    """The batch API for ``client``'s backend, at the endpoint its live calls use."""
    if client.backend in ("openai", "openai-compatible"):
        from dialeval.models.batch.openai_batches import OpenAIBatches

        return OpenAIBatches.for_client(client)
    if client.backend == "anthropic":
        from dialeval.models.batch.anthropic_batches import AnthropicBatches

        return AnthropicBatches.for_client(client)
    raise BatchUnsupported(
        f"model {client.label}: batch: true needs an openai, openai-compatible or anthropic model"
    )
