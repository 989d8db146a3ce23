"""`--option stop_when_decided=true`: two systems' answers judged unit by unit in a seeded
order, stopping once the anytime-valid sequence decides; noise is judged to the end."""

from __future__ import annotations

import json

import pytest

from dialeval.config import ConfigError, RunConfig
from dialeval.evaluation import run
from dialeval.testing.scripted import prompt_text
from tests.helpers import scripted

UNITS = 60


def _answers(path, bad_answer):
    rows = []
    for i in range(UNITS):
        rows.append({"id": f"q{i}-a", "question": f"What is {i} plus {i}?", "reference": str(2 * i), "answer": str(2 * i), "system": "a-bot"})
        rows.append({"id": f"q{i}-b", "question": f"What is {i} plus {i}?", "reference": str(2 * i), "answer": bad_answer(i), "system": "b-bot"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _grade(messages):
    """5 for the reference itself, 2 for "no idea", 4 for "nearly N" (a near miss)."""
    answer = prompt_text(messages).split("<system_answer>")[-1]
    return json.dumps({"rationale": "checked", "score": 2 if "no idea" in answer else 4 if "nearly" in answer else 5})


def _config(tmp_path, settings, **options):
    return RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, concurrency=1,
                     options={"stop_when_decided": True, **options})


def test_a_clear_difference_is_decided_before_the_last_unit(tmp_path):
    settings, model = scripted(respond=_grade)
    data = _answers(tmp_path / "answers.jsonl", lambda i: "no idea")
    result = run("answers", data, _config(tmp_path, settings), progress=False)

    decision = result.metrics["run"]["decision"]
    assert decision["items"] == 2 * UNITS and decision["units_used"] < UNITS / 2
    (pair,) = decision["pairs"]
    assert (pair["a"], pair["b"], pair["decision"]) == ("a-bot", "b-bot", "a higher") and pair["low"] < -3 < pair["high"] < 0
    assert decision["items_skipped"] == 2 * UNITS - len(result.records)
    assert decision["calls_saved"] == decision["items_skipped"] - decision["items_cancelled"]  # answers: one call per item
    assert len(model.prompts) == len(result.records) and result.complete
    judged = {int(r["id"][1:].split("-")[0]) for r in result.records}
    assert judged != set(range(len(judged)))  # a seeded random order of the units, not the file's first ones
    again = run("answers", data, _config(tmp_path, settings), progress=False)  # resumed: decided already, nothing judged
    assert again.evaluated_now == 0 and again.metrics["run"]["decision"]["pairs"][0]["decision"] == "a higher"


def test_calls_saved_are_those_the_server_never_saw(tmp_path):
    from dialeval.testing.openai_server import OpenAIStub, last_user_text
    from tests.helpers import http_config

    def grade(body):
        answer = last_user_text(body).split("<system_answer>")[-1]
        return json.dumps({"rationale": "checked", "score": 2 if "no idea" in answer else 5}) if "<system_answer>" in last_user_text(body) else "OK"

    data = _answers(tmp_path / "answers.jsonl", lambda i: "no idea")
    with OpenAIStub(respond=grade) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url}, concurrency=8,
                             options={"stop_when_decided": True})
        result = run("answers", data, config, progress=False)
        judged = sum(1 for body in server.requests if "<system_answer>" in last_user_text(body))
    decision = result.metrics["run"]["decision"]
    assert decision["items_skipped"] > 0
    assert decision["calls_saved"] == 2 * UNITS - judged  # requests cancelled in flight were sent: spent, not saved


def test_noise_is_judged_to_the_last_unit(tmp_path):
    settings, _ = scripted(respond=_grade)
    # b nearly misses the odd units, a the even ones: as many +1 as -1 differences
    data = _answers(tmp_path / "answers.jsonl", lambda i: f"nearly {2 * i}" if i % 2 else str(2 * i))
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    for r in rows:
        if r["system"] == "a-bot" and int(r["id"][1:].split("-")[0]) % 2 == 0:
            r["answer"] = f"nearly {r['answer']}"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("answers", data, _config(tmp_path, settings), progress=False)
    assert "decision" not in result.metrics["run"]
    assert len(result.records) == 2 * UNITS and result.complete


def test_the_option_is_checked_before_any_call(tmp_path):
    settings, model = scripted(respond=_grade)
    data = _answers(tmp_path / "answers.jsonl", lambda i: "no idea")
    with pytest.raises(ConfigError, match="decision_margin"):
        run("answers", data, _config(tmp_path, settings, decision_margin=-1), progress=False)
    assert model.prompts == []


def test_dialogue_versus_stops_once_one_system_surely_wins(tmp_path):
    from dialeval.testing.openai_server import OpenAIStub, prompt_of
    from tests.dialogue_helpers import write_jsonl
    from tests.helpers import http_config

    def conversations(reply):
        return [{"id": f"c{i}", "messages": [{"role": "user", "content": f"Question {i}?"},
                                             {"role": "assistant", "content": reply(i)}]} for i in range(40)]

    def referee(body):
        """B's replies say 'checked'; the pairwise judge prefers them in either order."""
        text = prompt_of(body)
        if "<candidate_1>" not in text:
            return '{"rationale": "fine", "verdict": 4}'
        first = text.split("<candidate_1>")[-1].split("</candidate_1>")[0]
        return '{"rationale": "better", "winner": "%s"}' % ("1" if "checked" in first else "2")

    data = write_jsonl(tmp_path / "a.jsonl", conversations(lambda i: f"Answer {i}."))
    versus = write_jsonl(tmp_path / "b.jsonl", conversations(lambda i: f"Answer {i}, checked."))
    with OpenAIStub(respond=referee) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url}, concurrency=1,
                             options={"versus": str(versus), "criteria": ["relevance"], "stop_when_decided": True})
        result = run("dialogue", str(data), config, progress=False)
    decision = result.metrics["run"]["decision"]
    (pair,) = decision["pairs"]
    assert pair["b"] == "versus" and pair["decision"] == "b higher"
    assert decision["units_used"] < 20 and len(result.records) < 40 and result.complete


def test_vdact_prediction_files_stop_once_one_system_surely_wins(tmp_path):
    from dialeval.testing.openai_server import OpenAIStub
    from tests.test_comparable_runs import _config as vdact_config
    from tests.test_comparable_runs import _grade as vdact_grade
    from tests.test_comparable_runs import _predictions

    dialogues = [f"{i}00001" for i in range(10, 22)]
    folder = tmp_path / "predictions"
    _predictions(folder, "base", dialogues, "answer")
    _predictions(folder, "better", dialogues, "better answer")
    with OpenAIStub(respond=vdact_grade) as server:
        config = vdact_config(server, tmp_path)
        config = config.model_copy(update={"options": {**config.options, "stop_when_decided": True}, "concurrency": 1})
        result = run("vdact", folder, config, progress=False)
    decision = result.metrics["run"]["decision"]
    (pair,) = decision["pairs"]
    assert (pair["a"], pair["b"], pair["decision"]) == ("test-base", "test-better", "b higher")
    assert decision["items"] == 2 * len(dialogues) and 0 < decision["items_skipped"] < decision["items"] and result.complete
    assert decision["units_used"] < 3 * len(dialogues)  # turns compared, of 3 per dialogue


def test_a_candidate_is_judged_against_a_baseline_run_until_the_regression_is_decided(tmp_path):
    from tests.gate_helpers import write_answers

    settings, model = scripted(respond=lambda m: json.dumps({"rationale": "r", "score": int(prompt_text(m).split("grade ")[-1][0])}))
    units = [f"u{i:02d}" for i in range(50)]
    base_config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, concurrency=1)
    baseline = run("answers", write_answers(tmp_path / "base.jsonl", {u: 4 + i % 2 for i, u in enumerate(units)}), base_config, progress=False)
    before = len(model.prompts)

    worse = write_answers(tmp_path / "worse.jsonl", {u: 2 + i % 2 for i, u in enumerate(units)})
    options = {"stop_when_decided": True, "decide_against": str(baseline.run_dir), "decision_margin": 0.2}
    result = run("answers", worse, base_config.model_copy(update={"options": options}), progress=False)
    decision = result.metrics["run"]["decision"]
    (pair,) = decision["pairs"]
    assert (pair["a"], pair["b"], pair["decision"]) == ("baseline", "run", "regression") and pair["high"] < -0.2
    assert len(model.prompts) - before == len(result.records) < len(units) / 2

    with pytest.raises(ConfigError, match="decide_against: .* is not a run folder"):
        run("answers", worse, base_config.model_copy(update={"options": {**options, "decide_against": str(tmp_path)}}), progress=False)


def test_units_the_baseline_judged_with_other_content_are_never_paired(tmp_path):
    def answers(path, grade, question):
        rows = [{"id": f"u{i:02d}", "question_id": f"q{i:02d}", "question": question(i), "reference": "ref",
                 "answer": f"answer grade {grade(i)}", "system": "bot"} for i in range(40)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path

    settings, _ = scripted(respond=lambda m: json.dumps({"rationale": "r", "score": int(prompt_text(m).split("grade ")[-1][0])}))
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, concurrency=1)
    baseline = run("answers", answers(tmp_path / "base.jsonl", lambda i: 4 + i % 2, lambda i: f"Question {i}?"), config, progress=False)
    changed = {f"q{i:02d}" for i in range(0, 40, 4)}  # every fourth question asked differently, under the same id
    worse = answers(tmp_path / "worse.jsonl", lambda i: 2 + i % 2, lambda i: f"Another question {i}?" if i % 4 == 0 else f"Question {i}?")
    options = {"stop_when_decided": True, "decide_against": str(baseline.run_dir), "decision_margin": 0.2}
    decision = run("answers", worse, config.model_copy(update={"options": options}), progress=False).metrics["run"]["decision"]
    assert decision["pairs"][0]["decision"] == "regression"
    assert set(decision["units_other_content"]) <= changed and decision["units_other_content"]
