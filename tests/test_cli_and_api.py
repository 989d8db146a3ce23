"""The command line and the Python API, as a user calls them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dialeval
import dialeval.config
from dialeval.cli import main
from dialeval.testing.openai_server import OpenAIStub

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"


def test_run_prints_the_report_and_report_rebuilds_it(tmp_path, capsys):
    code = main(["run", "answers", "--data", str(DATA), "--model", "dry-run:gpt-4o-mini", "--output-dir", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Dry run" in out and "## Results" in out and "## Judge reliability" in out
    run_dir = next(tmp_path.iterdir())
    bot = json.loads((run_dir / "metrics.json").read_text())["systems"]["demo-bot"]
    assert (bot["items"], bot["scored"], bot["unparsed"]) == (3, 3, 0)
    (run_dir / "report.md").unlink()
    assert main(["report", str(run_dir)]) == 0
    assert (run_dir / "report.md").exists()


def test_a_bare_dialeval_shows_the_help_and_version_names_the_release(capsys):
    assert main([]) == 0
    choices = capsys.readouterr().out.split("{", 1)[1].split("}", 1)[0].split(",")  # the subcommands, as listed
    assert {"run", "report", "list", "compare", "view", "metrics", "gate", "import", "export", "trust"} <= set(choices)
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("dialeval 0.")


def test_list_names_benchmarks_agents_and_backends(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("kgds", "vdact", "mmrc", "answers", "kgds.fact_verifier", "vdact.session_judge", "mmrc.notetaker", "dry-run"):
        assert name in out


def test_bad_input_exits_2_with_a_message_naming_the_problem(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("concurrency: -1\n")
    assert main(["run", "answers", "--data", str(DATA), "--config", str(bad)]) == 2
    assert "bad.yaml: field 'concurrency'" in capsys.readouterr().err
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "question": "q"\n')
    assert main(["run", "answers", "--data", str(broken), "--model", "dry-run", "--output-dir", str(tmp_path)]) == 2
    assert "broken.jsonl, record 1 (line 1): not valid JSON" in capsys.readouterr().err
    assert main(["run", "nope", "--data", str(DATA)]) == 2
    assert "unknown benchmark 'nope'; available: answers, " in capsys.readouterr().err
    assert main(["run", "answer", "--data", str(DATA)]) == 2
    assert "unknown benchmark 'answer'; did you mean 'answers'? Available: " in capsys.readouterr().err


def test_options_on_the_command_line_are_json_values(tmp_path):
    assert main(["run", "kgds", "--data", "src/dialeval/fixtures/kgds_demo.json", "--model", "dry-run", "--output-dir", str(tmp_path),
                 "--no-progress", "--option", 'patterns=["ebs"]', "--option", "reflection_rounds=0"]) == 0
    config = json.loads((next(tmp_path.iterdir()) / "config.json").read_text())
    assert config["options"] == {"patterns": ["ebs"], "reflection_rounds": 0}


def test_evaluate_twice_in_one_process_against_an_api_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIStub(respond=lambda body: '{"rationale": "ok", "score": 5}') as server:
        model = {"spec": "openai:gpt-4o-mini", "base_url": server.base_url}
        first = dialeval.evaluate("answers", DATA, model=model, output_dir=str(tmp_path), cache_path=None)
        second = dialeval.evaluate("answers", DATA, model=model, output_dir=str(tmp_path), cache_path=None, run_id="again")
    assert first.metrics["systems"] == second.metrics["systems"]
    assert second.metrics["systems"]["demo-bot"]["mean_score"] == 5.0
    assert len(server.requests) == 6  # each run sent its own requests: no shared, closed pool


def test_evaluate_takes_base_url_beside_model_as_the_cli_does(tmp_path):
    with OpenAIStub(respond=lambda body: '{"rationale": "ok", "score": 4}') as server:
        result = dialeval.evaluate("answers", DATA, model="openai-compatible:judge", base_url=server.base_url,
                                   output_dir=str(tmp_path), cache_path=None)
    assert result.complete and len(server.requests) == 3
    with pytest.raises(dialeval.config.ConfigError, match="give model= too"):
        dialeval.evaluate("answers", DATA, base_url=server.base_url)


def test_a_misspelt_evaluate_keyword_is_named_with_its_fix_before_anything_runs(tmp_path):
    with pytest.raises(dialeval.config.ConfigError) as raised:
        dialeval.evaluate("answers", DATA, model="dry-run", concurency=3, output_dir=str(tmp_path))
    assert str(raised.value).startswith("evaluate() arguments: field 'concurency': unknown key; valid: ")
    assert str(raised.value).endswith("(did you mean 'concurrency'?)")
    assert not any(tmp_path.iterdir())
    with pytest.raises(dialeval.config.ConfigError) as raised:  # base_url= is a keyword too, not a RunConfig field
        dialeval.evaluate("answers", DATA, model="openai-compatible:x", baseurl="http://127.0.0.1:9/v1")
    assert ", plugins, base_url (did you mean 'base_url'?)" in str(raised.value)


def test_list_lines_up_its_agent_columns(capsys):
    assert main(["list"]) == 0
    agents = capsys.readouterr().out.split("Agents (role -> name):\n")[1].split("\n\n")[0].splitlines()
    starts = {line.index(" " + line.split()[2] + " ") for line in agents}  # where each line's agent name begins
    assert len(agents) > 10 and len(starts) == 1


def test_a_misspelt_flag_gets_the_commands_usage_and_the_closest_flag(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["run", "answers", "--data", str(DATA), "--concurency=3"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.startswith("usage: dialeval run ")
    assert err.rstrip().endswith("dialeval run: error: unrecognized arguments: --concurency=3 (did you mean '--concurrency'?)")
    with pytest.raises(SystemExit):
        main(["list", "extra"])
    assert capsys.readouterr().err.rstrip().endswith("dialeval list: error: unrecognized arguments: extra")


def test_list_names_every_model_role_a_config_may_set(capsys):
    """Roles called inside another agent's node (the dialogue judge's note-taker) take a model
    of their own too; `list` names them beside the agents."""
    assert main(["list"]) == 0
    roles = capsys.readouterr().out.split("Model roles (the keys of `models:` in a config; docs/models.md):\n")[1]
    by_benchmark = dict(line.split(maxsplit=1) for line in roles.split("\n\n")[0].splitlines())
    assert by_benchmark["[dialogue]"] == "judge, notetaker, fact_checker, pairwise_judge"
    assert by_benchmark["[mmrc]"].startswith("responder, notetaker, judge")


def test_load_dataset_and_list_benchmarks():
    items = dialeval.load_dataset("answers", DATA)
    assert [i.id for i in items] == ["kitchen-1", "kitchen-2", "bike-1"]
    assert {"kgds", "vdact", "mmrc", "answers"} <= set(dialeval.list_benchmarks())
