"""What a model call costs, as the provider's invoice would say it.

Prices come from genai-prices (a maintained table with cached-input and cache-write
rates, shipped inside the package: nothing is fetched) unless a model's settings give
their own. Cached input tokens are billed at the provider's cached rate, cache writes
at its write rate, and the rest of the input at the full rate. A model with no known
price has cost ``None`` ("unknown"), never 0; local models are free.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens. Cached input without its own rate costs as input."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    @classmethod
    def of(cls, values: tuple[float, ...] | list[float]) -> Price:
        """From ``(input, output[, cached_input[, cache_write]])`` as written in a config."""
        return cls(*values)

    def cost(
        self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0, cache_write_tokens: int = 0
    ) -> float:
        """``input_tokens`` counts every prompt token, cached and written ones included."""
        cached = min(cached_input_tokens, input_tokens)
        written = min(cache_write_tokens, input_tokens - cached)
        fresh = input_tokens - cached - written
        total = (
            fresh * self.input
            + cached * (self.input if self.cached_input is None else self.cached_input)
            + written * (self.input if self.cache_write is None else self.cache_write)
            + output_tokens * self.output
        )
        return total / PER_MILLION


FREE = Price(0.0, 0.0, 0.0, 0.0)

# Models genai-prices may not list, or whose listed price a user wants to replace:
# `PRICES["my-model"] = Price(0.2, 0.8)`; a model's own `price:` setting wins over both.
PRICES: dict[str, Price] = {}

_PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}


@lru_cache(maxsize=512)
def _from_table(model: str, provider: str | None) -> Price | None:
    """One model's rates from genai-prices, read off by pricing a million tokens of each kind."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover - a declared dependency
        return None

    def rate(**usage: int) -> float:
        return float(calc_price(Usage(**usage), model_ref=model, provider_id=provider).total_price)

    try:
        input_rate = rate(input_tokens=PER_MILLION)
    except LookupError:
        return None
    return Price(
        input=input_rate,
        output=rate(output_tokens=PER_MILLION),
        cached_input=rate(input_tokens=PER_MILLION, cache_read_tokens=PER_MILLION),
        cache_write=rate(input_tokens=PER_MILLION, cache_write_tokens=PER_MILLION),
    )


def price_of(model: str | None, provider: str | None = None) -> Price | None:
    """The price of ``model`` (a bare name, or ``provider:name``); ``None`` when unknown."""
    if not model:
        return None
    if ":" in model and provider is None:
        head, _, name = model.partition(":")
        if head in _PROVIDERS:
            provider, model = _PROVIDERS[head], name
    best = max((name for name in PRICES if model.startswith(name)), key=len, default=None)
    if best is not None:
        return PRICES[best]
    return _from_table(model, provider)
