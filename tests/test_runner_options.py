"""The runner's own options (stop_when_decided and its keys) are a model of their own,
validated when the run is prepared: typed on the prepared run, out of the benchmark's
options, and every mistake stops before a call with the option named (a typo: its fix)."""

from __future__ import annotations

import json

import pytest

from dialeval.config import ConfigError, RunConfig
from dialeval.run.run_options import RUNNER_KEYS, RunnerOptions
from dialeval.run.runner import prepare_run
from tests.helpers import scripted


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.jsonl"
    rows = [{"id": f"q{i}-{s}", "question": "Q?", "reference": "r", "answer": "a", "system": s} for i in range(3) for s in ("a", "b")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _prepare(tmp_path, data, **options):
    """The run worked out, as before any call (nothing is written, no model is asked)."""
    settings, _ = scripted(respond=lambda messages: json.dumps({"rationale": "ok", "score": 5}))
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, options=options)
    return prepare_run("answers", data, config)


def test_the_prepared_run_carries_them_typed_and_the_benchmark_never_sees_them(tmp_path, answers):
    prep = _prepare(tmp_path, answers, stop_when_decided=True, decision_margin=0.2, decide_on="score (1-5)")
    assert prep.runner == RunnerOptions(stop_when_decided=True, decision_margin=0.2, decide_on="score (1-5)")
    assert not set(prep.config.options) & set(RUNNER_KEYS)
    assert prep.watch is not None and prep.watch.margin == 0.2
    plain = _prepare(tmp_path, answers)
    assert plain.runner == RunnerOptions() and plain.watch is None


@pytest.mark.parametrize("options, said", [
    ({"stop_when_decide": True}, "answers option 'stop_when_decide': unknown key; answers takes no option of its own; "),
    ({"stop_when_decided": "yes"}, "option 'stop_when_decided': Input should be a valid boolean"),
    ({"stop_when_decided": True, "decision_margin": -1}, "option 'decision_margin': Input should be greater than or equal to 0"),
    ({"stop_when_decided": True, "decision_margin": True}, "option 'decision_margin': Input should be a valid number"),
    ({"decision_margin": 0.1, "decide_on": "score"}, "options decide_on, decision_margin need stop_when_decided=true"),
])
def test_a_wrong_runner_option_stops_before_any_call_naming_it(tmp_path, answers, options, said):
    with pytest.raises(ConfigError) as err:
        _prepare(tmp_path, answers, **options)
    assert said in str(err.value)


def test_a_typo_of_either_kind_of_key_names_the_one_meant(tmp_path, answers):
    with pytest.raises(ConfigError, match=r"\(did you mean 'stop_when_decided'\?\)") as err:
        _prepare(tmp_path, answers, stop_when_decide=True)
    assert "the runner's: stop_when_decided, decision_margin, decide_on, decide_against" in str(err.value)
    with pytest.raises(ConfigError, match=r"\(did you mean 'decide_on'\?\)"):
        _prepare(tmp_path, answers, stop_when_decided=True, decide_no="score")
