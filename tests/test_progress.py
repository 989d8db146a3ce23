"""Progress inside an item: every finished model call ticks the display the runner shows."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from dialeval.models import progress
from dialeval.agents.base import AgentContext, ask, ask_text
from dialeval.config import EvalContext, RunConfig
from dialeval.run.runner import run
from tests.helpers import scripted

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"


class Score(BaseModel):
    score: int


def test_ticks_without_a_display_do_nothing():
    progress.tick()  # no display installed: nothing happens, nothing fails


async def test_each_agent_call_ticks_once_even_from_concurrent_tasks():
    settings, _ = scripted(respond=lambda m: '{"score": 3}')
    ctx = AgentContext.for_role(EvalContext(default_model=settings, cache_path=None, parse_retries=0), "judge", "answers/answer_judge")
    seen: list[int] = []
    with progress.showing(seen.append):
        await asyncio.gather(*(ask(ctx, "t", [HumanMessage(f"q{i}")], Score) for i in range(3)))
        await ask_text(ctx, "t", [HumanMessage("free text")])
    assert sum(seen) == 4


def test_the_runner_shows_calls_as_they_finish(tmp_path, monkeypatch):
    shown: list[tuple[str, int]] = []

    class Bar:  # records what each bar would show
        def __init__(self, *args, desc="", unit="", **kwargs):
            self.unit = unit

        def update(self, n=1):
            shown.append((self.unit, n))

        def set_postfix(self, **kwargs):
            pass

        def close(self):
            pass

    monkeypatch.setattr("tqdm.auto.tqdm", Bar)
    settings, _ = scripted(respond=lambda m: '{"rationale": "ok", "score": 4}')
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0)
    run("answers", DATA, config, progress=True)
    units = [unit for unit, _ in shown]
    assert units.count("call") == 3 and units.count("item") == 3  # one judge call per answer
    assert units.index("call") < units.index("item")  # a call shows before its item finishes
