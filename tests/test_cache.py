"""The SQLite response cache: a repeated call never reaches the model."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from dialeval.models.cache import ResponseCache
from dialeval.config import ModelSettings
from dialeval.models.client import ModelClient
from dialeval.testing.scripted import ScriptedChatModel


async def test_second_identical_call_is_served_from_the_cache(tmp_path):
    model = ScriptedChatModel(respond=lambda m: "answer")
    client = ModelClient(ModelSettings(spec="openai:cache-test"), model)
    path = str(tmp_path / "c.sqlite")
    first = await client.generate([HumanMessage("hello")], cache_path=path)
    client.remember(first)  # agents store an answer once it was read as ok
    second = await client.generate([HumanMessage("hello")], cache_path=path)
    assert len(model.prompts) == 1
    assert not first.cached and second.cached and second.text == "answer" and second.cost == 0


async def test_a_different_prompt_or_parameter_is_a_new_call(tmp_path):
    model = ScriptedChatModel(respond=lambda m: "answer")
    path = str(tmp_path / "c.sqlite")
    cold = ModelClient(ModelSettings(spec="openai:cache-test"), model)
    warm = ModelClient(ModelSettings(spec="openai:cache-test", temperature=0.7), model)
    cold.remember(await cold.generate([HumanMessage("hello")], cache_path=path))
    await cold.generate([HumanMessage("hello again")], cache_path=path)
    await warm.generate([HumanMessage("hello")], cache_path=path)
    assert len(model.prompts) == 3


async def test_the_cache_outlives_the_process_that_filled_it(tmp_path):
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", "m", {"text": "kept"})
    assert ResponseCache(path).get("k") == {"text": "kept"}
    assert len(ResponseCache(path)) == 1


async def test_no_cache_path_means_every_call_is_sent():
    model = ScriptedChatModel(respond=lambda m: "answer")
    client = ModelClient(ModelSettings(spec="openai:cache-test"), model)
    await client.generate([HumanMessage("hello")], cache_path=None)
    await client.generate([HumanMessage("hello")], cache_path=None)
    assert len(model.prompts) == 2


async def test_costs_follow_the_price_table_unless_overridden():
    model = ScriptedChatModel(respond=lambda m: "answer")  # reports 10 input, 5 output tokens
    listed = ModelClient(ModelSettings(spec="openai:gpt-4o-mini"), model)
    custom = ModelClient(ModelSettings(spec="openai:gpt-4o-mini", price=(1000.0, 2000.0)), model)
    local = ModelClient(ModelSettings(spec="openai-compatible:llama", base_url="http://x"), model)
    assert (await listed.generate([HumanMessage("a")])).cost == (10 * 0.15 + 5 * 0.60) / 1e6
    assert (await custom.generate([HumanMessage("a")])).cost == (10 * 1000 + 5 * 2000) / 1e6
    assert (await local.generate([HumanMessage("a")])).cost == 0.0
    assert local.price is None  # a server of unknown price: the report says "unknown", not 0
