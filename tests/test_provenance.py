"""A report says which code ran, when, against which endpoint and what the server called itself,
counts the server's refusals, and warns when a judge's answers mostly could not be read."""

from __future__ import annotations

import json
import re

from dialeval import __version__
from dialeval.evaluation import run_warnings
from dialeval.config import ModelSettings, RunConfig
from dialeval.report.cautions import FEW_UNITS, UNUSABLE_WARN_SHARE, few_units, judge_warnings
from dialeval.run import provenance
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.test_runner import DATA

GRADE = '{"rationale": "matches the reference", "score": 4}'
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def _config(tmp_path, server, spec: str = "openai-compatible:judge-x", **kw) -> RunConfig:
    model = ModelSettings(spec=spec, base_url=server.base_url, max_retries=3)
    return RunConfig(model=model, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, **kw)


def _calls(run_dir) -> list[dict]:
    return [c for line in (run_dir / "results.jsonl").read_text().splitlines() for c in json.loads(line)["usage"]]


def test_a_local_server_is_recorded_with_the_model_name_it_answered_under(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE, served_model="local-llama-3-8b") as server:
        result = run("answers", DATA, _config(tmp_path, server), progress=False)
    endpoint = server.base_url.rstrip("/")

    prov = json.loads((result.run_dir / "metrics.json").read_text())["run"]["provenance"]
    assert prov["models"] == {"openai-compatible:judge-x": {"endpoints": [endpoint], "server_models": ["local-llama-3-8b"]}}
    assert prov["dialeval"] == __version__
    assert ISO.match(prov["started"]) and ISO.match(prov["finished"]) and prov["started"] <= prov["finished"]
    saved = json.loads((result.run_dir / "config.json").read_text())["provenance"]
    assert saved["finished"] == prov["finished"] and saved["dialeval"] == __version__

    calls = _calls(result.run_dir)
    assert {c["endpoint"] for c in calls} == {endpoint} and {c["server_model"] for c in calls} == {"local-llama-3-8b"}
    assert all(isinstance(c["latency_s"], float) and c["latency_s"] >= 0 for c in calls)
    report = result.report_path.read_text()
    assert f"`openai-compatible:judge-x` called at `{endpoint}`; the server answered as `local-llama-3-8b`" in report


def test_an_openai_model_answered_by_another_server_says_its_cost_is_a_list_price(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with OpenAIStub(respond=lambda body: GRADE) as server:
        result = run("answers", DATA, _config(tmp_path, server, spec="openai:gpt-4o-mini"), progress=False)
    notes = result.metrics["run"]["provenance"]["price_notes"]
    assert len(notes) == 1 and "127.0.0.1" in notes[0] and "not api.openai.com" in notes[0]
    report = result.report_path.read_text()
    assert "list price, which that server may not charge" in report
    assert "sk-test-not-a-real-key" not in report + (result.run_dir / "config.json").read_text()


def test_refusals_the_sdk_retried_are_counted_per_call_and_shown(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE, failures=[429, 500]) as server:
        result = run("answers", DATA, _config(tmp_path, server, concurrency=1), progress=False)
    assert result.complete  # both refusals were retried away
    total = json.loads((result.run_dir / "usage.json").read_text())["total"]
    assert (total["retries"], total["rate_limited"]) == (2, 1)
    assert sum(c["retries"] for c in _calls(result.run_dir)) == 2
    assert "Requests sent again after the server refused or failed them: 2 retries (1 HTTP 429)." in result.report_path.read_text()


def test_a_resumed_run_keeps_when_it_first_started(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        first = run("answers", DATA, _config(tmp_path, server, limit=1), progress=False)
        again = run("answers", DATA, _config(tmp_path, server), progress=False)
    assert first.run_dir == again.run_dir
    before = first.metrics["run"]["provenance"]
    after = again.metrics["run"]["provenance"]
    assert after["first_started"] == before["first_started"] and after["started"] >= before["started"]


def test_a_run_resumed_with_other_code_names_both_versions_and_warns(tmp_path, monkeypatch):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        monkeypatch.setattr(provenance, "git_commit", lambda: "a" * 40)
        run("answers", DATA, _config(tmp_path, server, limit=1), progress=False)
        monkeypatch.setattr(provenance, "git_commit", lambda: "b" * 40)  # the checkout moved on, then the run resumed
        again = run("answers", DATA, _config(tmp_path, server), progress=False)
    prov = again.metrics["run"]["provenance"]
    assert prov["code_versions"] == [{"dialeval": __version__, "git_commit": "a" * 40},
                                     {"dialeval": __version__, "git_commit": "b" * 40}]
    [warning] = [w for w in run_warnings(again.metrics) if "other code" in w]
    assert f"{__version__} (git aaaaaaaaaaaa); {__version__} (git bbbbbbbbbbbb)" in warning
    assert f"- caution: {warning}" in again.report_path.read_text()


def test_a_run_resumed_with_the_same_code_or_re_read_without_evaluating_keeps_one_version(tmp_path, monkeypatch):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        monkeypatch.setattr(provenance, "git_commit", lambda: "a" * 40)
        run("answers", DATA, _config(tmp_path, server, limit=1), progress=False)
        done = run("answers", DATA, _config(tmp_path, server), progress=False)
        monkeypatch.setattr(provenance, "git_commit", lambda: "b" * 40)
        reread = run("answers", DATA, _config(tmp_path, server), progress=False)  # nothing left to evaluate
    assert "code_versions" not in done.metrics["run"]["provenance"]
    kept = reread.metrics["run"]["provenance"]
    assert "code_versions" not in kept and kept["git_commit"] == "a" * 40  # the code that evaluated the items
    assert {k: kept[k] for k in ("started", "finished")} == {k: done.metrics["run"]["provenance"][k] for k in ("started", "finished")}
    assert not [w for w in run_warnings(reread.metrics) if "other code" in w]


def test_a_checkout_with_uncommitted_changes_is_said_to_have_them(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "git_commit", lambda: "a" * 40)
    monkeypatch.setattr(provenance, "git_checkout", lambda: ("a" * 40, True))
    with OpenAIStub(respond=lambda body: GRADE) as server:
        result = run("answers", DATA, _config(tmp_path, server), progress=False)
    assert result.metrics["run"]["provenance"]["git_modified"] is True
    assert f"- run: dialeval {__version__} (git aaaaaaaaaaaa, with changes not committed), " in result.report_path.read_text()


def test_the_checkout_is_read_as_git_itself_reads_it():
    import shutil
    import subprocess
    from pathlib import Path

    here = Path(provenance.__file__).parent
    git = shutil.which("git")
    head = subprocess.run([git, "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True) if git else None
    if head is None or head.returncode != 0:
        assert provenance.git_checkout() == (None, False)  # an installed copy, or no git: nothing claimed
        return
    changed = subprocess.run([git, "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True).stdout.strip()
    provenance.git_checkout.cache_clear()
    assert provenance.git_checkout() == (head.stdout.strip(), bool(changed))


def test_without_git_the_commit_is_unknown_and_nothing_fails(monkeypatch):
    provenance.git_checkout.cache_clear()
    monkeypatch.setenv("PATH", "")
    try:
        assert provenance.git_commit() is None
        assert provenance.start()["git_commit"] is None
    finally:
        provenance.git_checkout.cache_clear()


def _agent(calls: int, unparsed: int, truncated: int = 0) -> dict:
    return {"calls": calls, "unparsed": unparsed, "truncated": truncated, "models": ["openai:judge"]}


def test_the_unreadable_judge_banner_starts_at_the_threshold_and_not_below():
    assert UNUSABLE_WARN_SHARE == 0.10
    at = judge_warnings({"judge": _agent(10, 1)}, set())
    assert len(at) == 1 and "1 of 10 answers (10%)" in at[0]
    assert judge_warnings({"judge": _agent(11, 1)}, set()) == []
    assert len(judge_warnings({"judge": _agent(10, 0, truncated=1)}, set())) == 1  # cut off counts too
    assert judge_warnings({"responder": _agent(10, 9)}, {"responder"}) == []  # the system under test is reported apart


def test_a_judge_that_gave_no_readable_answer_is_not_said_to_rest_on_the_rest():
    [some] = judge_warnings({"judge": _agent(5, 2, truncated=1)}, set())
    assert "3 of 5 answers (60%)" in some and "its scores rest on the rest" in some
    [none] = judge_warnings({"judge": _agent(5, 4, truncated=1)}, set())
    assert "5 of 5 answers (100%) could not be read (4 unparsed, 1 cut off); it gave no score;" in none
    assert "results.jsonl" in none and "rest on the rest" not in none


def test_a_run_whose_judge_mostly_fails_to_answer_readably_says_so_first(tmp_path):
    replies = iter(["no idea", "no idea", GRADE])
    with OpenAIStub(respond=lambda body: next(replies)) as server:
        result = run("answers", DATA, _config(tmp_path, server, concurrency=1), progress=False)
    warnings = result.metrics["run"]["warnings"]
    assert len(warnings) == 1 and "2 of 3 answers (67%)" in warnings[0]
    assert result.report_path.read_text().split("\n")[2].startswith("> **Unreadable judge answers.** Judge answer_judge")
    assert warnings[0] in run_warnings(result.metrics)  # the CLI prints it as a warning line


def test_statistics_on_few_units_are_listed_means_are_not():
    metrics = {
        "judge_vs_human": {"pearson": 1.0, "spearman": 1.0, "n": 2},
        "systems": {"bot": {"interval": {"value": 0.5, "low": 0.2, "high": 0.8, "n": FEW_UNITS}, "mean": 2.0, "n": 1}},
        "per_dialogue": {"spearman": {"value": 0.4, "low": -0.2, "high": 0.9, "dialogues": 3}},
        "run": {"ignored": {"pearson": 0.1, "n": 1}},
    }
    assert few_units(metrics) == ["judge_vs_human: n=2", "per_dialogue.spearman: n=3"]


def test_a_report_rewritten_for_a_run_without_provenance_claims_none(tmp_path):
    from dialeval.report.header import provenance_lines

    assert provenance_lines({"templates": {}, "models": {}, "price_notes": []}) == []
    lines = provenance_lines({"dialeval": "9.9", "git_commit": None, "first_started": "2026-01-01T00:00:00Z",
                              "started": "2026-01-02T00:00:00Z", "finished": "2026-01-02T00:01:00Z"})
    assert lines == ["- run: dialeval 9.9, 2026-01-01T00:00:00Z to 2026-01-02T00:01:00Z (resumed 2026-01-02T00:00:00Z) UTC"]


def test_a_call_whose_last_attempt_was_refused_too_counts_only_the_refusals_it_retried():
    import contextvars

    from dialeval.models.usage import CallRecord, count_response, record, start_meter

    def failed_call() -> CallRecord:
        start_meter("http://user:secret@127.0.0.1:8000/v1?key=x")
        for status in (429, 500, 503, 200, 500):  # a 200 (a corrective retry answered) is no refusal
            count_response(status)
        entry = CallRecord(agent="judge", model="openai-compatible:m", status="error", error="InternalServerError")
        record(entry)
        return entry

    entry = contextvars.copy_context().run(failed_call)
    assert (entry.retries, entry.rate_limited) == (3, 1)  # four refusals, the last one not retried
    assert entry.endpoint == "http://127.0.0.1:8000/v1"  # no user, password or query
    assert entry.latency_s is not None and entry.server_model is None
