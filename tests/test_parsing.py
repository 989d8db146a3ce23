"""The shared parser: tolerant of shape, strict about meaning, never executes text."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from dialeval.agents.parsing import ParseFailure, parse_answer


class Rating(BaseModel):
    rationale: str
    rating: int = Field(ge=1, le=3)


class Verdict(BaseModel):
    label: Literal["knowable", "unknowable"]


@pytest.mark.parametrize(
    "answer",
    [
        '{"rationale": "matches", "rating": 3}',
        'Sure! Here it is:\n```json\n{"rationale": "matches", "rating": 3}\n```\nHope that helps.',
        "```\n{'rationale': 'matches', 'rating': 3}\n```",
        "The answer matches the reference. {\"rationale\": \"matches\", \"rating\": 3,}",
        "{'Rationale': 'matches', 'Rating': 3}",
        'Scored {"rationale": "matches", "rating": 3}; in short: {"rating": 3}',
        '{"rationale": "it says {almost} right", "rating": "3"}',
    ],
)
def test_json_in_many_shapes_is_read(answer: str):
    assert parse_answer(answer, Rating).rating == 3


def test_a_key_value_ending_keeps_the_prose_as_rationale():
    parsed = parse_answer("The candidate names the right tool but the wrong room. So rating=2", Rating)
    assert parsed.rating == 2
    assert parsed.rationale.startswith("The candidate names the right tool")


def test_colon_style_endings_and_literals():
    assert parse_answer("Reasoning...\nlabel: unknowable", Verdict).label == "unknowable"
    assert parse_answer("rationale: short\nrating: 1", Rating).rating == 1


@pytest.mark.parametrize(
    "answer, reason",
    [
        ("", "empty answer"),
        ("   \n ", "empty answer"),
        ("I think it is good.", "no JSON object"),
        ('{"rationale": "x", "rating": 7}', "rating"),
        ('First try {"rationale": "x", "rating": 9}, corrected: {"rationale": "ok", "rating": 3}', "two different verdicts"),
        ('{"rationale": "x"}', "rating"),
        ("So rating=excellent", "rating"),
        ('{"label": "maybe"}', "label"),
        ("{'rationale': __import__('os').getcwd(), 'rating': 2}", "no JSON object"),
        ('{"rationale": "cut off here, "rat', "no JSON object"),
    ],
)
def test_answers_without_a_valid_value_fail_with_a_reason(answer: str, reason: str):
    with pytest.raises(ParseFailure) as failure:
        parse_answer(answer, Rating if "label" not in answer else Verdict)
    assert reason in failure.value.reason


def test_model_output_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    evil = f"{{'rationale': open({str(marker)!r}, 'w').write('x'), 'rating': 2}}"
    with pytest.raises(ParseFailure):
        parse_answer(evil, Rating)
    assert not marker.exists()
