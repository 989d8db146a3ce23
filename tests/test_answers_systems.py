"""Two systems' answers to the same questions in one `answers` run get a paired test."""

from __future__ import annotations

import json

from dialeval.config import RunConfig
from dialeval.protocols.answers.data import AnswerItem
from dialeval.evaluation import run
from dialeval.testing.scripted import prompt_text
from tests.helpers import scripted

QUESTIONS = [(f"q{i}", f"What is {i} plus {i}?", f"{2 * i}") for i in range(12)]


def _write(path, extra=None):
    rows = []
    for qid, question, reference in QUESTIONS:
        rows.append({"id": f"{qid}-good", "question": question, "reference": reference, "answer": reference, "system": "good-bot"})
        rows.append({"id": f"{qid}-bad", "question": question, "reference": reference, "answer": "no idea", "system": "bad-bot"})
    rows += extra or []
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _grade(messages):
    """5 for an answer equal to the reference, 2 for "no idea"."""
    answer = prompt_text(messages).split("<system_answer>")[-1]
    return json.dumps({"rationale": "checked", "score": 2 if "no idea" in answer else 5})


def test_two_systems_on_the_same_questions_are_paired(tmp_path):
    settings, _ = scripted(respond=_grade)
    data = _write(tmp_path / "answers.jsonl")
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0)
    result = run("answers", data, config, progress=False)

    (test,) = result.metrics["system_tests"]
    assert (test["a"], test["b"], test["n"]) == ("bad-bot", "good-bot", 12)
    assert test["mean_a"] == 2 and test["mean_b"] == 5 and test["mean_diff"] == 3
    assert test["p_value"] < 0.01 and not test["few_units"]
    assert "Systems compared question by question" in result.report_path.read_text()


def test_a_question_answered_by_one_system_only_is_left_out_and_counted(tmp_path):
    settings, _ = scripted(respond=_grade)
    lone = {"id": "extra", "question": "Only one bot saw this?", "reference": "yes", "answer": "yes", "system": "good-bot"}
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0)
    result = run("answers", _write(tmp_path / "answers.jsonl", [lone]), config, progress=False)

    (test,) = result.metrics["system_tests"]
    assert (test["n"], test["only_b"], test["only_a"]) == (12, 1, 0)


def test_question_id_pairs_answers_whose_wording_differs():
    a = AnswerItem(id="1", question="What is two plus two?", reference="4", answer="4", system="a", question_id="sum")
    b = AnswerItem(id="2", question="what is two plus two ?", reference="four", answer="4", system="b", question_id="sum")
    c = AnswerItem(id="3", question="What is two plus two?", reference="4", answer="5", system="c")
    d = AnswerItem(id="4", question=" What is two plus two?", reference="4 ", answer="4", system="d")
    assert a.pair_key == b.pair_key == "sum"
    assert c.pair_key == d.pair_key != "sum"


def test_one_system_has_no_paired_test(tmp_path):
    settings, _ = scripted(respond=_grade)
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": "x", "question": "Q?", "reference": "r", "answer": "r", "system": "only"}) + "\n")
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0)
    result = run("answers", data, config, progress=False)
    assert result.metrics["system_tests"] == []
    assert "Systems compared" not in result.report_path.read_text()
