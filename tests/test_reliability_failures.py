"""A run never lies: a call that got no answer fails its item, the run and the exit code;
a re-run retries exactly those items; dead servers and refused keys stop the run early;
keys never reach what a run writes or prints."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

import dialeval
from dialeval.cli import main

from dialeval.run.folder import results_by_id
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'
SECRET = "sk-reliability-secret-9137"


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_URL"):
        monkeypatch.delenv(var, raising=False)


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"




def _yaml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return str(path)


def test_an_unreachable_judge_fails_every_item_and_the_exit_code(tmp_path, capsys):
    url = closed_port_url()
    config = _yaml(tmp_path, f"model: {{spec: 'openai-compatible:x', base_url: '{url}', max_retries: 0}}\npreflight: false\n")
    code = main(["run", "answers", "--data", str(DATA), "--config", config, "--output-dir", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1
    last = out.strip().splitlines()[-1]
    assert re.match(rf"dialeval: 3 of 3 items failed: 3 x \w*ConnectionError at {re.escape(url)} \(openai-compatible:x\)", last)
    run_dir = next(p for p in tmp_path.iterdir() if p.is_dir())
    rows = results_by_id(run_dir)
    assert {r["status"] for r in rows.values()} == {"failed"}
    # the partial record is kept for the report, with the call's own status
    assert rows["bike-1"]["result"]["calls"][0]["status"] == "error"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["run"]["failed"] == 3 and metrics["run"]["finished"] == 0
    report = (run_dir / "report.md").read_text()
    assert "**Incomplete run.**" in report and "## Failed items (3)" in report and "_No item finished._" in report


def test_a_rerun_retries_exactly_the_failed_items_and_then_succeeds(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE, failures=[500]) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, concurrency=1)
        first = run("answers", DATA, config, progress=False)
        assert first.failed == 1 and not first.complete
        assert first.summary == f"1 of 3 items failed: 1 x OpenAIAPIError (HTTP 500) at {server.base_url} (openai-compatible:judge)"
        # metrics come from the two finished items; the failed one is in no number
        assert first.metrics["systems"]["demo-bot"]["items"] == 2
        assert first.metrics["systems"]["demo-bot"]["unparsed"] == 0  # an error is not an unparsed answer
        sent = len(server.requests)
        second = run("answers", DATA, config, progress=False)
    assert len(server.requests) == sent + 1  # only the failed item was sent again
    assert second.complete and second.failed == 0
    assert second.metrics["systems"]["demo-bot"] == {
        "items": 3, "scored": 3, "unparsed": 0, "truncated": 0, "mean_score": 4.0, "mean_scaled": 0.75,
    }


def test_evaluate_reports_failures_to_python_users(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE, failures=[500]) as server:
        model = {"spec": "openai-compatible:judge", "base_url": server.base_url, "max_retries": 0}
        with pytest.warns(RuntimeWarning, match="1 of 3 items failed"):
            result = dialeval.evaluate("answers", DATA, model=model, output_dir=str(tmp_path), cache_path=None, concurrency=1)
    assert result.failed == 1 and result.metrics["run"]["failed"] == 1
    assert result.metrics["systems"]["demo-bot"]["mean_score"] == 4.0  # never None when items finished


def test_unparsed_and_truncated_answers_finish_their_item_and_are_not_errors(tmp_path):
    replies = iter(["no verdict here", ("{\"rationale\": \"cut", "length"), GRADE])

    with OpenAIStub(respond=lambda body: next(replies)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, concurrency=1)
        result = run("answers", DATA, config, progress=False)
    assert result.complete
    usage = json.loads((result.run_dir / "usage.json").read_text())["per_agent"]["answer_judge"]
    assert (usage["unparsed"], usage["truncated"], usage["error"]) == (1, 1, 0)


def test_preflight_names_model_url_and_variable_when_nothing_listens(tmp_path, capsys):
    url = closed_port_url()
    code = main(["run", "answers", "--data", str(DATA), "--model", "openai-compatible:x", "--base-url", url,
                 "--output-dir", str(tmp_path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "field 'model'" in err and "cannot reach openai-compatible:x at " + url in err and "$OPENAI_API_KEY" in err
    assert not list(tmp_path.glob("*/results.jsonl"))  # no item was attempted


def test_preflight_stops_a_server_that_never_answers(tmp_path):
    with OpenAIStub(hang_models=True) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:x", "base_url": server.base_url, "timeout": 0.5})
        with pytest.raises(dialeval.config.ConfigError, match="ReadTimeout"):
            run("answers", DATA, config, progress=False)
        assert server.requests == []


def test_an_unreachable_server_without_a_key_says_the_variable_is_unset(tmp_path, monkeypatch):
    """The message names where the URL and the key came from; a variable that is not set is
    not named as the key's source (a reader would look for a wrong key there)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    url = closed_port_url()
    config = http_config(tmp_path, {"spec": "openai-compatible:x", "base_url": url})
    with pytest.raises(dialeval.config.ConfigError) as failure:
        run("answers", DATA, config, progress=False)
    message = str(failure.value)
    assert f"cannot reach openai-compatible:x at {url} (URL from base_url (the config or --base-url); " in message
    assert "no key: $OPENAI_API_KEY is not set)" in message and "key from" not in message


def test_preflight_reports_a_refused_key_by_its_variable(tmp_path, monkeypatch):
    with OpenAIStub(api_key="the-right-key", echo_auth=True) as server:
        config = http_config(tmp_path, {"spec": "openai:gpt-4o-mini", "base_url": server.base_url})
        with pytest.raises(dialeval.config.ConfigError) as failure:
            run("answers", DATA, config, progress=False)
    message = str(failure.value)
    assert "refused the key (HTTP 401)" in message and "$OPENAI_API_KEY" in message
    assert SECRET not in message and "[$OPENAI_API_KEY]" in message  # the echoed key is scrubbed


def test_a_missing_key_stops_before_any_call(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = http_config(tmp_path, {"spec": "anthropic:claude-haiku-4-5"})
    with pytest.raises(dialeval.config.ConfigError, match=r"field 'model': model anthropic:claude-haiku-4-5: no API key; set \$ANTHROPIC_API_KEY"):
        run("answers", DATA, config, progress=False)


def test_the_circuit_breaker_stops_a_run_whose_server_stopped_answering(tmp_path):
    many = tmp_path / "many.jsonl"
    many.write_text("".join(
        json.dumps({"id": f"q{i}", "question": "q", "reference": "r", "answer": "a", "system": "s"}) + "\n" for i in range(12)
    ))
    with OpenAIStub(hang=True) as server:  # /models answers, completions never do
        config = http_config(tmp_path, {"spec": "openai-compatible:x", "base_url": server.base_url, "timeout": 0.3}, concurrency=1)
        result = run("answers", many, config, progress=False)
        sent = len(server.requests)
    assert sent == 3  # three time-outs in a row, then nothing more is sent
    assert result.failed == 3 and result.not_evaluated == 9
    assert result.stopped.startswith("stopped after 3 consecutive connection errors: openai-compatible:x at " + server.base_url)
    assert "run stopped, 9 of 12 items not evaluated" in result.summary
    assert "9 not evaluated (run stopped)" in result.report_path.read_text()


def test_the_progress_bar_shows_errors_as_they_happen(tmp_path, capsys):
    with OpenAIStub(respond=lambda body: GRADE, failures=[500]) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, concurrency=1)
        run("answers", DATA, config, progress=True)
    assert "errors=1" in capsys.readouterr().err


def test_a_key_echoed_by_the_server_never_reaches_files_or_the_terminal(tmp_path, capsys):
    with OpenAIStub(respond=lambda body: GRADE, failures=[500, 500, 500], echo_auth=True) as server:
        config = _yaml(tmp_path, f"model: {{spec: 'openai:gpt-4o-mini', base_url: '{server.base_url}', max_retries: 0}}\n")
        code = main(["run", "answers", "--data", str(DATA), "--config", config, "--output-dir", str(tmp_path / "out"), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 1
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    written = "".join(p.read_text(errors="replace") for p in files)
    assert "stub failure 500 (key [$OPENAI_API_KEY])" in written  # the message is kept, the key is not
    assert SECRET not in written and SECRET not in captured.out + captured.err


def test_a_key_refused_during_the_run_stops_it_naming_the_variable(tmp_path):
    many = tmp_path / "many.jsonl"
    many.write_text("".join(
        json.dumps({"id": f"q{i}", "question": "q", "reference": "r", "answer": "a", "system": "s"}) + "\n" for i in range(8)
    ))
    with OpenAIStub(respond=lambda body: GRADE, api_key="another-key") as server:
        config = http_config(tmp_path, {"spec": "openai:gpt-4o-mini", "base_url": server.base_url}, concurrency=1, preflight=False)
        result = run("answers", many, config, progress=False)
        sent = len(server.requests)
    assert sent == 3 and result.failed == 3 and result.not_evaluated == 5
    assert "consecutive authentication errors: openai:gpt-4o-mini at " + server.base_url in result.stopped
    assert "key from $OPENAI_API_KEY" in result.stopped
