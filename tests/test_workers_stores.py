"""The response cache and the prompt store with several writer processes (a run's workers)."""

from __future__ import annotations

import multiprocessing
import os

import pytest
from langchain_core.messages import HumanMessage

from dialeval.models.cache import open_cache
from dialeval.models.prompt_store import load_prompts, store_prompt

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks writer processes")
EACH = 150


def _write(cache_path: str, run_dir: str, writer: int, start: multiprocessing.synchronize.Event, parents: int) -> None:
    start.wait(30)  # every writer starts together, so their writes interleave
    cache = open_cache(cache_path)
    assert id(cache) != parents, "a child must open its own connection, never use the parent's"
    for i in range(EACH):
        cache.put(f"{writer}-{i}", "m", {"text": f"answer {writer}-{i}"})
        store_prompt(run_dir, [HumanMessage(f"prompt {writer}-{i}")])
        store_prompt(run_dir, [HumanMessage("the prompt every writer sends")])


def test_forked_writers_share_one_cache_and_one_prompt_store_without_losing_a_row(tmp_path):
    cache_path, run_dir = str(tmp_path / "cache.sqlite"), str(tmp_path / "run")
    parents = open_cache(cache_path)  # an open connection is inherited by the children
    parents.put("parent", "m", {"text": "from before the fork"})
    store_prompt(run_dir, [HumanMessage("stored by the parent")])
    context = multiprocessing.get_context("fork")
    start = context.Event()
    writers = [context.Process(target=_write, args=(cache_path, run_dir, w, start, id(parents))) for w in range(3)]
    for process in writers:
        process.start()
    start.set()
    for process in writers:
        process.join(120)
    assert [p.exitcode for p in writers] == [0, 0, 0]

    cache = open_cache(cache_path)  # the parent's own connection still works after the children wrote
    assert len(cache) == 1 + 3 * EACH
    assert cache.get("2-149") == {"text": "answer 2-149"} and cache.get("parent") == {"text": "from before the fork"}
    store_prompt(run_dir, [HumanMessage("stored by the parent afterwards")])
    prompts = load_prompts(run_dir)
    assert len(prompts) == 2 + 3 * EACH + 1  # one shared prompt stored once
