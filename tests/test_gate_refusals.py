"""What the gate refuses (exit 2, the reason in one line): a run killed before its end, a dry
run's figures, a baseline of another benchmark or judged on other data, and every malformed
rules file; and the paired test's verdicts at the two ends: 4 identical drops are
undecided, a clear drop on 40 units fails. Runs are judged over HTTP by a stub."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.gate.evaluate import evaluate_gate
from dialeval.gate.rules import GateError, Regression
from dialeval.report.results import read_run
from dialeval.testing.openai_server import OpenAIStub
from tests.gate_helpers import grade_by_answer, run_answers, write_answers

ROOT = Path(__file__).resolve().parents[1]
REGRESSION = "rules:\n  - regression: score\n    margin: 0.1\n"


def _rules(tmp: Path, text: str | bytes, name: str = "gates.yaml") -> Path:
    path = tmp / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _gate(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["gate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """Four units that all dropped by one, and forty that all dropped by two, with their baselines."""
    tmp = tmp_path_factory.mktemp("verdicts")
    four = {f"u{i}": 4 for i in range(4)}
    forty = {f"v{i:02d}": 3 + i % 3 for i in range(40)}
    with OpenAIStub(respond=grade_by_answer) as server:
        return {
            "tmp": tmp,
            "four_base": run_answers(server, tmp, "four-base", four),
            "four_worse": run_answers(server, tmp, "four-worse", {u: g - 1 for u, g in four.items()}),
            "forty_base": run_answers(server, tmp, "forty-base", forty),
            "forty_worse": run_answers(server, tmp, "forty-worse", {u: g - 2 for u, g in forty.items()}),
        }


@pytest.mark.parametrize("pair, code, said", [
    ("four", 0, ["UNDECIDED  no regression of score beyond 0.1: score: change -1.000",
                 "4 units: the smallest possible p is 0.0625 (one-sided)"]),
    ("forty", 1, ["FAIL  no regression of score beyond 0.1: score: change -2.000 [95% CI -2.",
                  "over 40 units both judged: surely more than 0.1 lower"]),
])
def test_four_identical_drops_are_undecided_and_a_clear_drop_on_forty_units_fails(judged, capsys, pair, code, said):
    found, out, _ = _gate(capsys, str(judged[f"{pair}_worse"]), "--baseline", str(judged[f"{pair}_base"]),
                          "--rules", str(_rules(judged["tmp"], REGRESSION)))
    assert found == code
    assert all(line in out for line in said), out


def test_gate_and_compare_print_the_same_figure_for_the_same_runs(judged):
    from dialeval.report.compare import compare_runs

    (outcome,) = evaluate_gate([Regression("score", 0.1)], read_run(judged["forty_worse"]), read_run(judged["forty_base"])).outcomes
    result = compare_runs([judged["forty_base"], judged["forty_worse"]], judged["tmp"] / "compare", plots=False)
    (row,) = result["comparisons"]
    assert (row["mean_diff"], row["ci_low"], row["ci_high"], row["p_value"]) == (
        outcome.detail["change"], outcome.detail["ci_low"], outcome.detail["ci_high"], outcome.detail["p_value"])


def test_a_baseline_judged_on_other_data_is_refused(judged, capsys):
    other = {f"v{i:02d}": 3 + i % 3 for i in range(40)}
    path = write_answers(judged["tmp"] / "other.jsonl", other)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows[:7]:  # seven questions asked differently under the same ids
        row["question"] = f"Another question about {row['id']}?"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from dialeval.config import ModelSettings, RunConfig
    from dialeval.evaluation import run

    with OpenAIStub(respond=grade_by_answer) as server:
        config = RunConfig(model=ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0),
                           cache_path=None, output_dir=str(judged["tmp"] / "runs"), run_id="other", parse_retries=0)
        other_run = run("answers", path, config, progress=False).run_dir
    code, _, err = _gate(capsys, str(judged["forty_worse"]), "--baseline", str(other_run),
                         "--rules", str(_rules(judged["tmp"], REGRESSION)), "--allow-incomplete")
    assert code == 2
    assert "judged other content under 7 of 40 shared unit ids (v00, v01, v02, v03, v04 and 2 more)" in err


def test_a_baseline_of_another_benchmark_is_refused(judged):
    run = read_run(judged["forty_worse"])
    other = run.model_copy(update={"config": {**run.config, "benchmark": "vdact"}})
    with pytest.raises(GateError, match="is a 'vdact' run and .* an 'answers' run|is a 'vdact' run and .* a 'answers' run"):
        evaluate_gate([Regression("score", 0.1)], run, other)


def test_a_dry_baseline_is_refused_by_the_rule_that_reads_it_naming_it_as_the_baseline(judged, capsys):
    from dialeval import evaluate

    dry = evaluate("answers", str(judged["tmp"] / "four-base.jsonl"), model="dry-run:openai:gpt-4o-mini",
                   output_dir=str(judged["tmp"] / "dry")).run_dir
    threshold = _rules(judged["tmp"], 'rules:\n  - "score.mean >= 3"\n', "threshold.yaml")
    code, out, err = _gate(capsys, str(judged["four_base"]), "--baseline", str(dry), "--rules", str(threshold))
    assert (code, err) == (0, "") and "PASS  score.mean >= 3" in out  # a threshold reads the run alone
    code, out, err = _gate(capsys, str(judged["four_base"]), "--baseline", str(dry), "--rules", str(_rules(judged["tmp"], REGRESSION)))
    assert code == 2 and out == ""
    assert f"the baseline {dry} is a dry run, whose scores and figures are placeholders" in err
    code, _, err = _gate(capsys, str(dry), "--baseline", str(judged["four_base"]), "--rules", str(threshold))
    assert code == 2 and f"rule 'score.mean >= 3': the run {dry} is a dry run" in err
    assert str(judged["four_base"]) not in err


def _killed_after(tmp: Path, done: int, total: int) -> Path:
    """`dialeval run` over HTTP, killed with SIGKILL once ``done`` of ``total`` items are written."""
    release = threading.Event()
    answered: list[int] = []

    def slow_after(body):
        text = grade_by_answer(body)
        if text != "OK":
            answered.append(1)
            if len(answered) > done:
                release.wait(30)  # the next answers hang until the process is gone
        return text

    data = write_answers(tmp / "forty.jsonl", {f"v{i:02d}": 3 + i % 3 for i in range(total)})
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    results = tmp / "runs" / "killed" / "results.jsonl"
    with OpenAIStub(respond=slow_after) as server:
        command = [sys.executable, "-m", "dialeval.cli", "run", "answers", "--data", str(data), "--run-id", "killed",
                   "--model", "openai-compatible:judge", "--base-url", server.base_url, "--concurrency", "1",
                   "--output-dir", str(tmp / "runs"), "--no-progress", "--no-cache"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            deadline = time.monotonic() + 120
            while not (results.exists() and len(results.read_text().splitlines()) >= done):
                assert time.monotonic() < deadline and process.poll() is None, "the run never got that far"
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    return results.parent


@pytest.mark.timeout(180)
def test_a_killed_run_is_refused_until_allowed_and_then_every_line_says_so(judged, capsys):
    killed = _killed_after(judged["tmp"], 4, 40)
    assert len(read_run(killed).items) == 4 and not (killed / "metrics.json").exists()
    rules = _rules(judged["tmp"], 'rules:\n  - "failures.share <= 0.02"\n  - "score.mean >= 1"\n')
    code, out, err = _gate(capsys, str(killed), "--rules", str(rules))
    assert code == 2 and out == ""
    assert "cannot judge run" in err and "no metrics.json: the run never finished (4 item(s) in results.jsonl" in err
    assert main(["report", str(killed)]) == 0  # metrics written from what finished: still not a finished run
    capsys.readouterr()
    report = (killed / "report.md").read_text()
    banner = report.split("\n- benchmark:")[0]  # the top of the report, before its facts
    assert "> **Incomplete run.** 36 of 40 items not evaluated (the run was stopped before it finished)." in banner
    assert "re-run the same command" in banner and "- items: 4 evaluated, 4 finished, 0 failed, 36 not evaluated" in report
    info = json.loads((killed / "metrics.json").read_text())["run"]
    assert info["complete"] is False and "36 items not evaluated (the run was stopped before it finished)" in info["incomplete"]
    from dialeval.report.viewer.site import write_run

    assert "<strong>36 not evaluated</strong> (incomplete run" in write_run(killed).read_text()  # the viewer's run page
    older = judged["tmp"] / "runs" / "killed-older"  # a run whose config does not count its items still says it never finished
    shutil.copytree(killed, older)
    config = json.loads((older / "config.json").read_text())
    del config["provenance"]["items"]
    (older / "config.json").write_text(json.dumps(config))
    assert main(["report", str(older)]) == 0
    assert "> **Incomplete run.** Its last session never finished (killed or still running)." in (older / "report.md").read_text()
    code, _, err = _gate(capsys, str(killed), "--rules", str(rules))
    assert code == 2 and "its last session never finished (killed or still running)" in err
    code, out, err = _gate(capsys, str(killed), "--rules", str(rules), "--allow-incomplete")
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 5 and all(line.endswith("[--allow-incomplete: judged although incomplete]") for line in lines)  # 2 reasons, 2 rules, the verdict
    code, _, err = _gate(capsys, str(judged["forty_worse"]), "--baseline", str(killed), "--rules", str(_rules(judged["tmp"], REGRESSION)))
    assert code == 2 and f"cannot judge baseline {killed}" in err
    code, out, _ = _gate(capsys, str(judged["forty_worse"]), "--baseline", str(killed), "--rules", str(_rules(judged["tmp"], REGRESSION)),
                         "--allow-incomplete")  # paired on the 4 units the killed baseline judged: too few to decide
    assert code == 0 and "UNDECIDED  no regression of score beyond 0.1" in out and "36 unit(s) missing in the baseline" in out


def test_a_failed_item_makes_a_run_incomplete(tmp_path, capsys):
    with OpenAIStub(respond=grade_by_answer, failures=[500]) as server:
        failed = run_answers(server, tmp_path, "failed", {f"u{i}": 4 for i in range(6)})
    info = json.loads((failed / "metrics.json").read_text())["run"]
    assert info["complete"] is False and info["incomplete"] == ["1 of 6 items failed"]
    assert len(info["unit_hashes"]) == 6
    code, _, err = _gate(capsys, str(failed), "--rules", str(_rules(tmp_path, 'rules:\n  - "score.mean >= 1"\n')))
    assert code == 2 and "cannot judge run" in err and "1 of 6 items failed" in err


DEEP = ("rules: " + "[" * 5000 + "]" * 5000 + "\n").encode()
MALFORMED = {
    "nan margin": ("rules:\n  - regression: score\n    margin: .nan\n", "'margin' must be a finite number >= 0, found nan"),
    "inf margin": ("rules:\n  - regression: score\n    margin: .inf\n", "'margin' must be a finite number >= 0, found inf"),
    "huge threshold": ('rules:\n  - "score.mean >= 1e999"\n', "'value' must be a finite number, found inf"),
    "rules twice": ('rules:\n  - "score.mean >= 1"\nrules:\n  - "score.mean >= 9"\n', "duplicate key 'rules'"),
    "key twice in a rule": ("rules:\n  - regression: score\n    margin: 0.1\n    margin: 9\n", "duplicate key 'margin'"),
    "misspelt field": ("rules:\n  - regression: score\n    margn: 0.1\n", "unknown key 'margn' (did you mean 'margin'?)"),
    "misspelt top key": ('rules:\n  - "score.mean >= 1"\nwhen_undecide: fail\n', "(did you mean 'when_undecided'?)"),
    "bad when_undecided": ("rules:\n  - regression: score\n    when_undecided: maybe\n", "'when_undecided' takes pass or fail"),
    "binary": (bytes(range(256)) * 8, "not a text file"),
    "5,000 deep": (DEEP, "not a rules file"),
    "long entry": ("rules:\n  - [" + ", ".join(["x"] * 5000) + "]\n", "found ['x', 'x'"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_every_malformed_rules_file_is_refused_in_one_short_line(judged, capsys, case):
    text, complaint = MALFORMED[case]
    code, out, err = _gate(capsys, str(judged["forty_worse"]), "--baseline", str(judged["forty_base"]),
                           "--rules", str(_rules(judged["tmp"], text)))
    assert code == 2 and out == ""
    assert complaint in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and len(err) < 400


def test_the_plugin_refuses_what_the_gate_refuses(judged):
    from dialeval.gate import assert_gate, assert_no_regression

    killed = judged["tmp"] / "runs" / "killed"
    if not killed.exists():
        killed = _killed_after(judged["tmp"], 4, 40)
    with pytest.raises(GateError, match="no metrics.json|never finished"):
        assert_gate(killed, "score.mean >= 1")
    with pytest.raises(GateError, match="'value' must be a finite number"):
        assert_gate(judged["forty_base"], "score.mean >= 1e999")
    with pytest.raises(GateError, match="is not '<figure> <op> <number>'"):
        assert_gate(judged["forty_base"], "score.mean >> 1")
    with pytest.raises(GateError, match="finite number"):
        assert_no_regression(judged["forty_worse"], judged["forty_base"], "score", margin=float("nan"))
    with pytest.raises(pytest.skip.Exception, match="the smallest possible p is 0.0625"):
        assert_no_regression(judged["four_worse"], judged["four_base"], "score", margin=0.1)
    with pytest.raises(AssertionError, match="when_undecided: fail"):
        assert_no_regression(judged["four_worse"], judged["four_base"], "score", margin=0.1, when_undecided="fail")
    with pytest.raises(AssertionError, match="surely more than 0.1 lower"):
        assert_no_regression(judged["forty_worse"], judged["forty_base"], "score", margin=0.1)


def test_a_unit_hash_is_what_was_asked_not_what_the_system_answered(tmp_path):
    from dialeval.benchmarks import get_benchmark
    from dialeval.run.identity import unit_hash
    from tests.dialogue_helpers import write_jsonl

    bench = get_benchmark("dialogue")

    def conversation(user, reply):
        path = write_jsonl(tmp_path / "c.jsonl", [{"id": "c1", "messages": [{"role": "user", "content": user},
                                                                           {"role": "assistant", "content": reply}]}])
        (item,) = bench.load(path, {})
        return item

    first = unit_hash(bench, conversation("Where is my order?", "On its way."))
    assert unit_hash(bench, conversation("Where is my order?", "It left today.")) == first  # another bot's reply
    assert unit_hash(bench, conversation("Cancel my order.", "On its way.")) != first  # another question
    answers = get_benchmark("answers")
    (a,), (b,) = (answers.load(write_answers(tmp_path / f"{n}.jsonl", {"u1": g}), {}) for n, g in (("a", 2), ("b", 5)))
    assert unit_hash(answers, a) == unit_hash(answers, b)


def test_a_baseline_without_content_hashes_is_paired_by_id_only_when_allowed(judged, capsys, tmp_path):
    import shutil

    older = tmp_path / "older"
    shutil.copytree(judged["forty_base"], older)
    metrics = json.loads((older / "metrics.json").read_text())
    del metrics["run"]["unit_hashes"]
    (older / "metrics.json").write_text(json.dumps(metrics))
    rows = [json.loads(line) for line in (older / "results.jsonl").read_text().splitlines()]
    (older / "results.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if k != "unit_hash"}) + "\n" for r in rows))
    rules = str(_rules(tmp_path, REGRESSION))
    code, _, err = _gate(capsys, str(judged["forty_worse"]), "--baseline", str(older), "--rules", rules)
    assert code == 2 and "records no content hash of its units" in err
    code, out, _ = _gate(capsys, str(judged["forty_worse"]), "--baseline", str(older), "--rules", rules, "--allow-incomplete")
    assert code == 1 and "units paired by id alone [--allow-incomplete: judged although incomplete]" in out
