"""Progress inside an item: every finished model call ticks the display the runner shows."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from dialeval.models import progress
from dialeval.agents.base import AgentContext, ask, ask_text
from dialeval.config import EvalContext, RunConfig
from dialeval.evaluation import run
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


def _recording_bars(monkeypatch) -> list[dict]:
    """Replace tqdm by bars that record their total and every step."""
    bars: list[dict] = []

    class Bar:
        def __init__(self, *args, desc="", unit="", total=None, **kwargs):
            self.state = {"unit": unit, "total": total, "steps": 0}
            bars.append(self.state)

        def update(self, n=1):
            self.state["steps"] += n

        def set_postfix(self, **kwargs):
            pass

        def close(self):
            pass

    monkeypatch.setattr("tqdm.auto.tqdm", Bar)
    return bars


def test_the_call_bar_has_a_total_where_the_protocol_knows_it(tmp_path, monkeypatch):
    bars = _recording_bars(monkeypatch)
    config = RunConfig(model={"spec": "dry-run"}, output_dir=str(tmp_path / "runs"), cache_path=None)
    run("answers", DATA, config, progress=True)
    (calls,) = [b for b in bars if b["unit"] == "call"]
    assert calls["total"] == 3 and calls["steps"] == 3  # one judge call per answer


def test_mmdu_counts_two_calls_a_turn_when_the_responder_answers_and_one_when_answers_are_given(tmp_path, monkeypatch):
    fixtures = DATA.parent
    bars = _recording_bars(monkeypatch)
    config = RunConfig(model={"spec": "dry-run"}, output_dir=str(tmp_path / "runs"), cache_path=None, run_id="answered")
    run("mmdu", fixtures / "mmdu_demo.json", config, progress=True)
    given = config.model_copy(update={"run_id": "given", "options": {"predictions": str(fixtures / "mmdu_demo_predictions.json")}})
    run("mmdu", fixtures / "mmdu_demo.json", given, progress=True)
    answered, judged_only = [b for b in bars if b["unit"] == "call"]
    assert answered["total"] == answered["steps"] == 2 * judged_only["total"]
    assert judged_only["total"] == judged_only["steps"] > 0


def test_a_protocol_without_a_fixed_depth_shows_a_bare_count():
    assert progress.known_total([2, None, 3]) is None
    assert progress.known_total([2, 3]) == 5


def test_the_bar_says_why_the_request_limit_fell():
    from dialeval.models.backends.http import limit_hooks
    from dialeval.models.concurrency import AdaptiveLimit

    limit = AdaptiveLimit(64)
    assert progress.limit_text(limit.current, limit.maximum, limit.reason) == "64"

    class Response:  # what httpx hands the hook: Anthropic's "overloaded", with a Retry-After
        status_code = 529
        headers = {"retry-after": "2"}

    async def respond():
        limit._in_flight = 1  # the refused request held a place; readmit gives it back and waits
        hook = limit_hooks(limit)["response"][0]
        await hook(Response())

    asyncio.run(asyncio.wait_for(respond(), timeout=30))
    assert progress.limit_text(limit.current, limit.maximum, limit.reason) == "64→32 (HTTP 529, Retry-After 2s)"


def test_the_bar_shows_a_models_request_limit_only_where_it_bounds_the_run_more_than_concurrency(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from dialeval.models import client
    from dialeval.run.tally import RunTally

    class Bar:
        postfix: dict = {}

        def set_postfix(self, refresh: bool = True, **values):
            Bar.postfix = values

        def close(self) -> None:
            pass

    limits = {"openai:gpt-4o-mini": SimpleNamespace(current=64, maximum=64, reason=None)}
    monkeypatch.setattr(client, "active_limits", lambda: limits)
    tally = RunTally(tmp_path / "results.jsonl", {}, Bar(), concurrency=4)
    tally.show()
    assert "limit" not in Bar.postfix  # --concurrency 4 is the bound: `limit=64` would read as if it were ignored
    limits["openai:gpt-4o-mini"] = SimpleNamespace(current=2, maximum=64, reason="HTTP 429")
    tally.show()
    assert Bar.postfix["limit"] == "64→2 (HTTP 429)"  # the server's 429s now bound it
    tally.close()
