"""What the OpenAI and Anthropic batch clients share: the live path's key and time-outs,
the limits checked before sending, readable line errors, and splitting by those limits."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Protocol

from dialeval.errors import ConfigError
from dialeval.models.batch.lines import BatchLine

if TYPE_CHECKING:
    from dialeval.models.client import ModelClient


class BatchUnsupported(ConfigError):
    """``batch: true`` on a model whose backend has no batch API here."""


class Limits(Protocol):
    """A provider's limits for one batch."""

    name: str
    max_lines: int
    max_bytes: int


def api_key(client: ModelClient, required: bool) -> str | None:
    """The key the live path would send, from the same environment variable."""
    key = os.environ.get(client.key_env or "")
    if required and not key:
        raise BatchUnsupported(f"model {client.label}: no API key; set ${client.key_env} in the environment")
    return key or None


def sdk_timeout(sdk: Any, client: ModelClient) -> Any:
    """The live path's time-outs (``timeout`` to read, at most 10 s to connect) in the SDK's own type."""
    from dialeval.models.backends.http import CONNECT_TIMEOUT

    seconds = client.settings.timeout
    return sdk.Timeout(seconds, connect=min(CONNECT_TIMEOUT, seconds))


def error_text(error: Any) -> str:
    """A line's error as one readable line, whatever shape the provider gave it."""
    if error is None:
        return "no answer"
    if isinstance(error, dict):
        nested = error.get("error")
        inner: dict[str, Any] = nested if isinstance(nested, dict) else error
        kind = inner.get("type") or inner.get("code") or "error"
        return f"{kind}: {inner.get('message') or ''}".strip().rstrip(":")
    return str(error)


def check_lines(lines: list[BatchLine], size: int, provider: Limits) -> None:
    """Stop before sending a batch the provider would refuse (the runner splits by these limits)."""
    if not lines:
        raise ValueError("a batch needs at least one line")
    if len(lines) > provider.max_lines or size > provider.max_bytes:
        raise ValueError(
            f"{len(lines)} lines, {size} bytes: over the {provider.name} batch limits "
            f"({provider.max_lines} lines, {provider.max_bytes} bytes); split with split_lines()"
        )
    ids = [line.custom_id for line in lines]
    if len(set(ids)) != len(ids):
        raise ValueError("custom_id values repeat within one batch")


def line_size(line: BatchLine) -> int:
    """Bytes the line takes in a request file (an estimate within a few bytes for Anthropic)."""
    return len(json.dumps({"custom_id": line.custom_id, "body": line.body}, ensure_ascii=False).encode()) + 64


def split_lines(lines: list[BatchLine], max_lines: int, max_bytes: int) -> list[list[BatchLine]]:
    """``lines`` cut into batches within a provider's count and size limits, in order."""
    batches: list[list[BatchLine]] = []
    current: list[BatchLine] = []
    size = 0
    for line in lines:
        n = line_size(line)
        if current and (len(current) >= max_lines or size + n > max_bytes):
            batches.append(current)
            current, size = [], 0
        current.append(line)
        size += n
    if current:
        batches.append(current)
    return batches
