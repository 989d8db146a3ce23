"""When most outputs of the system under test are cut off or unreadable, the run says so
where a user looks: the report's first lines, the CLI's last lines, a Python warning."""

from __future__ import annotations

from pathlib import Path

import pytest

import dialeval
from dialeval.benchmarks import get_benchmark
from dialeval.cli import main
from dialeval.report.header import system_outputs
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config

KGDS = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "kgds_demo.json"
CUT_OFF = ('{"summary": "The speakers talk about', "length")  # every answer hits the token limit


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-system-failure-tests")


def _row(*calls: tuple[str, str]) -> dict:
    return {"id": "s1", "status": "ok", "result": {"calls": [{"agent": a, "status": s} for a, s in calls]}}


def test_cut_off_summaries_are_counted_as_system_failures_and_judges_are_not():
    rows = [_row(("kgds.summarizer.ebs", "truncated"), ("kgds.summarizer.abs", "unparsed"), ("kgds.fact_verifier", "truncated"))]
    info = system_outputs(get_benchmark("kgds"), {}, rows)
    assert (info["outputs"], info["truncated"], info["unparsed"]) == (2, 1, 1)
    assert info["warning"].startswith("2 of 2 summaries of the system under test (kgds.summarizer.abs, kgds.summarizer.ebs)")


def test_a_few_failures_do_not_raise_the_alarm():
    rows = [_row(("mmdu.responder", "ok"), ("mmdu.responder", "ok"), ("mmdu.responder", "truncated"))]
    assert system_outputs(get_benchmark("mmdu"), {}, rows)["warning"] is None
    assert system_outputs(get_benchmark("answers"), {}, rows) is None  # the answers are given, not produced


def test_a_run_whose_summaries_were_all_cut_off_says_so_in_python_and_in_the_report(tmp_path):
    with OpenAIStub(respond=lambda body: CUT_OFF) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:tiny", "base_url": server.base_url})
        with pytest.warns(RuntimeWarning, match=r"2 of 2 summaries of the system under test .* were system failures \(2 cut off"):
            result = dialeval.evaluate("kgds", KGDS, config)
    assert result.complete and result.system_failures
    report = result.report_path.read_text()
    assert report.index("**Mostly system failures.** 2 of 2 summaries") < report.index("## Results")
    assert "| kgds.summarizer.ebs (system under test) |" in report  # not listed as if it were a judge


def test_the_cli_prints_it_among_its_last_lines(tmp_path, capsys):
    with OpenAIStub(respond=lambda body: CUT_OFF) as server:
        config = tmp_path / "run.yaml"
        config.write_text(f"model: {{spec: 'openai-compatible:tiny', base_url: '{server.base_url}', max_retries: 0}}\n")
        code = main(["run", "kgds", "--data", str(KGDS), "--config", str(config), "--output-dir", str(tmp_path / "runs"),
                     "--no-progress"])
    assert code == 0
    assert "dialeval: warning: 2 of 2 summaries of the system under test" in capsys.readouterr().err
