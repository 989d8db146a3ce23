"""The parser is strict about meaning and safe with hostile answers: a boolean is not a
number, the last JSON object decides, and huge or deeply nested replies are unparsed."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from dialeval.agents.base import AgentContext, ask
from dialeval.config import ModelSettings
from dialeval.models.client import ModelClient
from dialeval.agents.parsing import MAX_ANSWER_CHARS, ParseFailure, parse_answer
from dialeval.agents.templates import parse_template
from dialeval.testing.scripted import ScriptedChatModel


class Rating(BaseModel):
    rationale: str
    rating: int = Field(ge=1, le=5)


class Weighted(BaseModel):
    weight: float


class Verdict(BaseModel):
    index: int
    knowable: bool


class Verdicts(BaseModel):
    verdicts: list[Verdict]
    scores: dict[str, int] = {}


@pytest.mark.parametrize(
    "answer, schema, field",
    [
        ('{"rationale": "fine", "rating": true}', Rating, "rating"),
        ('{"weight": false}', Weighted, "weight"),
        ('{"verdicts": [{"index": true, "knowable": true}]}', Verdicts, "verdicts.0.index"),
        ('{"verdicts": [], "scores": {"a": true}}', Verdicts, "scores.a"),
    ],
)
def test_a_boolean_is_not_a_number(answer, schema, field):
    with pytest.raises(ParseFailure, match=rf"field '{field}': a boolean is not a number"):
        parse_answer(answer, schema)


def test_booleans_stay_valid_where_the_schema_wants_booleans():
    parsed = parse_answer('{"verdicts": [{"index": 1, "knowable": true}]}', Verdicts)
    assert parsed.verdicts[0].knowable is True and parsed.verdicts[0].index == 1


def test_a_draft_never_stands_in_for_a_final_object_out_of_range():
    answer = 'Draft: {"rationale": "ok", "rating": 4}. Final: {"rationale": "better", "rating": 9}'
    with pytest.raises(ParseFailure, match="rating"):
        parse_answer(answer, Rating)


def test_two_different_fenced_or_inline_verdicts_are_unparsed():
    answer = '```json\n{"rationale": "first", "rating": 2}\n```\nOn reflection: {"rationale": "second", "rating": 3}'
    with pytest.raises(ParseFailure, match="2 different verdicts"):
        parse_answer(answer, Rating)


@pytest.mark.parametrize("opener, closer", [("[", "]"), ("{", "}"), ('{"a":', "}")])
def test_deeply_nested_replies_are_unparsed_not_a_crash(opener, closer):
    hostile = opener * 100_000 + closer * 100_000
    with pytest.raises(ParseFailure):
        parse_answer(hostile, Rating)
    nested_in_budget = "{\"rating\": " + "[" * 5_000 + "]" * 5_000 + "}"
    with pytest.raises(ParseFailure):
        parse_answer(nested_in_budget, Rating)


def test_a_huge_reply_is_unparsed_without_reading_it():
    huge = '{"rationale": "' + "x" * 5_000_000 + '", "rating": 3}'
    with pytest.raises(ParseFailure, match="answer too long to read"):
        parse_answer(huge, Rating)


async def test_a_huge_reply_is_stored_cut_with_a_note():
    huge = "ramble " * 1_000_000
    model = ScriptedChatModel(respond=lambda m: huge)
    client = ModelClient(ModelSettings(spec="openai:huge-reply"), model)
    template = parse_template("<<user>>\nRate <answer>\n$answer\n</answer>", "inline")
    ctx = AgentContext(role="judge", client=client, template=template, parse_retries=1, cache_path=None, options={})
    answer = await ask(ctx, "judge", template.render(answer="a"), Rating)
    assert answer.call.status == "unparsed" and "too long" in answer.call.reason
    assert len(answer.call.raw) < MAX_ANSWER_CHARS + 100 and answer.call.raw.endswith(f"{len(huge)} characters in all]")
    assert all(len(str(m.content)) < MAX_ANSWER_CHARS + 500 for m in model.prompts[-1])  # the retry did not resend it
