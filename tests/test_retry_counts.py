"""What a call's record says about the requests the SDK sent again: ``rate_limited`` counts
the 429s among the ``retries``, never more (the last refusal of a failed call is neither)."""

from __future__ import annotations

from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.run.folder import read_results
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'


def _usage(tmp_path: Path, failures: list[int]) -> tuple[dict, list[int]]:
    with OpenAIStub(respond=lambda body: GRADE, failures=failures) as server:
        config = RunConfig(model=ModelSettings(spec="openai-compatible:judge", base_url=server.base_url, max_retries=2),
                           output_dir=str(tmp_path / str(len(failures))), cache_path=None, concurrency=1, limit=1)
        result = run("answers", DATA, config, progress=False)
        statuses = list(server.statuses)
    ((call,),) = [row["usage"] for row in read_results(result.run_dir)]
    return call, statuses


def test_a_call_refused_to_the_end_counts_only_the_429s_it_sent_again(tmp_path):
    call, statuses = _usage(tmp_path, [429] * 5)
    assert statuses == [429, 429, 429]  # the first attempt and two retries
    assert call["status"] == "error" and call["retries"] == 2 and call["rate_limited"] == 2


def test_the_429s_counted_are_those_sent_again(tmp_path):
    call, statuses = _usage(tmp_path, [429, 500, 429])
    assert statuses == [429, 500, 429]
    assert call["status"] == "error" and call["retries"] == 2 and call["rate_limited"] == 1  # the last 429 was not retried
    call, statuses = _usage(tmp_path, [500, 429])
    assert statuses == [500, 429, 200]
    assert call["status"] == "ok" and call["retries"] == 2 and call["rate_limited"] == 1
