"""Small things a new user meets in the first hour: the answers table tells cut-off verdicts
from unreadable ones, a data folder given for a file says so, records are numbered the
same way everywhere ("record 3 (line 4)")."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.data.io import DataError
from dialeval.runner import run
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config

FIXTURES = Path(__file__).resolve().parents[1] / "dialeval" / "fixtures"
GRADE = '{"rationale": "agrees", "score": 4}'


def test_the_answers_table_counts_truncated_and_unparsed_verdicts_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-first-hour-tests")
    replies = iter(["no verdict here", ('{"rationale": "cut', "length"), GRADE])
    with OpenAIStub(respond=lambda body: next(replies)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, concurrency=1)
        result = run("answers", FIXTURES / "answers_demo.jsonl", config, progress=False)
    row = result.metrics["systems"]["demo-bot"]
    assert (row["items"], row["scored"], row["unparsed"], row["truncated"]) == (3, 1, 1, 1)
    assert "| demo-bot | 3 | 1 | 1 | 1 | 4.00 | 0.750 |" in result.report_path.read_text()
