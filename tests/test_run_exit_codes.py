"""`dialeval run`'s exit code says whether anything was measured: 0 when at least one unit got
a score, 1 when none did (every verdict unreadable) or an item failed, 1 when a `--fail-on`
condition holds, 2 for a bad expression before any call. Over HTTP with a stub judge."""

from __future__ import annotations

import json

from dialeval.cli import main
from dialeval.testing.openai_server import OpenAIStub, last_user_text
from tests.gate_helpers import grade_by_answer, write_answers


def _run(tmp_path, server, *extra):
    data = write_answers(tmp_path / "a.jsonl", {f"u{i}": 4 for i in range(5)})
    return main(["run", "answers", "--data", str(data), "--model", "openai-compatible:judge", "--base-url", server.base_url,
                 "--output-dir", str(tmp_path / "runs"), "--no-progress", "--no-cache", *extra])


def unreadable(body):
    return "I would rather not say." if "grade" in last_user_text(body) else "OK"


def test_a_run_where_no_verdict_could_be_read_exits_1(tmp_path, capsys):
    with OpenAIStub(respond=unreadable) as server:
        code = _run(tmp_path, server)
    out = capsys.readouterr().out
    assert code == 1
    assert out.strip().splitlines()[-1].startswith("dialeval: no unit was measured: none of 5 items got a readable verdict")
    (run_dir,) = (tmp_path / "runs").iterdir()
    info = json.loads((run_dir / "metrics.json").read_text())["run"]
    assert info["units_measured"] == 0 and info["complete"] is False


def test_one_readable_verdict_is_a_measurement_and_exits_0(tmp_path, capsys):
    answered = []

    def one_readable(body):
        if "grade" not in last_user_text(body):
            return "OK"
        answered.append(1)
        return grade_by_answer(body) if len(answered) == 1 else "I would rather not say."

    with OpenAIStub(respond=one_readable) as server:
        assert _run(tmp_path, server, "--concurrency", "1") == 0
    capsys.readouterr()


def test_fail_on_makes_a_run_stricter_without_a_rules_file(tmp_path, capsys):
    with OpenAIStub(respond=grade_by_answer) as server:
        assert _run(tmp_path, server, "--fail-on", "score.mean < 5") == 1
        assert "dialeval: --fail-on 'score.mean < 5' holds (score.mean = 4): exit 1" in capsys.readouterr().out
        assert _run(tmp_path, server, "--fail-on", "failures.share > 0", "--fail-on", "unparsed.share > 0.1") == 0
        capsys.readouterr()
        requests = len(server.requests)
        assert _run(tmp_path, server, "--fail-on", "failures.share >> 0") == 2
        assert "--fail-on: 'failures.share >> 0' is not '<figure> <op> <number>'" in capsys.readouterr().err
        assert len(server.requests) == requests  # refused before any call
        assert _run(tmp_path, server, "--fail-on", "failures.shar > 0") == 2
        assert "(did you mean 'failures.share'" in capsys.readouterr().err
