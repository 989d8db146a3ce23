"""Identical requests within one run are sent once and shared; ``sample_index`` makes a
request distinct on purpose. Over HTTP, against the test server, which counts what reaches it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.agents.base import AgentContext, ask
from dialeval.config import EvalContext, ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.models.single_flight import Flights, current_flights
from dialeval.protocols.answers.judge import AnswerGrade
from dialeval.testing.openai_server import OpenAIStub
from langchain_core.messages import HumanMessage

GRADE = json.dumps({"rationale": "scripted", "score": 4})


def _data(folder: Path) -> Path:
    """Two records that differ only by id, so their judge prompts are the same; and a third."""
    same = {"question": "What is the capital of France?", "reference": "Paris", "answer": "Paris", "system": "bot"}
    rows = [{"id": "a", **same}, {"id": "b", **same}, {"id": "c", **same, "answer": "Lyon"}]
    path = folder / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("concurrency", [1, 4])  # one after the other, and at once
def test_identical_judge_prompts_of_a_run_are_sent_once_and_counted_as_deduplicated(tmp_path, concurrency):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, concurrency=concurrency, preflight=False)
        result = run("answers", _data(tmp_path), config, progress=False)
        sent = len(server.requests)
    assert sent == 2  # the two identical prompts went once
    assert sorted(r["score"] for r in result.records) == [4, 4, 4]  # every item has its (shared) answer
    total = result.metrics["run"]["usage"]
    assert (total["calls"], total["requests"], total["deduplicated"], total["cached"]) == (3, 2, 1, 0)
    assert "sent once and shared: 1 request was not sent" in result.report_path.read_text()


async def _ask_twice(context: EvalContext, indices: tuple[int | None, int | None]) -> list[str]:
    ctx = AgentContext.for_role(context, "judge", "answers/answer_judge")
    answers = [await ask(ctx, "sampler", [HumanMessage("Grade this.")], AnswerGrade, sample_index=k) for k in indices]
    return [a.call.raw for a in answers]


@pytest.mark.parametrize(("indices", "sent"), [((None, None), 1), ((0, 1), 2)])
def test_sample_index_makes_an_identical_prompt_a_distinct_request(indices, sent):
    import asyncio

    answers = iter([json.dumps({"rationale": f"sample {k}", "score": k}) for k in (2, 5)])
    with OpenAIStub(respond=lambda body: next(answers)) as server:
        settings = ModelSettings(spec="openai-compatible:sampler", base_url=server.base_url,
                                 temperature=1.0, max_retries=0)
        context = EvalContext(default_model=settings, cache_path=None)

        async def in_a_run() -> list[str]:
            current_flights.set(Flights())  # what the runner opens for each run
            return await _ask_twice(context, indices)

        raws = asyncio.run(in_a_run())
        assert len(server.requests) == sent
    assert len(set(raws)) == sent  # two samples differ; one shared answer is the same twice


@pytest.mark.timeout(120)
def test_identical_batched_calls_are_left_to_the_batch_round_which_shares_them_itself(tmp_path):
    """A batch round starts once every item waits on it; an item waiting on another's shared
    call would never count as waiting (the run hung)."""
    model = ModelSettings(spec="dry-run:openai:gpt-4o-mini", batch=True)
    config = RunConfig(model=model, output_dir=str(tmp_path / "runs"), cache_path=None, concurrency=4)
    result = run("answers", _data(tmp_path), config, progress=False)
    assert result.complete and result.metrics["run"]["batches"]["rounds"] == 1
