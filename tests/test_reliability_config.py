"""Configuration and input mistakes stop before the first call, with exit code 2 and a
message naming the file, the field and the valid choices; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli import main

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
KGDS = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "kgds_demo.json"


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)


def _run(tmp_path: Path, config_text: str | None, *args: str, data: Path | None = DATA, benchmark: str = "answers") -> int:
    argv = ["run", benchmark, "--output-dir", str(tmp_path / "runs"), "--no-progress", *args]
    if data is not None:
        argv += ["--data", str(data)]
    if config_text is not None:
        path = tmp_path / "run.yaml"
        path.write_text(config_text)
        argv += ["--config", str(path)]
    return main(argv)


@pytest.mark.parametrize(
    "config_text, expected",
    [
        ("model: dry-run\nmodels: {jduge: dry-run}\n", "run.yaml: field 'models.jduge': answers has no model role 'jduge'; valid: judge"),
        ("model: dry-run\nagents: {judge: kgds.summarizer}\n", "field 'agents.judge': no agent named 'kgds.summarizer' for judge; valid: answer_judge"),
        ("model: dry-run\nagents: {grader: answer_judge}\n", "field 'agents.grader': answers has no agent role 'grader'; valid: judge"),
        ("model: dry-run\ntemplates: {judges: answers/answer_judge}\n", "field 'templates.judges': answers has no template 'judges'; valid: judge"),
        ("model: dry-run\ntemplates: {judge: prompts/missing.txt}\n", "field 'templates.judge': prompt template not found: 'prompts/missing.txt'"),
        ("model: openai-compatible:qwen\n", "field 'model': model openai-compatible:qwen: openai-compatible models need base_url"),
        ("model: hf:./no/such/model-folder\n", "field 'model': model spec 'hf:./no/such/model-folder': no such file or folder"),
    ],
)
def test_config_mistakes_stop_at_start_naming_file_field_and_choices(tmp_path, capsys, config_text, expected):
    assert _run(tmp_path, config_text) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert not list(tmp_path.glob("runs/*/results.jsonl"))


def test_benchmarks_declare_their_own_template_keys(tmp_path, capsys):
    config = "model: dry-run\ntemplates: {summarizer: x.txt}\noptions: {patterns: [ebs], reflection_rounds: 0}\n"
    assert _run(tmp_path, config, data=KGDS, benchmark="kgds") == 2
    err = capsys.readouterr().err
    assert "field 'templates.summarizer': kgds has no template 'summarizer'; valid: summarizer_ebs, summarizer_abs" in err


def test_an_empty_data_file_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert _run(tmp_path, None, "--model", "dry-run", data=empty) == 2
    assert "empty.jsonl: holds no items to evaluate" in capsys.readouterr().err


def test_data_that_is_not_utf8_names_file_and_byte_offset(tmp_path, capsys):
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes('{"id": "a", "question": "Caf\u00e9?", "reference": "r", "answer": "x"}\n'.encode("latin-1"))
    offset = latin.read_bytes().index(b"\xe9")
    assert _run(tmp_path, None, "--model", "dry-run", data=latin) == 2
    assert f"latin1.jsonl: not UTF-8 text (byte offset {offset}" in capsys.readouterr().err


def test_a_config_that_is_not_utf8_names_file_and_byte_offset(tmp_path, capsys):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("# r\u00e9glages\nmodel: dry-run\n".encode("latin-1"))
    assert main(["run", "answers", "--data", str(DATA), "--config", str(path)]) == 2
    assert "latin1.yaml: not UTF-8 text (byte offset 3" in capsys.readouterr().err


def test_run_without_data_is_a_usage_error(tmp_path, capsys):
    assert _run(tmp_path, None, "--model", "dry-run", data=None) == 2
    assert "no data given" in capsys.readouterr().err


def test_a_corrupt_run_config_gives_a_message(tmp_path, capsys):
    assert _run(tmp_path, None, "--model", "dry-run") == 0
    run_dir = next((tmp_path / "runs").iterdir())
    (run_dir / "config.json").write_text('{"benchmark": "answers", ')
    capsys.readouterr()
    assert _run(tmp_path, None, "--model", "dry-run") == 2
    assert "config.json: not a readable run config" in capsys.readouterr().err
    assert main(["report", str(run_dir)]) == 2
    assert _run(tmp_path, None, "--model", "dry-run", "--fresh") == 0  # --fresh starts over


@pytest.mark.parametrize("bad_line", ['{"no id": 1}', "not json at all", "[1, 2]"])
def test_a_corrupt_results_line_gives_a_message(tmp_path, capsys, bad_line):
    assert _run(tmp_path, None, "--model", "dry-run") == 0
    run_dir = next((tmp_path / "runs").iterdir())
    path = run_dir / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], bad_line, *lines[1:]]) + "\n")
    capsys.readouterr()
    assert _run(tmp_path, None, "--model", "dry-run") == 2
    err = capsys.readouterr().err
    assert "results.jsonl, line 2:" in err and "Traceback" not in err
    assert main(["report", str(run_dir)]) == 2


def test_the_resolved_config_records_the_data_hash(tmp_path):
    assert _run(tmp_path, None, "--model", "dry-run") == 0
    resolved = json.loads((next((tmp_path / "runs").iterdir()) / "config.json").read_text())
    assert len(resolved["data_sha256"]) == 64
