"""Exports the services accept: LangSmith feedback that validates as the SDK's
``FeedbackCreate`` and Langfuse scores as its ``CreateScoreRequest``; a simulation run's
outcomes and verdicts; and never a file inside the run folder."""

from __future__ import annotations

import csv
import json

import pytest

from dialeval.cli import main
from dialeval.data import exporters
from dialeval.evaluation import run
from dialeval.testing.bot_server import BotStub
from dialeval.testing.openai_server import OpenAIStub
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config
from tests.simulation_helpers import GOOD_BOT, models, suite
from tests.test_importers import imported_run  # noqa: F401  (the fixture: a dialogue run on an imported file)

LANGFUSE_FIELDS = {"id": "id", "traceId": "trace_id", "observationId": "observation_id", "sessionId": "session_id", "name": "name",
                   "value": "value", "dataType": "data_type", "comment": "comment", "metadata": "metadata"}


def test_langsmith_feedback_validates_as_feedback_create(imported_run, tmp_path):
    from langsmith.schemas import FeedbackCreate

    result = imported_run("langsmith", "agent_demo_langsmith.jsonl", "ls")
    out = tmp_path / "feedback.jsonl"
    assert main(["export", str(result.run_dir), "--to", "langsmith", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3
    calls = {k: v for r in result.records for k, v in r["metadata"]["source"]["call_traces"].items()}
    for row in rows:
        feedback = FeedbackCreate.model_validate(row)
        assert str(feedback.trace_id) == calls[str(feedback.run_id)]  # the trace of the run that made the reply


def test_langfuse_scores_are_create_score_requests(imported_run, tmp_path):
    from langfuse.api import CreateScoreRequest

    result = imported_run("langfuse", "agent_demo_langfuse.json", "lf")
    scores, _ = exporters.langfuse_scores(result.records, "lf")
    assert len(scores) == 3
    for score in scores:
        request = CreateScoreRequest(**{LANGFUSE_FIELDS[k]: v for k, v in score.items()})
        assert json.loads(json.dumps(request.dict())) == score  # nothing dropped or renamed by the SDK's own class


@pytest.fixture
def simulation_run(tmp_path, monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    with OpenAIStub(respond=models) as server, BotStub(script=GOOD_BOT) as bot:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": {"url": bot.url, "body": {"history": "$messages", "session": "$session_id"}}})
        return run("simulation", str(suite(tmp_path)), config, progress=False)


@pytest.mark.timeout(120)
def test_a_simulation_run_exports_its_outcomes_and_verdicts(simulation_run, tmp_path, capsys):
    out = tmp_path / "units.csv"
    assert main(["export", str(simulation_run.run_dir), "--to", "csv", "-o", str(out)]) == 0
    rows = {r["criterion"]: r for r in csv.DictReader(out.open())}
    assert (rows["outcome"]["verdict"], rows["outcome"]["score"], rows["outcome"]["status"]) == ("success", "1.0", "ok")
    assert rows["refund_given"]["verdict"] == "yes"  # the judged success criterion
    assert any(name.startswith("check: ") and r["verdict"] == "passed" for name, r in rows.items())
    assert main(["export", str(simulation_run.run_dir), "--to", "langsmith", "-o", str(tmp_path / "f.jsonl")]) == 2
    assert "a simulation run's conversations were made by the run" in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_export_never_writes_inside_the_run_folder(simulation_run, capsys):
    folder = simulation_run.run_dir
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    for name in ("results.jsonl", "units.csv"):
        assert main(["export", str(folder), "--to", "csv", "-o", str(folder / name)]) == 2
        assert "inside the run folder" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
