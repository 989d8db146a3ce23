"""`dialeval gate`: thresholds on a run's figures and regressions against a baseline, over HTTP
with a stub judge whose grades the answers name."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from dialeval.cli import main
from dialeval.gate.evaluate import evaluate_gate
from dialeval.gate.rules import GateError, Regression, Threshold, load_rules, parse_rule
from dialeval.report.results import read_run
from dialeval.testing.openai_server import OpenAIStub
from tests.gate_helpers import grade_by_answer, run_answers

UNITS = [f"q{i:02d}" for i in range(30)]
BASE = {u: 3 + i % 3 for i, u in enumerate(UNITS)}  # 3, 4, 5, 3, ...: mean 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A baseline, a clear regression (every grade 2 lower), noise (3 and 5 swapped: mean change 0) and a run
    that misses one baseline unit and judged one the baseline lacks."""
    tmp = tmp_path_factory.mktemp("gate")
    missing = {u: g for u, g in BASE.items() if u != "q29"} | {"q30": 4}
    with OpenAIStub(respond=grade_by_answer) as server:
        return {
            "tmp": tmp,
            "baseline": run_answers(server, tmp, "baseline", BASE),
            "worse": run_answers(server, tmp, "worse", {u: g - 2 for u, g in BASE.items()}),
            "noise": run_answers(server, tmp, "noise", {u: 8 - g for u, g in BASE.items()}),
            "missing": run_answers(server, tmp, "missing", missing),
        }


def _rules(tmp, text):
    path = tmp / "gates.yaml"
    path.write_text(text)
    return path


RULES = 'rules:\n  - "score.mean >= 3"\n  - "failures.share <= 0.02"\n  - regression: score\n    margin: 0.2\n'


def test_a_clear_regression_fails_with_its_ci_and_worst_units(runs, capsys):
    tmp = runs["tmp"]
    junit, summary = tmp / "worse.xml", tmp / "worse.md"
    code = main([
        "gate", str(runs["worse"]), "--baseline", str(runs["baseline"]), "--rules", str(_rules(tmp, RULES)),
        "--junit", str(junit), "--summary", str(summary),
    ])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  no regression of score beyond 0.2: score: change -2.000 [95% CI -2.457, -1.543] over 30 units" in out
    assert "FAIL  score.mean >= 3: score.mean = 2" in out
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["score.mean >= 3", "failures.share <= 0.02", "no regression of score beyond 0.2"]
    assert [c.find("failure") is not None for c in cases] == [True, False, True]
    page = summary.read_text()
    assert page.startswith("## dialeval gate: failed (2 of 3 rules)")
    assert "Largest drops of score:" in page and "| q00 | 3.000 | 1.000 | -2.000 |" in page


def test_noise_is_undecided_not_passed_and_fails_only_when_asked(runs, capsys):
    junit = runs["tmp"] / "noise.xml"
    code = main(["gate", str(runs["noise"]), "--baseline", str(runs["baseline"]), "--rules", str(_rules(runs["tmp"], RULES)),
                 "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 0, out  # undecided is said, not failed
    assert "UNDECIDED  no regression of score beyond 0.2: score: change +0.000 [95% CI -0.747, +0.747] over 30 units" in out
    assert "at this spread 30 units show only drops larger than 0.947" in out
    assert "gate passed: 2 of 3 rules passed, 1 undecided" in out
    (case,) = [c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name").startswith("no regression")]
    assert "holds both a drop beyond 0.2 and none" in case.find("skipped").get("message")
    summary = runs["tmp"] / "noise.md"
    assert main(["gate", str(runs["noise"]), "--baseline", str(runs["baseline"]), "--rules", str(_rules(runs["tmp"], RULES)),
                 "--summary", str(summary)]) == 0
    page = summary.read_text()
    assert page.startswith("## dialeval gate: passed, 1 undecided")
    assert "\n\n- undecided: no regression of score beyond 0.2: the 95% CI \\[-0.747, +0.747\\] holds both" in page
    strict = _rules(runs["tmp"], RULES.replace("margin: 0.2\n", "margin: 0.2\n    when_undecided: fail\n"))
    assert main(["gate", str(runs["noise"]), "--baseline", str(runs["baseline"]), "--rules", str(strict)]) == 1
    assert "FAIL  no regression of score beyond 0.2" in capsys.readouterr().out


def test_units_missing_on_either_side_are_reported(runs):
    result = evaluate_gate([Regression("score", 0.2)], read_run(runs["missing"]), read_run(runs["baseline"]))
    (outcome,) = result.outcomes
    assert outcome.status == "undecided"  # 29 equal scores: a rare drop of 4 is not ruled out to 0.2
    assert outcome.detail["n"] == 29 and outcome.detail["change"] == 0
    assert outcome.detail["only_baseline"] == ["q29"] and outcome.detail["only_run"] == ["q30"]
    assert "1 unit(s) missing in the run (q29); 1 unit(s) missing in the baseline (q30)" in outcome.message


def test_a_regression_within_the_margin_passes(runs):
    rules = [Regression("score", 2.5), Regression("score (1-5)", 1.0)]
    first, second = evaluate_gate(rules, read_run(runs["worse"]), read_run(runs["baseline"])).outcomes
    assert first.passed and not second.passed  # a drop of exactly 2 is within 2.5, beyond 1


def test_an_unknown_figure_is_bad_input_with_a_suggestion(runs, capsys):
    code = main(["gate", str(runs["noise"]), "--rules", str(_rules(runs["tmp"], 'rules:\n  - "score.maen >= 3"\n'))])
    assert code == 2
    assert "has no figure 'score.maen' (did you mean 'score.mean'" in capsys.readouterr().err


def test_every_bad_rule_is_named_at_once(runs, capsys):
    text = 'rules:\n  - "score.maen >= 3"\n  - "failures.shar <= 0.1"\n  - "score.mean >= 3"\n  - "cost >>= 1"\n'
    assert main(["gate", str(runs["noise"]), "--rules", str(_rules(runs["tmp"], text))]) == 2
    assert "rule 4" in capsys.readouterr().err  # a rule that does not parse: named with its place in the file
    text = 'rules:\n  - "score.maen >= 3"\n  - "failures.shar <= 0.1"\n  - "score.mean >= 3"\n'
    assert main(["gate", str(runs["noise"]), "--rules", str(_rules(runs["tmp"], text))]) == 2
    err = capsys.readouterr().err
    assert "'score.maen' (did you mean 'score.mean'" in err and "'failures.shar' (did you mean 'failures.share'" in err


def test_a_regression_rule_needs_a_baseline(runs, capsys):
    assert main(["gate", str(runs["noise"]), "--rules", str(_rules(runs["tmp"], RULES))]) == 2
    assert "needs a baseline run (--baseline RUN)" in capsys.readouterr().err


def test_the_sequential_decision_is_reported_for_a_regression(runs, capsys):
    summary = runs["tmp"] / "seq.md"
    code = main(["gate", str(runs["worse"]), "--baseline", str(runs["baseline"]), "--rules", str(_rules(runs["tmp"], RULES)),
                 "--summary", str(summary), "--option", "stop_when_decided=true"])
    assert code == 1
    capsys.readouterr()
    assert "Sequential decision for score: regression after 13 of 30 units" in summary.read_text()


def test_rules_read_from_yaml(tmp_path):
    rules = load_rules(_rules(tmp_path, RULES))
    assert rules == [Threshold("score.mean", ">=", 3.0), Threshold("failures.share", "<=", 0.02), Regression("score", 0.2)]
    assert parse_rule("cost.usd < 1.5e-2") == Threshold("cost.usd", "<", 0.015)


@pytest.mark.parametrize("text, complaint", [
    ('rules:\n  - "quality.mean >> 3"\n', "is not '<figure> <op> <number>'"),
    ("rules:\n  - regression: quality\n    margn: 0.2\n", "unknown key 'margn' (did you mean 'margin'?)"),
    ("rules:\n  - regression: quality\n    margin: -1\n", "'margin' must be a finite number >= 0"),
    ("gates: []\n", "unknown key 'gates' (known: rules, when_undecided)"),
    ("rules: []\n", "expected a non-empty 'rules:' list"),
])
def test_a_bad_rule_names_file_and_rule(tmp_path, text, complaint):
    with pytest.raises(GateError, match="gates.yaml") as err:
        load_rules(_rules(tmp_path, text))
    assert complaint in str(err.value)


def test_a_dry_run_is_gated_on_its_cost_only(tmp_path, capsys):
    from dialeval import evaluate

    from tests.gate_helpers import write_answers

    data = write_answers(tmp_path / "a.jsonl", {"u1": 4, "u2": 5})
    estimate = evaluate("answers", data, model="dry-run:openai:gpt-4o-mini", output_dir=str(tmp_path / "runs")).run_dir
    rules = _rules(tmp_path, 'rules:\n  - "cost.usd <= 0.01"\n  - "calls <= 2"\n')
    assert main(["gate", str(estimate), "--rules", str(rules)]) == 0
    assert "PASS  cost.usd <= 0.01: cost.usd = " in capsys.readouterr().out
    for rule in ("score.mean >= 3", "systems.bot.mean_score >= 0.9"):  # a criterion, or any metrics.json path
        quality = _rules(tmp_path, f'rules:\n  - "{rule}"\n')
        assert main(["gate", str(estimate), "--rules", str(quality)]) == 2
        assert "is a dry run, whose scores and figures are placeholders" in capsys.readouterr().err


def test_any_number_of_metrics_json_is_a_figure_and_an_unknown_cost_is_said(runs, capsys):
    rules = _rules(runs["tmp"], 'rules:\n  - "systems.bot.mean_score >= 4"\n  - "run.usage.calls == 30"\n  - "unparsed.share <= 0"\n')
    assert main(["gate", str(runs["baseline"]), "--rules", str(rules)]) == 0
    assert "PASS  systems.bot.mean_score >= 4: systems.bot.mean_score = 4 (meets >= 4)" in capsys.readouterr().out
    cost = _rules(runs["tmp"], 'rules:\n  - "cost.usd <= 1"\n')
    assert main(["gate", str(runs["baseline"]), "--rules", str(cost)]) == 2
    assert "is unknown: no price is known for openai-compatible:stub" in capsys.readouterr().err


def test_an_unknown_criterion_gets_a_suggestion(runs):
    with pytest.raises(GateError, match=r"scored no criterion 'scores' \(did you mean 'score'"):
        evaluate_gate([Regression("scores", 0.2)], read_run(runs["noise"]), read_run(runs["baseline"]))
