"""The run folder: whatever a server sends is stored, bad paths stop before anything is
written, and broken stores are named at start instead of failing every item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.errors import RunError
from dialeval.models import prompt_store
from dialeval.models.prompt_store import load_prompts
from dialeval.protocols.mmdu.metrics import DIMENSIONS
from dialeval.report.viewer import write_run
from dialeval.run.folder import read_results, results_by_id
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, last_user_text
from tests.helpers import http_config

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
ANSWERS = FIXTURES / "answers_demo.jsonl"
MMDU = FIXTURES / "mmdu_demo.json"
LONE = "\ud800"  # a lone UTF-16 surrogate: UTF-8 cannot encode it
GRADE = '{"rationale": "agrees", "score": 4}'


def test_a_lone_surrogate_in_a_judge_reply_is_stored_and_judged(tmp_path):
    with OpenAIStub(respond=lambda body: '{"rationale": "odd ' + LONE + ' byte", "score": 4}') as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url})
        result = run("answers", ANSWERS, config, progress=False)
        again = run("answers", ANSWERS, config.model_copy(update={"run_id": "from-cache"}), progress=False)
    assert result.complete and result.metrics["systems"]["demo-bot"]["mean_score"] == 4.0
    rows = read_results(result.run_dir)
    assert [r["escaped_characters"] for r in rows] == [2, 2, 2]  # in the parsed value and in the raw reply
    call = rows[0]["result"]["calls"][0]
    assert call["value"]["rationale"] == f"odd {LONE} byte" and LONE in call["raw"]  # read back unchanged
    assert (result.run_dir / "results.jsonl").read_bytes().decode("utf-8").count("\\ud800") == 6
    # the response cache kept the answers: the second run was served from it
    assert again.complete and len(server.requests) == 3
    assert [r["result"]["calls"][0]["cached"] for r in read_results(again.run_dir)] == [True] * 3
    write_run(result.run_dir)  # and the viewer shows it
    assert "odd \ufffd byte" in (result.run_dir / "view" / "items" / "00001.html").read_text(encoding="utf-8")


def _mmdu_reply(body: dict) -> str:
    system = json.dumps(body["messages"][0])
    if "impartial grader" in system:
        return json.dumps({"explanation": "fine", "scores": {d: 6 for d in DIMENSIONS}})
    return f"An answer with a broken character {LONE} inside"


def test_a_lone_surrogate_in_an_answer_under_test_reaches_the_judge_and_the_prompt_store(tmp_path):
    with OpenAIStub(respond=_mmdu_reply) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url}, limit=1)
        result = run("mmdu", MMDU, config, progress=False)
    assert result.complete, result.summary
    judged = [b for b in server.completions if "impartial grader" in json.dumps(b["messages"][0])]
    assert judged and all("broken character \ufffd inside" in last_user_text(b) for b in judged)  # sent as U+FFFD
    [row] = read_results(result.run_dir)
    assert row["escaped_characters"] > 0
    prompts = load_prompts(result.run_dir)  # the judge prompts holding the answer were stored
    assert any(LONE in json.dumps(p, ensure_ascii=False) for p in prompts.values())


def _cli(tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "answers", "--data", str(ANSWERS), "--model", "dry-run", "--output-dir", str(tmp_path / "runs"),
            "--no-progress", "--no-cache", *extra]


@pytest.mark.parametrize("name", ["results.jsonl", ".lock"])
def test_a_folder_where_a_run_file_belongs_stops_with_its_path(tmp_path, capsys, name):
    (tmp_path / "runs" / "mine" / name).mkdir(parents=True)
    assert main(_cli(tmp_path, "--run-id", "mine")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(tmp_path / "runs" / "mine" / name) in err
    assert sorted(p.name for p in (tmp_path / "runs" / "mine").iterdir()) == [name]  # nothing written


def test_a_file_where_the_run_folder_belongs_stops_with_its_path(tmp_path, capsys):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "mine").write_text("notes")
    assert main(_cli(tmp_path, "--run-id", "mine")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{tmp_path / 'runs' / 'mine'}: is not a folder" in err
    assert (tmp_path / "runs" / "mine").read_text() == "notes"


def test_a_slash_in_the_run_id_stops_before_anything_is_written(tmp_path, capsys):
    assert main(_cli(tmp_path, "--run-id", "a/b")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--run-id 'a/b'" in err
    assert not (tmp_path / "runs").exists()


def test_a_corrupt_response_cache_is_named_at_start_with_the_fix(tmp_path):
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"this is not a database, just bytes " * 200)
    with OpenAIStub(respond=lambda body: GRADE) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url})
        with pytest.raises(RunError, match=rf"{cache}: not a usable SQLite database .*mv {cache} {cache}.broken"):
            run("answers", ANSWERS, config, progress=False)
        assert server.requests == []
        cache.rename(tmp_path / "cache.sqlite.broken")
        assert run("answers", ANSWERS, config, progress=False).complete  # the offered fix works


def test_a_corrupt_prompt_store_is_named_at_start(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, limit=1)
        first = run("answers", ANSWERS, config, progress=False)
        prompt_store._close_all()  # as when the run ended: the next run is another process
        store = first.run_dir / "prompts.sqlite"
        store.write_bytes(b"\0garbage" * 500)
        with pytest.raises(RunError, match=rf"{store}: not a usable SQLite database"):
            run("answers", ANSWERS, config.model_copy(update={"limit": None}), progress=False)
        assert len(server.requests) == 1
    assert list(results_by_id(first.run_dir)) == ["bike-1"]  # --limit 1: the first id in natural order


def test_fresh_twice_in_one_second_keeps_both_earlier_sets_aside(tmp_path):
    from dialeval.run.folder import set_aside_earlier_results

    def a_finished_run(label: str) -> None:
        (tmp_path / "results.jsonl").write_text(label)
        (tmp_path / "metrics.json").write_text(label)
        (tmp_path / "plots").mkdir()
        (tmp_path / "plots" / "scores.png").write_text(label)

    a_finished_run("first")
    set_aside_earlier_results(tmp_path, "20261124-130000")
    a_finished_run("second")
    set_aside_earlier_results(tmp_path, "20261124-130000")  # the same second
    assert (tmp_path / "results.20261124-130000.jsonl").read_text() == "first"
    assert (tmp_path / "plots.20261124-130000" / "scores.png").read_text() == "first"
    assert (tmp_path / "metrics.20261124-130000-2.json").read_text() == "second"
    assert (tmp_path / "plots.20261124-130000-2" / "scores.png").read_text() == "second"
    assert not (tmp_path / "results.jsonl").exists() and not (tmp_path / "plots").exists()
