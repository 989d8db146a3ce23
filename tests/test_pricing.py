"""Costs as the invoice says them: cached input at the cached rate, unknown is unknown."""

from __future__ import annotations

import pytest

from dialeval.pricing import PRICES, Price, price_of


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
