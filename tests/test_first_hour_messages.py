"""Small things a new user meets in the first hour: the answers table tells cut-off verdicts
from unreadable ones, a data folder given for a file says so, records are numbered the
same way everywhere, from 1 as lines are ("record 3 (line 4)")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.data.io import DataError
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
GRADE = '{"rationale": "agrees", "score": 4}'


def test_the_answers_table_counts_truncated_and_unparsed_verdicts_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-first-hour-tests")
    replies = iter(["no verdict here", ('{"rationale": "cut', "length"), GRADE])
    with OpenAIStub(respond=lambda body: next(replies)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, concurrency=1)
        result = run("answers", FIXTURES / "answers_demo.jsonl", config, progress=False)
    row = result.metrics["systems"]["demo-bot"]
    assert (row["items"], row["scored"], row["unparsed"], row["truncated"]) == (3, 1, 1, 1)
    assert json.loads((result.run_dir / "metrics.json").read_text())["systems"]["demo-bot"] == {
        "items": 3, "scored": 1, "unparsed": 1, "truncated": 1, "mean_score": 4.0, "mean_scaled": 0.75,
    }  # fmt: skip


def test_a_data_folder_given_for_a_file_is_called_a_folder(tmp_path, capsys):
    from dialeval.cli import main

    assert main(["run", "kgds", "--data", str(FIXTURES), "--model", "dry-run", "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder, not a JSON or JSONL file" in err and "file not found" not in err


def test_records_and_jsonl_lines_both_count_from_1(tmp_path):
    from dialeval.protocols.answers.data import load_answers

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "question": "q", "answer": "x", "reference": "y"}\n\n{"id": "b", "question": \n')
    with pytest.raises(DataError, match=r"broken\.jsonl, record 2 \(line 3\): not valid JSON \(Expecting value at column 25\)"):
        load_answers(broken)
    missing = tmp_path / "missing.jsonl"
    missing.write_text('{"id": "a", "question": "q", "answer": "x", "reference": "y"}\n\n{"id": "b", "question": "q", "reference": "y"}\n')
    with pytest.raises(DataError, match=r"missing\.jsonl, record 2 \(line 3, id='b'\), field 'answer'"):
        load_answers(missing)


def test_a_validators_own_sentence_loses_pydantics_prefix(tmp_path):
    from dialeval.data.io import validate_record
    from pydantic import BaseModel, field_validator

    class Paragraph(BaseModel):
        index: int

        @field_validator("index")
        @classmethod
        def _known(cls, value: int) -> int:
            raise ValueError(f"paragraph {value} is not in the background")

    with pytest.raises(DataError) as failure:
        validate_record(Paragraph, {"index": 99}, "bg.json", 0)
    assert str(failure.value) == "bg.json, record 1, field 'index': paragraph 99 is not in the background"


def test_a_data_path_named_by_the_config_file_is_reported_as_the_config_s(tmp_path, capsys):
    from dialeval.cli import main

    config = tmp_path / "judges.yaml"
    config.write_text("data: ../nowhere/KGDS.json\n")
    assert main(["run", "kgds", "--config", str(config), "--model", "dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{config}: field 'data': ../nowhere/KGDS.json: not found" in err


def test_an_option_without_a_value_is_a_usage_error(capsys):
    from dialeval.cli import main

    assert main(["run", "answers", "--data", str(FIXTURES / "answers_demo.jsonl"), "--model", "dry-run", "--option", "foo"]) == 2
    assert "dialeval: error: --option 'foo': expected KEY=VALUE" in capsys.readouterr().err
