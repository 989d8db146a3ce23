"""``execute(meanwhile=...)``: the report's imports run in a thread of their own once the first
item has finished, so they use the time the event loop spends waiting for answers."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.client import register_client
from dialeval.run.runner import execute, prepare_run
from dialeval.testing.scripted import ScriptedChatModel

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"


def test_meanwhile_runs_once_in_its_own_thread_after_the_first_item(tmp_path):
    settings = ModelSettings(spec="openai:meanwhile-judge", max_retries=0)
    register_client(settings, ScriptedChatModel(respond=lambda messages: json.dumps({"rationale": "ok", "score": 3})))
    config = RunConfig(model=settings, output_dir=str(tmp_path), cache_path=None, run_id="run", concurrency=1)
    prep = prepare_run("answers", DATA, config)
    seen: list[tuple[str, int]] = []

    def meanwhile() -> None:  # where it ran, and how many items had finished by then
        results = prep.run_dir / "results.jsonl"
        seen.append((threading.current_thread().name, len(results.read_text().splitlines())))

    outcome, metrics = asyncio.run(execute(prep, lambda outcome: {"rows": len(outcome.rows)}, progress=False,
                                           meanwhile=meanwhile))

    assert metrics == {"rows": len(prep.items)} and len(prep.items) > 1
    [(thread, finished)] = seen  # once, not once per item
    assert thread == "dialeval-meanwhile" and finished >= 1


def test_nothing_runs_meanwhile_when_no_item_is_left(tmp_path):
    settings = ModelSettings(spec="openai:meanwhile-judge-2", max_retries=0)
    register_client(settings, ScriptedChatModel(respond=lambda messages: json.dumps({"rationale": "ok", "score": 3})))
    config = RunConfig(model=settings, output_dir=str(tmp_path), cache_path=None, run_id="run", concurrency=1)
    asyncio.run(execute(prepare_run("answers", DATA, config), lambda outcome: {}, progress=False))
    calls: list[str] = []

    asyncio.run(execute(prepare_run("answers", DATA, config), lambda outcome: {}, progress=False,
                        meanwhile=lambda: calls.append("ran")))  # the same run again: every item is done

    assert calls == []
