"""Anthropic's Message Batches API: one request body of ``{custom_id, params}`` pairs.

Anthropic batches carry no metadata, so :meth:`AnthropicBatches.find` cannot recognise
a batch submitted earlier: the runner must keep the batch id in the run folder as soon as
``submit`` returns (a crash inside ``submit`` itself may leave one unrecorded batch).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from dialeval.models.batch.lines import BatchLine, BatchState, BatchStatus, LineOutcome, LineResult
from dialeval.models.batch.shared import sdk_timeout, api_key, check_lines, error_text

if TYPE_CHECKING:
    from dialeval.models.client import ModelClient

# Anthropic's published limits for one batch, and the custom_id it accepts
MAX_LINES = 100_000
MAX_BYTES = 256 * 1024 * 1024
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_OUTCOMES: dict[str, LineOutcome] = {"succeeded": "ok", "errored": "failed", "expired": "expired", "canceled": "cancelled"}


def batch_state(batch: Any) -> BatchState:
    """Anthropic says only ``in_progress``/``canceling``/``ended``; the counts and the
    cancel time tell an expired or cancelled batch from one that ran to its end."""
    if batch.processing_status != "ended":
        return "in_progress"
    if batch.cancel_initiated_at is not None:
        return "cancelled"
    if batch.request_counts.expired:
        return "expired"
    return "ended"


def line_result(row: Any) -> LineResult:
    """One entry of the results file (an SDK ``MessageBatchIndividualResponse``)."""
    result = row.result
    outcome: LineOutcome = _OUTCOMES.get(result.type, "failed")
    if outcome == "ok":
        return LineResult(row.custom_id, "ok", result.message.model_dump(mode="json", exclude_unset=True), None)
    error = getattr(result, "error", None)
    detail = error_text(error.model_dump(mode="json") if error is not None else None) if outcome == "failed" else result.type
    return LineResult(row.custom_id, outcome, None, detail)


class AnthropicBatches:
    """:class:`BatchProvider` for the Anthropic API."""

    name = "anthropic"
    max_lines = MAX_LINES
    max_bytes = MAX_BYTES
    discount = 0.5

    def __init__(self, sdk: Any):
        self.sdk = sdk  # an ``anthropic.AsyncAnthropic``

    @classmethod
    def for_client(cls, client: ModelClient) -> AnthropicBatches:
        """Same endpoint, key, time-out and retries as ``client``'s live calls."""
        import anthropic

        s = client.settings
        sdk = anthropic.AsyncAnthropic(
            api_key=api_key(client, required=True), timeout=sdk_timeout(anthropic, client), max_retries=s.max_retries,
            **{"base_url": client.endpoint, **client.impl.sdk_url_args()},  # issue 33: credentials apart
        )
        return cls(sdk)

    async def submit(self, lines: list[BatchLine], metadata: dict[str, str]) -> str:
        """``metadata`` is not sent: Message Batches have no field for it."""
        bad = next((line.custom_id for line in lines if not CUSTOM_ID.match(line.custom_id)), None)
        if bad is not None:
            raise ValueError(f"custom_id {bad!r}: Anthropic accepts 1-64 letters, digits, '_' or '-'")
        requests = [{"custom_id": line.custom_id, "params": line.body} for line in lines]
        check_lines(lines, len(json.dumps({"requests": requests}, ensure_ascii=False).encode()), self)
        batch = await self.sdk.messages.batches.create(requests=requests)
        return str(batch.id)

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self.sdk.messages.batches.retrieve(batch_id)
        c = batch.request_counts
        return BatchStatus(
            batch_id=batch.id,
            state=batch_state(batch),
            total=c.processing + c.succeeded + c.errored + c.canceled + c.expired,
            succeeded=c.succeeded,
            failed=c.errored,
        )

    async def results(self, batch_id: str) -> list[LineResult]:
        """Anthropic lists every request of an ended batch, answered or not."""
        decoder = await self.sdk.messages.batches.results(batch_id)
        return [line_result(row) async for row in decoder]

    async def cancel(self, batch_id: str) -> None:
        await self.sdk.messages.batches.cancel(batch_id)

    async def close(self) -> None:
        await self.sdk.close()

    async def find(self, metadata: dict[str, str]) -> str | None:
        """Always ``None``: Anthropic batches carry no metadata to recognise them by."""
        return None
