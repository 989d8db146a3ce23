"""Prompt templates are files with sections and $variables; mistakes are errors."""

from __future__ import annotations

import pytest

from dialeval.agents.templates import TemplateError, load_template, parse_template


def test_sections_become_messages_and_json_braces_survive():
    t = parse_template('<<system>>\nYou grade.\n<<user>>\nQ: $question\nAnswer as {"score": <1-5>}', "inline")
    messages = t.render(question="Why?")
    assert [m.type for m in messages] == ["system", "human"]
    assert messages[1].content == 'Q: Why?\nAnswer as {"score": <1-5>}'
    assert t.variables == {"question"}


def test_missing_variable_is_an_error_naming_the_template():
    t = parse_template("<<user>>\n$a and $b", "mine.txt")
    with pytest.raises(TemplateError, match=r"mine.txt needs \['b'\]"):
        t.render(a=1)


def test_a_mistyped_path_is_never_taken_as_prompt_text(tmp_path):
    with pytest.raises(TemplateError, match="not found"):
        load_template(str(tmp_path / "judeg.txt"))
    with pytest.raises(TemplateError, match="not found"):
        load_template("answers/no_such_template")


def test_packaged_and_user_templates_load(tmp_path):
    assert "reference" in load_template("answers/answer_judge").variables
    own = tmp_path / "judge.txt"
    own.write_text("<<user>>\nGrade $answer")
    assert load_template(str(own)).render(answer="x")[0].content == "Grade x"


def test_a_template_without_sections_is_rejected():
    with pytest.raises(TemplateError, match="no <<system>> or <<user>>"):
        parse_template("just text $x", "plain.txt")
