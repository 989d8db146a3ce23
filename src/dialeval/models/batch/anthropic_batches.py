"""Anthropic's Message Batches API: one request body of ``{custom_id, params}`` pairs.

Anthropic batches carry no metadata, so :meth:`AnthropicBatches.find` recognises a batch
a crash kept from the run folder (accepted, its id never written) by its custom ids,
which are the calls' cache keys, before any of its lines is submitted again.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Sequence

from dialeval.models.batch.lines import BatchLine, BatchState, BatchStatus, LineOutcome, LineResult
from dialeval.models.batch.shared import sdk_timeout, api_key, check_lines, error_text

if TYPE_CHECKING:
    from dialeval.models.client import ModelClient

# Anthropic's published limits for one batch, and the custom_id it accepts
MAX_LINES = 100_000
MAX_BYTES = 256 * 1024 * 1024
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

FIND_AMONG = 100  # how many of the newest batches find() looks through
CLOCK_SKEW = 60.0  # seconds a batch's creation time may read earlier than the run folder's clock

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

    async def find(self, metadata: dict[str, str], custom_ids: Sequence[str] = (), since: float | None = None) -> str | None:
        """The batch a crash kept from the run folder, recognised by its custom ids (the calls'
        cache keys: a request with the same id is the same request), among the account's
        newest :data:`FIND_AMONG` batches created since ``since`` (less a minute of clock skew).

        Anthropic batches carry no metadata, and only an ended batch lists its ids. An ended
        batch is adopted when it holds every id; one still running when it holds as many
        requests as the chunk (its ids are checked when it is collected: a line it does not
        hold comes back failed and goes in the next round, never billed twice)."""
        if not custom_ids or since is None:  # a run folder from before the time was kept: nothing to match by
            return None
        wanted, seen = set(custom_ids), 0
        async for batch in self.sdk.messages.batches.list(limit=100):
            created = batch.created_at.timestamp()
            if created < since - CLOCK_SKEW or seen >= FIND_AMONG:
                break  # newest first: the rest is older still
            seen += 1
            c = batch.request_counts
            if batch.processing_status != "ended":
                if c.processing + c.succeeded + c.errored + c.canceled + c.expired == len(wanted):
                    return str(batch.id)
                continue
            held = {row.custom_id async for row in await self.sdk.messages.batches.results(batch.id)}
            if wanted <= held:
                return str(batch.id)
        return None
