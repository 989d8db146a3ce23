"""The pytest plugin, exercised by a pytest run inside the test suite (pytester): a fixture
runs `answers` over HTTP against a stub judge, and the gate's assertions pass or fail with
messages that show the figure, its interval and the worst units."""

from __future__ import annotations

import tomllib
from importlib.metadata import entry_points
from pathlib import Path

pytest_plugins = ["pytester"]

# the inner session runs in this process, and pytester forgets the modules it imported
# afterwards; numpy refuses a second import in one process, so the run's stack is loaded here
import dialeval.gate.asserts  # noqa: E402,F401
import dialeval.protocols.answers  # noqa: E402,F401
import dialeval.run.runner  # noqa: E402,F401
import dialeval.metrics.agreement  # noqa: E402,F401
import dialeval.metrics.paired  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401  (the paired test's t quantiles)

INNER = '''
import json
import re

import pytest

from dialeval.gate import assert_gate, assert_no_regression
from dialeval.testing.openai_server import OpenAIStub, last_user_text


def grade(body):
    found = re.findall(r"grade (\\d)", last_user_text(body).split("<system_answer>")[-1])
    return json.dumps({"rationale": "read", "score": int(found[0])}) if found else "OK"


@pytest.fixture(scope="session")
def judge():
    with OpenAIStub(respond=grade) as server:
        yield {"model": {"spec": "openai-compatible:stub", "base_url": server.base_url, "max_retries": 0},
               "parse_retries": 0, "cache_path": "cache.sqlite"}
        with open("requests.txt", "a") as out:
            out.write(f"{len(server.requests)}\\n")


def answers(name, grades):
    rows = [{"id": f"u{i}", "question": f"Q{i}?", "reference": "r", "answer": f"a grade {g}", "system": "bot"}
            for i, g in enumerate(grades)]
    with open(name, "w") as out:
        out.writelines(json.dumps(r) + "\\n" for r in rows)
    return name


BASE = [4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5]


def test_a_threshold_that_holds(dialeval_run, judge):
    assert_gate(dialeval_run("answers", answers("base.jsonl", BASE), judge), "score.mean >= 4")


def test_a_threshold_that_fails(dialeval_run, judge):
    assert_gate(dialeval_run("answers", answers("base.jsonl", BASE), judge), "score.mean >= 4.8")


def test_noise_is_undecided(dialeval_run, judge):
    base = dialeval_run("answers", answers("base.jsonl", BASE), judge)
    swapped = dialeval_run("answers", answers("swapped.jsonl", [9 - g for g in BASE]), judge)
    assert_no_regression(swapped, base, "score", margin=0.2)


def test_a_clear_regression(dialeval_run, judge, assert_no_regression):
    base = dialeval_run("answers", answers("base.jsonl", BASE), judge)
    worse = dialeval_run("answers", answers("worse.jsonl", [g - 2 for g in BASE]), judge)
    assert_no_regression(worse, base, "score", margin=0.2)
'''


def _plugin_args() -> list[str]:
    """``-p dialeval.gate.plugin`` where this environment was installed before the entry point existed."""
    installed = any(ep.value == "dialeval.gate.plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "dialeval.gate.plugin"]


def test_the_package_declares_the_plugin_entry_point():
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["pytest11"] == {"dialeval": "dialeval.gate.plugin"}


def test_the_plugin_runs_benchmarks_and_gates_them(pytester):
    pytester.makepyfile(test_release=INNER)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")  # as this project's own settings
    args = [*_plugin_args(), "--dialeval-runs", "runs", "-p", "no:cacheprovider", "-p", "no:randomly"]
    result = pytester.runpytest_inprocess(*args)
    result.assert_outcomes(passed=1, failed=2, skipped=1)  # noise: the units cannot decide, said as skipped
    result.stdout.fnmatch_lines([
        "*gate 'score.mean >= 4.8' failed: score.mean = 4.5 (does not meet >= 4.8)",
        "*score.mean = 4.500 [[]95% CI 4.*, 4.*[]] over 12 units",
        "*lowest units: u0 (4), u10 (4), u2 (4), u4 (4), u6 (4)",
    ])
    result.stdout.fnmatch_lines([
        "*no regression of score beyond 0.2 failed: score: change -2.000 [[]95% CI -3.176, -0.824[]] over 12 units*",
        "*largest drops: u0 (4 -> 2), u1 (5 -> 3), u10 (4 -> 2), u11 (5 -> 3), u2 (4 -> 2)",
    ])
    assert len(list((pytester.path / "runs").iterdir())) == 3  # --dialeval-runs: base, swapped, worse
    # four tests ask for the base run: it is judged once and then resumed (12 units x 3 runs)
    assert (pytester.path / "requests.txt").read_text().split() == ["36"]
