"""The cache and the run id never mix things up: answers of one server are never served
for another, only answers that ended `ok` are replayed, edited data is a new run, and
one process at a time writes a run folder."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.config import ConfigError
from dialeval.run.folder import RunLock, RunLocked, read_results
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cache-tests-000")
    for var in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)




def _grade(score: int):
    return lambda body: json.dumps({"rationale": "r", "score": score})


def test_two_servers_with_one_model_name_never_share_answers(tmp_path):
    with OpenAIStub(respond=_grade(2)) as first, OpenAIStub(respond=_grade(5)) as second:
        one = run("answers", DATA, http_config(tmp_path, {"spec": "openai-compatible:same", "base_url": first.base_url}, run_id="a"), progress=False)
        two = run("answers", DATA, http_config(tmp_path, {"spec": "openai-compatible:same", "base_url": second.base_url}, run_id="b"), progress=False)
    assert len(second.requests) == 3  # nothing came from the first server's cache entries
    assert one.metrics["systems"]["demo-bot"]["mean_score"] == 2.0
    assert two.metrics["systems"]["demo-bot"]["mean_score"] == 5.0


def test_the_endpoint_from_openai_base_url_is_part_of_the_key(tmp_path, monkeypatch):
    with OpenAIStub(respond=_grade(2)) as first, OpenAIStub(respond=_grade(5)) as second:
        monkeypatch.setenv("OPENAI_BASE_URL", first.base_url)
        run("answers", DATA, http_config(tmp_path, {"spec": "openai:gpt-4o-mini"}, run_id="a"), progress=False)
        monkeypatch.setenv("OPENAI_BASE_URL", second.base_url)
        two = run("answers", DATA, http_config(tmp_path, {"spec": "openai:gpt-4o-mini"}, run_id="b"), progress=False)
    assert len(first.requests) == 3 and len(second.requests) == 3
    assert two.metrics["systems"]["demo-bot"]["mean_score"] == 5.0


def test_a_malformed_answer_is_not_replayed_from_the_cache(tmp_path):
    answers = iter(["I will not grade this."] * 3 + ['{"rationale": "r", "score": 4}'] * 3)
    with OpenAIStub(respond=lambda body: next(answers)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url})
        run("answers", DATA, config.model_copy(update={"run_id": "first"}), progress=False)
        again = run("answers", DATA, config.model_copy(update={"run_id": "second"}), progress=False)
    assert len(server.requests) == 6  # the unparsed answers were asked again, not replayed
    assert again.metrics["systems"]["demo-bot"]["scored"] == 3


def test_an_ok_answer_is_replayed_without_a_request(tmp_path):
    with OpenAIStub(respond=_grade(4)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url})
        run("answers", DATA, config.model_copy(update={"run_id": "first"}), progress=False)
        again = run("answers", DATA, config.model_copy(update={"run_id": "second"}), progress=False)
    assert len(server.requests) == 3 and again.metrics["run"]["usage"]["cached"] == 3


def test_a_reply_that_crashes_the_reader_fails_the_item_and_is_not_replayed(tmp_path, monkeypatch):
    from dialeval.protocols.answers.judge import AnswerGrade

    def explode(cls, *args, **kwargs):  # a reader bug triggered by one reply
        raise ZeroDivisionError("reader bug")

    replies = iter(['{"rationale": "r", "score": 4}'] * 6)
    with OpenAIStub(respond=lambda body: next(replies)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url})
        with monkeypatch.context() as patch:
            patch.setattr(AnswerGrade, "model_validate", classmethod(explode))
            broken = run("answers", DATA, config, progress=False)
        fixed = run("answers", DATA, config, progress=False)
    assert broken.failed == 3 and "ZeroDivisionError" in broken.summary
    assert len(server.requests) == 6 and fixed.complete  # the crashing replies were asked again


def test_editing_the_data_file_makes_a_new_run(tmp_path):
    data = tmp_path / "answers.jsonl"
    shutil.copy(DATA, data)
    with OpenAIStub(respond=lambda body: _grade(1 if "bicycle" in json.dumps(body) else 4)(body)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url})
        before = run("answers", data, config, progress=False)
        data.write_text(data.read_text().replace("The chain and the rear cogs", "Your bicycle chain and the rear cogs"))
        after = run("answers", data, config, progress=False)
    assert after.run_dir != before.run_dir
    assert before.metrics["systems"]["demo-bot"]["mean_score"] == 4.0
    assert after.metrics["systems"]["demo-bot"]["mean_score"] == 3.0


def test_edited_data_under_an_explicit_run_id_is_refused(tmp_path):
    data = tmp_path / "answers.jsonl"
    shutil.copy(DATA, data)
    with OpenAIStub(respond=_grade(4)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, run_id="mine")
        run("answers", data, config, progress=False)
        data.write_text(data.read_text().replace("bike", "bicycle"))
        with pytest.raises(ConfigError, match="different configuration or data"):
            run("answers", data, config, progress=False)


def _hold_lock(run_dir: str, ready, release) -> None:
    with RunLock(Path(run_dir)):
        ready.set()
        release.wait(20)


def test_a_second_process_on_the_same_run_folder_stops_and_names_the_holder(tmp_path, capsys):
    with OpenAIStub(respond=_grade(4)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, run_id="shared")
        run_dir = tmp_path / "runs" / "shared"
        run_dir.mkdir(parents=True)
        ctx = multiprocessing.get_context("fork")
        ready, release = ctx.Event(), ctx.Event()
        holder = ctx.Process(target=_hold_lock, args=(str(run_dir), ready, release))
        holder.start()
        try:
            assert ready.wait(20)
            with pytest.raises(RunLocked, match=rf"in use by another dialeval process \(pid {holder.pid}\)"):
                run("answers", DATA, config, progress=False)
        finally:
            release.set()
            holder.join(20)
        assert server.requests == []
        assert run("answers", DATA, config, progress=False).complete  # free again once the holder ended


def test_fresh_evaluates_every_item_again_and_keeps_the_old_results(tmp_path, capsys):
    with OpenAIStub(respond=_grade(4)) as server:
        config = tmp_path / "run.yaml"
        config.write_text(f"cache_path: {tmp_path / 'cache.sqlite'}\n")
        args = ["run", "answers", "--data", str(DATA), "--model", "openai-compatible:judge", "--base-url", server.base_url,
                "--config", str(config), "--output-dir", str(tmp_path), "--no-progress"]
        assert main(args) == 0
        assert main(args) == 0
        assert len(server.requests) == 3  # resumed: nothing to do, nothing sent
        assert main([*args, "--fresh"]) == 0
        assert len(server.requests) == 6  # every item again, cache not read
    run_dir = next(p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("answers-"))
    assert len(read_results(run_dir)) == 3 and len(list(run_dir.glob("results.*.jsonl"))) == 1
