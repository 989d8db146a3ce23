"""API backends over real HTTP against a local OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = 'The answer agrees with the reference.\n{"rationale": "agrees", "score": 4}'
SECRET = "sk-test-do-not-leak-4242"


def _run(tmp_path: Path, settings: ModelSettings, **kw):
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "c.sqlite"), **kw)
    return run("answers", DATA, config, progress=False)


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_openai_backend_retries_429_and_500_then_succeeds(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE, failures=[429, 500, 503]) as server:
        result = _run(tmp_path, ModelSettings(spec="openai:gpt-4o-mini", base_url=server.base_url), concurrency=1)
    assert server.statuses[:3] == [429, 500, 503] and server.statuses[3:] == [200, 200, 200]
    assert result.metrics["systems"]["demo-bot"]["mean_score"] == 4.0
    body = server.completions[0]
    assert body["model"] == "gpt-4o-mini"
    assert body["response_format"]["type"] == "json_schema"  # native structured output where supported
    assert body["response_format"]["json_schema"]["schema"]["properties"]["score"]["maximum"] == 5
    assert result.metrics["run"]["usage"]["cost_usd"] > 0  # priced from the gpt-4o-mini entry


def test_openai_compatible_backend_without_structured_output(tmp_path):
    with OpenAIStub(respond=lambda body: "Close enough. So score=3, rationale: partly right") as server:
        settings = ModelSettings(spec="openai-compatible:llama3", base_url=server.base_url, structured_output=False)
        result = _run(tmp_path, settings)
    assert len(server.completions) == 3 and "response_format" not in server.completions[0]
    assert result.metrics["systems"]["demo-bot"]["mean_score"] == 3.0
    usage = result.metrics["run"]["usage"]
    # a self-hosted model has no price: its cost is unknown, never a 0.0 that reads as free
    assert usage["cost_usd"] is None and usage["cost_without_prompt_cache_usd"] is None
    assert usage["unpriced_calls"] == 3 and usage["unpriced_models"] == ["openai-compatible:llama3"]
    assert usage["priced_cost_usd"] == 0.0  # what the priced calls cost: there were none
    written = json.loads((result.run_dir / "usage.json").read_text())
    assert written["total"]["cost_usd"] is None
    assert [a["cost_usd"] for a in written["per_agent"].values()] == [None]


def test_anthropic_backend_over_http(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE, failures=[529]) as server:
        result = _run(tmp_path, ModelSettings(spec="anthropic:claude-haiku-4-5", base_url=server.root_url))
    assert server.statuses[0] == 529 and server.statuses.count(200) == 3
    body = server.completions[0]
    system = body["system"]  # blocks: the static instructions carry a prompt-cache breakpoint
    assert "grade" in system[-1]["text"] and system[-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tool_choice"] == {"type": "tool", "name": "AnswerGrade"}  # native structured output
    assert body["tools"][0]["input_schema"]["properties"]["score"]["maximum"] == 5
    assert result.metrics["systems"]["demo-bot"]["mean_score"] == 4.0


def test_anthropic_tool_answers_are_read_as_json(tmp_path):
    tool_use = {"rationale": "matches", "score": 2}
    with OpenAIStub(respond=lambda body: ("", "tool_use", tool_use)) as server:
        result = _run(tmp_path, ModelSettings(spec="anthropic:claude-haiku-4-5", base_url=server.root_url))
    assert result.metrics["systems"]["demo-bot"]["mean_score"] == 2.0


def test_a_truncated_answer_is_flagged_and_counted(tmp_path):
    with OpenAIStub(respond=lambda body: ('{"rationale": "the answer is', "length")) as server:
        result = _run(tmp_path, ModelSettings(spec="openai-compatible:x", base_url=server.base_url), parse_retries=0)
    reliability = json.loads((result.run_dir / "usage.json").read_text())["per_agent"]["answer_judge"]
    assert reliability["truncated"] == 3 and reliability["truncated_share"] == 1.0
    assert result.metrics["systems"]["demo-bot"]["scored"] == 0


def test_an_identical_rerun_sends_nothing(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        settings = ModelSettings(spec="openai-compatible:x", base_url=server.base_url)
        _run(tmp_path, settings, run_id="first")
        _run(tmp_path, settings, run_id="second")
    assert len(server.requests) == 3


def test_secrets_never_reach_run_artifacts(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        result = _run(tmp_path, ModelSettings(spec="openai:gpt-4o-mini", base_url=server.base_url))
    for path in result.run_dir.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="ignore"), path
    assert all(SECRET not in prompt_of(b) for b in server.requests)
