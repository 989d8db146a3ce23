"""A judge is a declaration, and a benchmark's roles are one table: both as their users write them."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from dialeval.agents.base import AGENTS, resolve_agent
from dialeval.agents.judge import Judge, judge
from dialeval.agents.roles import Role, RoleTable
from dialeval.config import EvalContext
from dialeval.testing.scripted import prompt_text
from tests.helpers import scripted


class Verdict(BaseModel):
    rationale: str
    score: int


@pytest.fixture
def registry():
    """Agents a test declares are forgotten afterwards."""
    before = set(AGENTS)
    yield
    for name in set(AGENTS) - before:
        del AGENTS[name]


async def test_a_declared_judge_is_registered_under_its_name_and_keeps_its_verdict(registry):
    judge(
        "demo.length_judge",
        role="judge",
        benchmark="answers",
        template="answers/answer_judge",
        schema=Verdict,
        variables=lambda state, context: {"context": "", "question": state["q"], "reference": "r", "answer": state["a"]},
        output="grade",
        summary="Scores an answer's length (a test's judge).",
    )
    settings, model = scripted(respond=lambda messages: '{"rationale": "short", "score": 2}')
    context = EvalContext(default_model=settings, cache_path=None, agents={"judge": "demo.length_judge"})

    entry = resolve_agent("judge", "answer_judge", context)
    update = await entry.build()({"q": "Why?", "a": "Because."}, context)

    assert (entry.name, entry.role, entry.summary) == ("demo.length_judge", "judge", "Scores an answer's length (a test's judge).")
    assert update["grade"]["agent"] == "demo.length_judge" and update["grade"]["value"] == {"rationale": "short", "score": 2}
    assert "Because." in prompt_text(model.prompts[0])


async def test_skip_answers_without_a_call(registry):
    judge(
        "demo.skipping_judge",
        role="judge",
        benchmark="answers",
        template="answers/answer_judge",
        schema=Verdict,
        variables=lambda state, context: {},
        output="grade",
        skip=lambda state: {"grade": None} if not state["a"] else None,
        summary="Skips empty answers.",
    )
    settings, model = scripted(respond=lambda messages: "unused")
    context = EvalContext(default_model=settings, cache_path=None)
    assert await AGENTS["demo.skipping_judge"].build()({"a": ""}, context) == {"grade": None}
    assert model.prompts == []


def test_a_judge_with_one_template_per_case_names_it_in_each_call():
    per_case = Judge("demo.per_case", "judge", "answers", None, Verdict)
    with pytest.raises(ValueError, match="one template per case"):
        per_case.context(EvalContext())
    ctx = per_case.context(EvalContext(), template="answers/answer_judge", template_key="judge_a")
    assert ctx.role == "judge" and ctx.template.source.endswith("answer_judge.txt")


def test_the_role_table_gives_the_benchmark_its_roles_keys_and_nodes():
    roles = RoleTable(
        Role("summarizer", "x.summarizer", node="summarize", templates=("summarizer_a", "summarizer_b"), system=True),
        Role("reflection", "x.reflection", node="reflect", system=True, follows="summarizer"),
        Role("judge", "x.judge", node="judge", models=("judge", "captioner")),
    )
    assert roles.benchmark_fields() == {
        "roles": {"summarizer": "x.summarizer", "reflection": "x.reflection", "judge": "x.judge"},
        "model_roles": ("summarizer", "reflection", "judge", "captioner"),
        "template_keys": ("summarizer_a", "summarizer_b", "reflection", "judge"),
        "system_roles": ("summarizer", "reflection"),
    }
    assert roles.node("reflection") == "reflect"
    own = EvalContext(models={"summarizer": {"spec": "openai:gpt-4o"}})
    assert roles.model(own, "reflection").spec == "openai:gpt-4o"  # follows the summarizer's model
    with pytest.raises(ValueError, match="listed twice"):
        RoleTable(Role("judge", "a"), Role("judge", "b"))
