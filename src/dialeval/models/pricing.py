"""What a model call costs, as the provider's invoice would say it.

Prices come from genai-prices (a maintained table with cached-input and cache-write
rates, shipped inside the package: nothing is fetched) unless a model's settings give
their own. Cached input tokens are billed at the provider's cached rate, cache writes
at its write rate, and the rest of the input at the full rate. A model with no known
price has cost ``None`` ("unknown"), never 0; local models are free.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

PER_MILLION = 1_000_000
# rates are read off the price of this many tokens (then scaled): small enough that no
# long-context tier (Anthropic's above 200k prompt tokens) applies, as for a typical call
_SAMPLE = 1_000

# the providers' published batch discounts, for models genai-prices has no batch rates for
BATCH_DISCOUNTS = {"openai": 0.5, "anthropic": 0.5}
_PROVIDER_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic"}


@dataclass(frozen=True)
class Price:
    """USD per million tokens. Cached input without its own rate costs as input."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None
    source: str | None = None  # where the rates come from, when the report should say it (batch rates)

    @classmethod
    def of(cls, values: tuple[float, ...] | list[float]) -> Price:
        """From ``(input, output[, cached_input[, cache_write]])`` as written in a config."""
        return cls(*values)

    def scaled(self, factor: float, source: str) -> Price:
        """Every rate times ``factor`` (a batch discount), saying where that came from."""
        def times(rate: float | None) -> float | None:
            return None if rate is None else rate * factor

        return Price(self.input * factor, self.output * factor, times(self.cached_input), times(self.cache_write), source)

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


@lru_cache(maxsize=1024)
def _from_table(model: str, provider: str | None, batch: bool = False) -> Price | None:
    """One model's rates from genai-prices, read off by pricing tokens of each kind;
    ``batch``: the table's batch-processing rates (``None`` when it has none for the model)."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    context = {"processing": "batch"} if batch else None

    def rate(**usage: int) -> float:
        scaled = {k: v * _SAMPLE for k, v in usage.items()}
        calc = calc_price(Usage(**scaled), model_ref=model, provider_id=provider, price_context=context)
        return float(calc.total_price) * (PER_MILLION / _SAMPLE)

    try:
        input_rate = rate(input_tokens=1)
    except LookupError:
        return None
    price = Price(
        input=input_rate,
        output=rate(output_tokens=1),
        cached_input=rate(input_tokens=1, cache_read_tokens=1),
        cache_write=rate(input_tokens=1, cache_write_tokens=1),
    )
    if batch:
        if price == _from_table(model, provider):  # the table has no batch variant for this model
            return None
        return replace(price, source="genai-prices batch rates")
    return price


def price_of(model: str | None, provider: str | None = None) -> Price | None:
    """The price of ``model`` (a bare name, or ``provider:name``); ``None`` when unknown."""
    if not model:
        return None
    model, provider = _split(model, provider)
    best = max((name for name in PRICES if model.startswith(name)), key=len, default=None)
    if best is not None:
        return PRICES[best]
    return _from_table(model, provider)


def _split(model: str, provider: str | None) -> tuple[str, str | None]:
    if ":" in model and provider is None:
        head, _, name = model.partition(":")
        if head in _PROVIDERS:
            return name, _PROVIDERS[head]
    return model, provider


def batch_price(model: str | None, provider: str | None = None, standard: Price | None = None) -> Price | None:
    """What ``model`` costs through its provider's batch API; ``source`` says where the rates come from.

    genai-prices' batch rates when it has them; else ``standard`` (default: the model's
    usual price) at the provider's published discount (50% for OpenAI and Anthropic,
    cached input and cache writes included); else the standard price unchanged, saying
    no discount is known. ``None`` when even the standard price is unknown.
    """
    if not model:
        return standard.scaled(1.0, "no batch discount known: standard rates") if standard else None
    name, provider = _split(model, provider)
    if standard is None:
        own = max((p for p in PRICES if name.startswith(p)), key=len, default=None)
        table = None if own is not None else _from_table(name, provider, batch=True)
        if table is not None:
            return table
        standard = price_of(name, provider)
    if standard is None:
        return None
    discount = BATCH_DISCOUNTS.get(provider or "")
    if discount is None:
        return standard.scaled(1.0, "no batch discount known: standard rates")
    who = _PROVIDER_NAMES[provider or ""]
    return standard.scaled(discount, f"{who}'s published batch discount ({100 - round(discount * 100)}% off the standard rates)")
