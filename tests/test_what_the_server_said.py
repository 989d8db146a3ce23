"""What the server said is what the run records: a model that declines is ``unparsed``
with reason "refused" and the refusal's text as the raw answer (never an "empty answer"
with raw ``""``), and a request the server refused (401) counts as a request sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, Refusal
from tests.helpers import http_config, keys_only

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
SAID = "I can't help with grading this."


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    keys_only(monkeypatch, "sk-refusal-test-1111", "sk-refusal-test-2222")


def judge_calls(run_dir: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return [call for row in rows for call in row["result"]["calls"]]


def test_an_openai_refusal_keeps_its_text_and_says_refused(tmp_path):
    with OpenAIStub(respond=lambda body: Refusal(SAID)) as server:
        config = http_config(tmp_path, {"spec": "openai:gpt-4o-mini", "base_url": server.base_url})
        config = config.model_copy(update={"parse_retries": 2})
        result = run("answers", DATA, config, progress=False)
    calls = judge_calls(result.run_dir)
    assert [(c["status"], c["reason"], c["raw"]) for c in calls] == [("unparsed", "refused", SAID)] * 3
    assert len(server.requests) == 3  # no corrective retry: a format reminder does not cure a refusal
    assert result.failed == 0 and result.metrics["systems"]["demo-bot"]["scored"] == 0


def test_an_anthropic_refusal_says_refused(tmp_path):
    with OpenAIStub(respond=lambda body: Refusal("")) as server:
        config = http_config(tmp_path, {"spec": "anthropic:claude-haiku-4-5", "base_url": server.root_url})
        result = run("answers", DATA, config, progress=False)
    assert {(c["status"], c["reason"]) for c in judge_calls(result.run_dir)} == {("unparsed", "refused")}


def test_requests_refused_with_401_count_as_sent(tmp_path):
    many = tmp_path / "many.jsonl"
    many.write_text("".join(
        json.dumps({"id": f"q{i}", "question": "q", "reference": "r", "answer": "a", "system": "s"}) + "\n" for i in range(6)
    ))
    with OpenAIStub(respond=lambda body: '{"rationale": "ok", "score": 4}', api_key="another-key") as server:
        config = http_config(tmp_path, {"spec": "openai:gpt-4o-mini", "base_url": server.base_url}, concurrency=1, preflight=False)
        result = run("answers", many, config, progress=False)
        reached = len(server.requests)
    usage = json.loads((result.run_dir / "usage.json").read_text())
    assert reached == 3 and result.failed == 3  # the circuit breaker stopped the run after three refusals
    assert usage["total"]["requests"] == usage["per_agent"]["answer_judge"]["requests"] == reached
