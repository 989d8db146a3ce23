"""Costs as the invoice says them: cached input at the cached rate, unknown is unknown."""

from __future__ import annotations

import pytest

from dialeval.models.pricing import PRICES, Price, price_of


def test_cached_input_is_billed_at_the_providers_cached_rate():
    price = price_of("gpt-4o-mini")
    assert price == Price(0.15, 0.60, 0.075, 0.15)  # genai-prices' table; writes cost as input at OpenAI
    # 1M prompt tokens of which 600k were cached, 100k output
    assert price.cost(1_000_000, 100_000, cached_input_tokens=600_000) == pytest.approx(0.4 * 0.15 + 0.6 * 0.075 + 0.1 * 0.60)


def test_anthropic_cache_writes_cost_more_and_reads_less():
    price = price_of("anthropic:claude-haiku-4-5")
    assert price.cache_write > price.input > price.cached_input
    plain = price.cost(10_000, 0)
    assert price.cost(10_000, 0, cache_write_tokens=10_000) > plain > price.cost(10_000, 0, cached_input_tokens=10_000)


def test_an_unknown_model_has_no_price_rather_than_a_zero_one():
    assert price_of("my-finetune-7b") is None
    assert price_of("") is None


def test_a_price_of_your_own_wins_over_the_table(monkeypatch):
    monkeypatch.setitem(PRICES, "my-finetune", Price(1.0, 2.0))
    assert price_of("my-finetune-7b").cost(1_000_000, 1_000_000, cached_input_tokens=500_000) == pytest.approx(3.0)
    assert Price.of((1.0, 2.0, 0.5)).cost(1_000_000, 0, cached_input_tokens=1_000_000) == pytest.approx(0.5)


def _long_prompt(turns: int) -> list:
    from langchain_core.messages import HumanMessage, SystemMessage

    history = "\n".join(f"Turn {i}: the user asked about picture {i} and got an answer." for i in range(turns))
    return [SystemMessage("You grade answers. " * 200), HumanMessage(history)]


async def test_cached_input_reported_by_the_server_is_billed_at_the_cached_rate(monkeypatch):
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    from dialeval.config import ModelSettings
    from dialeval.models.client import ModelClient
    from dialeval.testing.openai_server import OpenAIStub

    with OpenAIStub(respond=lambda body: "fine", prompt_cache=True) as server:
        client = ModelClient(ModelSettings(spec="openai:gpt-4o-mini", base_url=server.base_url, api_key_env="STUB_KEY"))
        first = await client.generate(_long_prompt(40))
        second = await client.generate(_long_prompt(60))  # the same conversation, grown
    assert first.cached_input_tokens == 0 and second.cached_input_tokens >= 1024
    price = price_of("gpt-4o-mini")
    assert second.cost == pytest.approx(price.cost(second.input_tokens, second.output_tokens, second.cached_input_tokens))
    assert second.cost < second.uncached_cost


async def test_a_dry_run_estimates_the_prompt_cache_share():
    from dialeval.config import ModelSettings
    from dialeval.models.client import ModelClient

    client = ModelClient(ModelSettings(spec="dry-run:gpt-4o-mini"))
    first = await client.generate(_long_prompt(40), placeholder="{}")
    second = await client.generate(_long_prompt(60), placeholder="{}")
    assert first.cached_input_tokens == 0
    assert second.cached_input_tokens >= 1024 and second.cached_input_tokens % 128 == 0
    assert second.cost < second.uncached_cost


def test_batch_prices_come_from_the_table_where_it_has_them():
    from dialeval.models.pricing import batch_price

    price = batch_price("openai:gpt-4.1")
    assert price is not None and price.source == "genai-prices batch rates"
    assert (price.input, price.output) == pytest.approx((1.0, 4.0))  # half the standard 2.00 / 8.00
    claude = batch_price("anthropic:claude-haiku-4-5")
    assert claude.source == "genai-prices batch rates"
    # Anthropic's cache multipliers stack with the batch discount
    assert (claude.input, claude.cached_input, claude.cache_write) == pytest.approx((0.5, 0.05, 0.625))


def test_batch_prices_fall_back_to_the_published_discount_and_say_so():
    from dialeval.models.pricing import batch_price

    standard = price_of("anthropic:claude-3-5-haiku-latest")
    price = batch_price("anthropic:claude-3-5-haiku-latest")  # no batch rates in the table
    assert price.source == "Anthropic's published batch discount (50% off the standard rates)"
    assert price.cost(1_000_000, 1_000_000, cached_input_tokens=500_000) == pytest.approx(
        standard.cost(1_000_000, 1_000_000, cached_input_tokens=500_000) / 2
    )
    own = batch_price("openai:my-finetune", standard=Price(1.0, 2.0))
    assert (own.input, own.output, own.source) == (0.5, 1.0, "OpenAI's published batch discount (50% off the standard rates)")
    unknown = batch_price("my-server-model", standard=Price(1.0, 2.0))  # no provider, no known discount
    assert (unknown.input, unknown.source) == (1.0, "no batch discount known: standard rates")
    assert batch_price("my-finetune-7b") is None


def test_rates_are_read_below_long_context_tiers():
    """A million tokens in one prompt would hit Anthropic's long-context tier; a call does not."""
    assert price_of("anthropic:claude-sonnet-4-5").input == pytest.approx(3.0)


def test_a_batch_call_of_a_client_is_priced_as_its_live_price_says():
    from dialeval.config import ModelSettings
    from dialeval.models.batch.costs import batch_price_for
    from dialeval.models.client import ModelClient

    def priced(**settings):
        return batch_price_for(ModelClient(ModelSettings(**settings)))

    assert priced(spec="openai:gpt-4o-mini").input == pytest.approx(0.075)
    assert priced(spec="dry-run:anthropic:claude-haiku-4-5").input == pytest.approx(0.5)  # an estimate of a batch run
    assert priced(spec="openai:gpt-4o-mini", price=(1.0, 2.0)).output == pytest.approx(1.0)
    assert priced(spec="openai-compatible:llama3", base_url="http://127.0.0.1:9/v1") is None
