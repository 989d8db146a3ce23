"""A single judge that grades one answer against its reference on a 1-5 scale."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dialeval.agents.base import AgentContext, ask, register_agent
from dialeval.config import EvalContext
from dialeval.protocols.answers.data import answer_item

TEMPLATE = "answers/answer_judge"


class AnswerGrade(BaseModel):
    rationale: str
    score: int = Field(ge=1, le=5)


@register_agent("answer_judge", role="judge", benchmark="answers")
def answer_judge():
    """Grades one answer against a reference, 1-5, rationale first."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        item = answer_item(state)
        messages = ctx.template.render(
            context=item.context or "(no earlier turns)",
            question=item.question,
            reference=item.reference,
            answer=item.answer,
        )
        answer = await ask(ctx, "answer_judge", messages, AnswerGrade)
        return {"grade": answer.call.model_dump()}

    return judge
