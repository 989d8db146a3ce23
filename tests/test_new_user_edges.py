"""Small things a new user tripped over, each checked the way they met it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.config import RunConfig
from dialeval.report.compare import compare_runs
from dialeval.report.results import read_run
from dialeval.evaluation import run
from tests.helpers import scripted

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"


def _answers(tmp_path: Path, system: str) -> Path:
    rows = [json.loads(line) for line in (FIXTURES / "answers_demo.jsonl").read_text().splitlines()]
    path = tmp_path / f"{system}.jsonl"
    path.write_text("".join(json.dumps({**r, "system": system}) + "\n" for r in rows))
    return path


def test_runs_with_derived_names_are_told_apart_by_system_judge_and_date(tmp_path):
    settings, _ = scripted(respond=lambda m: '{"rationale": "ok", "score": 4}')
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0)
    a = run("answers", _answers(tmp_path, "bot-a"), config, progress=False).run_dir
    b = run("answers", _answers(tmp_path, "bot-b"), config, progress=False).run_dir
    assert a.name.startswith("answers-") and a.name != b.name  # folder names are hashes

    label = read_run(a).label
    benchmark, system, judge, when = label.split(" · ")
    assert (benchmark, system, judge) == ("answers", "bot-a", settings.spec)
    assert when.endswith(" UTC") and when[:2] == "20"

    result = compare_runs([a, b], tmp_path / "cmp", plots=False)
    assert [r["label"] for r in result["runs"]] == [read_run(a).label, read_run(b).label]
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "| answers · bot-a · " in table and "| answers · bot-b · " in table


def test_a_run_named_by_its_user_keeps_that_name(tmp_path):
    settings, _ = scripted(respond=lambda m: '{"rationale": "ok", "score": 4}')
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, run_id="my-judge")
    data = read_run(run("answers", _answers(tmp_path, "bot"), config, progress=False).run_dir)
    assert data.label == "my-judge"
    assert data.description.startswith(f"answers · bot · {settings.spec} · ")


def test_compare_names_only_the_models_a_run_called(tmp_path):
    settings, _ = scripted(respond=lambda m: '{"rationale": "ok", "score": 4}')
    config = RunConfig(model={"spec": "openai:never-called"}, models={"judge": settings}, output_dir=str(tmp_path / "runs"),
                       cache_path=None, parse_retries=0)  # the default model is configured, never asked
    a = run("answers", _answers(tmp_path, "bot-a"), config, progress=False).run_dir
    b = run("answers", _answers(tmp_path, "bot-b"), config, progress=False).run_dir
    result = compare_runs([a, b], tmp_path / "cmp", plots=False)
    assert result["runs"][0]["called"] == {"answer_judge": settings.spec}
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "never-called" not in table and f"answer_judge: `{settings.spec}`" in table


def test_rerunning_a_finished_run_says_there_is_nothing_to_do(tmp_path, capsys):
    argv = ["run", "answers", "--data", str(FIXTURES / "answers_demo.jsonl"), "--model", "dry-run:gpt-4o-mini",
            "--output-dir", str(tmp_path), "--no-cache", "--no-progress"]
    assert main(argv) == 0
    assert "nothing to do" not in capsys.readouterr().err
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "dialeval: nothing to do: all 3 items done in " in err


def test_a_misspelt_model_role_gets_a_suggestion(tmp_path, capsys):
    config = tmp_path / "run.yaml"
    config.write_text("models:\n  jugde: {spec: dry-run}\n")
    code = main(["run", "answers", "--data", str(FIXTURES / "answers_demo.jsonl"), "--config", str(config),
                 "--output-dir", str(tmp_path), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "field 'models.jugde'" in err and "(did you mean 'judge'?)" in err


@pytest.mark.parametrize("run_id, bad", [("a b", "' '"), ("judge#2", "'#'"), ("50%", "'%'")])
def test_a_run_id_a_link_would_have_to_encode_is_refused_before_anything_is_written(tmp_path, capsys, run_id, bad):
    code = main(["run", "answers", "--data", str(FIXTURES / "answers_demo.jsonl"), "--model", "dry-run",
                 "--output-dir", str(tmp_path), "--run-id", run_id, "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--run-id {run_id!r}" in err and f"(not {bad})" in err and "e.g. --run-id " in err
    assert not list(tmp_path.iterdir())


def test_a_run_id_in_letters_of_any_script_is_accepted(tmp_path):
    config = RunConfig(model={"spec": "dry-run"}, output_dir=str(tmp_path), cache_path=None, run_id="juge-été_2.1")
    assert run("answers", FIXTURES / "answers_demo.jsonl", config, progress=False).run_dir.name == "juge-été_2.1"


def test_records_of_a_json_array_count_from_1_too(tmp_path):
    """JSONL lines and records: test_first_hour_messages; here an array, which has no lines."""
    from dialeval.errors import DataError
    from dialeval.protocols.answers.data import load_answers

    array = tmp_path / "answers.json"
    array.write_text(json.dumps([{"id": "a", "question": "q", "reference": "r", "answer": "x"}, {"id": "b", "question": "q"}]))
    with pytest.raises(DataError, match=r"answers\.json, record 2 \(id='b'\), field 'reference'") as err:
        load_answers(array)
    assert err.value.record == "1 (id='b')"  # code keeps the index it passed


def test_no_preflight_still_stops_on_a_missing_key_before_anything_is_written(tmp_path, monkeypatch):
    """``--no-preflight`` skips the round trip to the server, not the key every request needs."""
    from dialeval.config import ConfigError, ModelSettings, RunConfig
    from dialeval.evaluation import run

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = RunConfig(model=ModelSettings(spec="openai:gpt-4o-mini"), preflight=False, output_dir=str(tmp_path / "runs"))
    data = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
    with pytest.raises(ConfigError, match=r"field 'model': model openai:gpt-4o-mini: no API key; set \$OPENAI_API_KEY"):
        run("answers", data, config, progress=False)
    assert not (tmp_path / "runs").exists()


def test_an_extrapolated_cost_is_never_a_zero_that_means_something_else():
    """A file's cost extrapolated from a run: unknown without a price, not measured when
    the answers came from the response cache (they cost nothing now), else the figure."""
    from dialeval.models.usage import estimate_text

    assert estimate_text({"cost_known": False}, 0.0) == "unknown"
    assert estimate_text({"cost_known": True, "from_cache": True}, 0.0) == "n/a (answers from the response cache)"
    assert estimate_text({"cost_known": True, "from_cache": False}, 0.01234) == "0.0123"
