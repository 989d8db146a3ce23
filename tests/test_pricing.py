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
