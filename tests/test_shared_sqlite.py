"""Processes (two runs, a run and the viewer) open one prompt store or response cache at
the same moment; none of them may fail for it ("database is locked")."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the openers are forked")

OPENERS = 8  # processes opening one new file at once
ROUNDS = 12


def _store_a_prompt(run_dir: str, start: object, errors: object) -> None:
    from langchain_core.messages import HumanMessage

    from dialeval.models import prompt_store

    start.wait()  # type: ignore[attr-defined]
    try:
        prompt_store.store_prompt(run_dir, [HumanMessage(f"prompt of {os.getpid()}")])
        prompt_store.flush(run_dir)
    except Exception as err:  # noqa: BLE001  (what the test counts)
        errors.put(repr(err))  # type: ignore[attr-defined]


def _read_the_cache(path: str, start: object, errors: object) -> None:
    from dialeval.models.cache import open_cache

    start.wait()  # type: ignore[attr-defined]
    try:
        cache = open_cache(path)
        cache.put(f"key-{os.getpid()}", "judge", {"text": "4"})
        cache.get("key")
    except Exception as err:  # noqa: BLE001
        errors.put(repr(err))  # type: ignore[attr-defined]


def _all_at_once(target, argument: str) -> list[str]:
    fork = multiprocessing.get_context("fork")
    start, errors = fork.Barrier(OPENERS), fork.Queue()
    processes = [fork.Process(target=target, args=(argument, start, errors)) for _ in range(OPENERS)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    found = []
    while not errors.empty():
        found.append(errors.get())
    return found


def test_processes_opening_a_new_prompt_store_at_once_all_store_their_prompts(tmp_path: Path):
    from dialeval.models.prompt_store import load_prompts

    for round_ in range(ROUNDS):
        run_dir = tmp_path / f"run-{round_}"
        assert _all_at_once(_store_a_prompt, str(run_dir)) == []
        assert len(load_prompts(run_dir)) == OPENERS


def test_processes_opening_a_new_response_cache_at_once_all_use_it(tmp_path: Path):
    import sqlite3

    for round_ in range(ROUNDS):
        path = tmp_path / f"cache-{round_}.sqlite"
        assert _all_at_once(_read_the_cache, str(path)) == []
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT COUNT(*) FROM responses").fetchone() == (OPENERS,)
