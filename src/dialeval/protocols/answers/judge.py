"""A single judge that grades one answer against its reference on a 1-5 scale."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dialeval.agents.judge import judge
from dialeval.config import EvalContext
from dialeval.protocols.answers.data import answer_item

TEMPLATE = "answers/answer_judge"


class AnswerGrade(BaseModel):
    rationale: str
    score: int = Field(ge=1, le=5)


def variables(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
    item = answer_item(state)
    return {
        "context": item.context or "(no earlier turns)",
        "question": item.question,
        "reference": item.reference,
        "answer": item.answer or "(empty reply)",  # a system that said nothing is graded on saying nothing
    }


ANSWER_JUDGE = judge(
    "answer_judge",
    role="judge",
    benchmark="answers",
    template=TEMPLATE,
    schema=AnswerGrade,
    variables=variables,
    output="grade",
    summary="Grades one answer against a reference, 1-5, rationale first.",
)
