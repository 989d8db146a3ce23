"""Ability judges: one template per ability, a 0-5 score against the ground truth.

- ``mmrc.ability_judge`` (default) is the paper's judge (Appendix I): it sees the
  model's prediction and the label, nothing else, and returns only the score.
- ``mmrc.rubric_judge`` is our richer variant: it also sees the question, the options
  and the objective labels, grades with a written rubric per ability and gives a
  rationale first.

Failures: an answer the model under test cut off is judged as it stands (the paper caps
answers and judges what is there); an empty answer is the system's failure and scores
0 without a call; an answer whose call errored is not judged (its item fails). A judge
verdict that cannot be read is left out of the means and counted.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, Field

from dialeval.agents.base import AgentCall
from dialeval.agents.judge import Judge
from dialeval.protocols.mmrc.common import conversation_of
from dialeval.protocols.mmrc.responder import choices_text
from dialeval.config import EvalContext
from dialeval.protocols.mmrc.data import Question

EMPTY_ANSWER = "empty answer"


class PaperScore(BaseModel):
    score: int = Field(ge=0, le=5)


class AbilityScore(BaseModel):
    rationale: str
    score: int = Field(ge=0, le=5)


def template_for(ability: str, variant: str = "") -> tuple[str, str]:
    """(template key in the run config, packaged template) of an ability's judge."""
    key = f"judge_{variant}{ability.lower()}"
    return key, f"mmrc/{key}"


def ground_truth_detail(question: Question) -> str:
    """The labels the objective metrics use, shown to the rubric judge as well."""
    lines = []
    if question.items:
        lines.append("Ground-truth items: " + "; ".join(question.items))
    if question.images:
        lines.append("Ground-truth images (numbered in order of appearance): " + ", ".join(map(str, question.images)))
    if question.refuse is not None:
        lines.append(
            "Right behaviour: refuse, the conversation does not contain the answer"
            if question.refuse
            else "Right behaviour: answer, the conversation contains the answer"
        )
    return "\n".join(lines)


Grade = Callable[[Question, str, EvalContext], Awaitable[AgentCall]]


async def _grade_all(state: dict[str, Any], context: EvalContext, grade: Grade) -> dict[str, Any]:
    """Every answer's grade: the judge's for answers with text, 0 for empty ones."""
    conv = conversation_of(state)

    async def one(answer: dict[str, Any]) -> dict[str, Any]:
        text = answer["call"]["raw"].strip()
        out = {"condition": answer["condition"], "index": answer["index"]}
        if not text:
            return {**out, "source": EMPTY_ANSWER, "score": 0, "call": None}
        call = await grade(conv.questions[answer["index"]], text, context)
        score = call.value["score"] if call.status == "ok" and call.value else None
        return {**out, "source": "judge", "score": score, "call": call.model_dump()}

    todo = [a for a in state.get("answers", []) if a["call"]["status"] != "error"]
    return {"grades": list(await asyncio.gather(*(one(a) for a in todo)))}


# one template per ability: each call names its own (template_for)
ABILITY_JUDGE = Judge("mmrc.ability_judge", "judge", "mmrc", None, PaperScore)
RUBRIC_JUDGE = Judge("mmrc.rubric_judge", "judge", "mmrc", None, AbilityScore)


@ABILITY_JUDGE.register
def ability_judge():
    """The paper's judge: the prediction and the label in, a 0-5 score out (per ability)."""

    async def grade(question: Question, text: str, context: EvalContext) -> AgentCall:
        key, default = template_for(question.ability)
        values = {"prediction": text, "reference": question.answer}
        answer = await ABILITY_JUDGE.verdict(context, values, template=default, template_key=key, label=f"mmrc.{key}")
        return answer.call

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        return await _grade_all(state, context, grade)

    return judge


@RUBRIC_JUDGE.register
def rubric_judge():
    """Our richer judge: question, labels and a rubric per ability; rationale, then 0-5."""

    async def grade(question: Question, text: str, context: EvalContext) -> AgentCall:
        key, default = template_for(question.ability, "rubric_")
        values = {
            "question": question.question,
            "choices": choices_text(question),
            "reference": question.answer,
            "detail": ground_truth_detail(question),
            "answer": text,
        }
        label = f"{RUBRIC_JUDGE.name}_{question.ability.lower()}"
        return (await RUBRIC_JUDGE.verdict(context, values, template=default, template_key=key, label=label)).call

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        return await _grade_all(state, context, grade)

    return judge
