"""The OpenAI Batch API (a JSONL file uploaded with purpose ``batch``, then a batch on
``/v1/chat/completions``), also at an ``openai-compatible`` server that offers it."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, Sequence

from dialeval.models.batch.lines import BatchLine, BatchState, BatchStatus, LineOutcome, LineResult
from dialeval.models.batch.shared import BatchUnsupported, sdk_timeout, api_key, check_lines, error_text

if TYPE_CHECKING:
    from dialeval.models.client import ModelClient

ENDPOINT = "/v1/chat/completions"
WINDOW = "24h"
# the OpenAI API's published limits for one batch
MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024
FIND_AMONG = 1000  # how many of the newest batches find() looks through

_STATES: dict[str, BatchState] = {
    "validating": "in_progress", "in_progress": "in_progress", "finalizing": "in_progress",
    "cancelling": "in_progress", "completed": "ended", "failed": "failed", "expired": "expired",
    "cancelled": "cancelled",
}
# what an error-file line's code says happened to a request that got no answer
_UNANSWERED: dict[str, LineOutcome] = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
# OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values up to 512
METADATA_PAIRS, METADATA_KEY, METADATA_VALUE = 16, 64, 512


def request_file(lines: list[BatchLine]) -> bytes:
    """The JSONL input file: one chat-completions request per line."""
    rows = ({"custom_id": line.custom_id, "method": "POST", "url": ENDPOINT, "body": line.body} for line in lines)
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def line_result(row: dict[str, Any]) -> LineResult:
    """One line of an output or error file as a :class:`LineResult`."""
    custom_id = str(row.get("custom_id"))
    response = row.get("response") or None
    error = row.get("error")
    if response is not None and response.get("status_code") == 200 and not error:
        return LineResult(custom_id, "ok", response.get("body"), None)
    if isinstance(error, dict) and error.get("code") in _UNANSWERED:
        return LineResult(custom_id, _UNANSWERED[error["code"]], None, error_text(error))
    if error is None and response is not None:
        status = response.get("status_code")
        error = (response.get("body") or {}).get("error") or {"message": f"HTTP {status}"}
    return LineResult(custom_id, "failed", None, error_text(error))


def unanswered(custom_id: str, batch_state: BatchState, why: str = "") -> LineResult:
    """A submitted line the batch's files do not mention."""
    outcome: LineOutcome = "expired" if batch_state == "expired" else "cancelled" if batch_state == "cancelled" else "failed"
    return LineResult(custom_id, outcome, None, f"no answer (batch {batch_state}{': ' + why if why else ''})")


def check_metadata(metadata: dict[str, str]) -> None:
    """Stop before the API refuses metadata it cannot hold."""
    too_long = [k for k, v in metadata.items() if len(k) > METADATA_KEY or len(str(v)) > METADATA_VALUE]
    if len(metadata) > METADATA_PAIRS or too_long:
        raise ValueError(
            f"batch metadata: at most {METADATA_PAIRS} pairs, keys up to {METADATA_KEY} and values up to "
            f"{METADATA_VALUE} characters (too long: {', '.join(too_long) or 'none'})"
        )


def batch_errors(batch: Any) -> str:
    """Why a batch failed as a whole (validation errors of its input file), in one line."""
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    return "; ".join(f"{e.code or 'error'}: {e.message or ''}" for e in errors)


class OpenAIBatches:
    """:class:`BatchProvider` for the OpenAI API and OpenAI-compatible servers."""

    name = "openai"
    max_lines = MAX_LINES
    max_bytes = MAX_BYTES

    def __init__(self, sdk: Any, discount: float, where: str = "the server"):
        self.sdk = sdk  # an ``openai.AsyncOpenAI``
        self.discount = discount
        self.where = where  # the model and endpoint, for messages

    @classmethod
    def for_client(cls, client: ModelClient) -> OpenAIBatches:
        """Same endpoint, key, time-out and retries as ``client``'s live calls."""
        import openai

        if client.endpoint is None:
            raise BatchUnsupported(
                f"model {client.label}: openai-compatible models need base_url in the config (or $OPENAI_BASE_URL)"
            )
        needs_key = bool(getattr(client.impl, "needs_key", True))
        key = api_key(client, required=needs_key) or "not-needed"
        s = client.settings
        sdk = openai.AsyncOpenAI(
            api_key=key, timeout=sdk_timeout(openai, client), max_retries=s.max_retries,
            **{"base_url": client.endpoint, **client.impl.sdk_url_args()},  # issue 33: query and credentials apart
        )
        return cls(sdk, discount=0.5 if client.backend == "openai" else 1.0, where=client.where())

    async def submit(self, lines: list[BatchLine], metadata: dict[str, str]) -> str:
        data = request_file(lines)
        check_lines(lines, len(data), self)
        check_metadata(metadata)
        import openai

        try:
            uploaded = await self.sdk.files.create(file=("dialeval-batch.jsonl", data, "application/jsonl"), purpose="batch")
        except openai.NotFoundError:
            raise BatchUnsupported(f"{self.where} has no batch API (POST /files answered 404): drop batch: true") from None
        try:
            batch = await self.sdk.batches.create(
                input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window=WINDOW, metadata=metadata or None
            )
        except openai.APIStatusError:  # issue 33: refused: the file would stay at the provider, one per re-run
            await self._delete(uploaded.id)
            raise
        return str(batch.id)

    async def _delete(self, file_id: str | None) -> None:
        """Delete an uploaded input file nothing will read again; a refusal to delete is left be."""
        import openai

        if file_id:
            with contextlib.suppress(openai.APIError):
                await self.sdk.files.delete(file_id)

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self.sdk.batches.retrieve(batch_id)
        counts = batch.request_counts
        return BatchStatus(
            batch_id=batch.id,
            state=_STATES.get(batch.status, "in_progress"),
            total=counts.total if counts else 0,
            succeeded=counts.completed if counts else 0,
            failed=counts.failed if counts else 0,
        )

    async def _rows(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        content = await self.sdk.files.content(file_id)
        return [json.loads(row) for row in content.text.splitlines() if row.strip()]

    async def results(self, batch_id: str) -> list[LineResult]:
        import openai

        batch = await self.sdk.batches.retrieve(batch_id)
        state = _STATES.get(batch.status, "in_progress")
        if state == "in_progress":
            raise RuntimeError(f"batch {batch_id} is still {batch.status}: its results are not final")
        found: dict[str, LineResult] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            for row in await self._rows(file_id):
                result = line_result(row)
                found[result.custom_id] = result
        total = batch.request_counts.total if batch.request_counts else 0
        if len(found) < total or state != "ended":  # lines the files leave out: read the ids submitted
            with contextlib.suppress(openai.NotFoundError):  # deleted below by a collection a crash cut short
                for row in await self._rows(batch.input_file_id):
                    custom_id = str(row.get("custom_id"))
                    if custom_id not in found:
                        found[custom_id] = unanswered(custom_id, state, batch_errors(batch))
        if state == "failed":  # issue 33: rejected (validation failed): its input file goes, once read
            await self._delete(batch.input_file_id)
        return list(found.values())

    async def cancel(self, batch_id: str) -> None:
        await self.sdk.batches.cancel(batch_id)

    async def close(self) -> None:
        await self.sdk.close()

    async def find(self, metadata: dict[str, str], custom_ids: Sequence[str] = (), since: float | None = None) -> str | None:
        """The newest batch whose metadata holds every pair of ``metadata``, whatever its state."""
        seen = 0
        async for batch in self.sdk.batches.list(limit=100):
            have = batch.metadata or {}
            if all(have.get(k) == v for k, v in metadata.items()):
                return str(batch.id)
            seen += 1
            if seen >= FIND_AMONG:
                break
        return None
