"""What a run does once instead of per call: the collector's raised thresholds while items are
in flight, and each chat model bound to a schema once (docs/performance.md)."""

from __future__ import annotations

import asyncio
import gc
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from dialeval.config import ModelSettings
from dialeval.models.client import ModelClient
from dialeval.run.collector import RUN_THRESHOLDS, fewer_collections
from dialeval.run.items import ItemJob, ItemRunner
from dialeval.testing.openai_server import OpenAIStub


@pytest.fixture
def default_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


@dataclass
class Item:
    id: str


def test_items_run_under_raised_collector_thresholds_and_the_old_ones_come_back(default_thresholds):
    seen: list[tuple[int, ...]] = []

    async def evaluate(bench: Any, graph: Any, item: Item, context: Any, options: Any, on_call: Any) -> dict[str, Any]:
        seen.append(gc.get_threshold())
        await asyncio.sleep(0)
        return {"id": item.id, "status": "ok"}

    async def go() -> None:
        runner = ItemRunner(ItemJob(None, None, None, {}, evaluate, 4, 5), on_row=lambda row: None,  # type: ignore[arg-type]
                            on_call=lambda call: None)
        for i in range(3):
            runner.add(Item(f"q{i}"))
        runner.close()
        await runner.run()

    asyncio.run(go())
    assert seen == [RUN_THRESHOLDS] * 3
    assert gc.get_threshold() == (700, 10, 10)


def test_overlapping_runs_restore_the_thresholds_once_the_last_one_ends(default_thresholds):
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    during: list[tuple[int, ...]] = []

    def first() -> None:
        with fewer_collections():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with fewer_collections():
            second_in.set()
            first_out.wait(5)
            during.append(gc.get_threshold())  # the first run ended; this one still runs

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert during == [RUN_THRESHOLDS]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_process_with_higher_thresholds_keeps_them(default_thresholds):
    gc.set_threshold(50_000, 5, 20)
    with fewer_collections():
        assert gc.get_threshold() == (50_000, 10, 20)
    assert gc.get_threshold() == (50_000, 5, 20)


def test_a_process_that_switched_collection_off_keeps_it_off(default_thresholds):
    gc.set_threshold(0, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)


class Grade(BaseModel):
    score: int


def test_a_chat_model_is_bound_to_a_schema_once_and_forgotten_with_its_loop():
    with OpenAIStub(respond=lambda body: '{"score": 4}') as server:
        client = ModelClient(ModelSettings(spec="openai-compatible:judge", base_url=server.base_url))

        async def two_calls() -> tuple[Any, Any, Any, Any]:
            model = client.model
            first, again = client.impl.bound(model, Grade, None), client.impl.bound(model, Grade, None)
            narrowed = client.impl.bound(model, Grade, {"type": "object", "properties": {"score": {"enum": [1, 2]}}})
            answers = [await client.generate([HumanMessage(f"Grade {n}")], schema=Grade) for n in range(2)]
            await client.close_loop()
            return first, again, narrowed, (answers, client.impl.bound(model, Grade, None))

        first, again, narrowed, (answers, after_close) = asyncio.run(two_calls())
    assert first is again  # one binding per chat model and schema
    assert narrowed is not first  # a call's narrowed schema is its own
    assert after_close is not first  # the loop's run ended: its binding was dropped
    assert [a.text for a in answers] == ['{"score": 4}'] * 2
    bodies = [r for r in server.requests if "messages" in r]
    assert [b["response_format"]["json_schema"]["name"] for b in bodies] == ["Grade", "Grade"]
    assert bodies[0]["response_format"] == bodies[1]["response_format"]
