"""Ability judges: one template per ability, 0-5 against the ground-truth answer.

Only answers whose call is ``ok`` are judged; the others stay unjudged and are counted.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field

from dialeval.agents.base import ask, register_agent
from dialeval.agents.mmrc_common import agent_context, conversation_of
from dialeval.agents.mmrc_responder import choices_text
from dialeval.config import EvalContext
from dialeval.data.mmrc import Question


class AbilityScore(BaseModel):
    rationale: str
    score: int = Field(ge=0, le=5)


def template_for(ability: str) -> tuple[str, str]:
    """(template key in the run config, packaged template) of an ability's judge."""
    key = f"judge_{ability.lower()}"
    return key, f"mmrc/{key}"


def ground_truth_detail(question: Question) -> str:
    """The labels the objective metrics use, shown to the judge as well."""
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


@register_agent("mmrc.ability_judge", role="judge", benchmark="mmrc")
def ability_judge():
    """Scores each answer 0-5 with the criteria of its ability (IE, CR, IU, IM, MR, AR)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        conv = conversation_of(state)

        async def one(answer: dict[str, Any]) -> dict[str, Any]:
            question = conv.questions[answer["index"]]
            key, default = template_for(question.ability)
            ctx = agent_context(context, "judge", key, default)
            messages = ctx.template.render(
                question=question.question,
                choices=choices_text(question),
                reference=question.answer,
                detail=ground_truth_detail(question),
                answer=answer["call"]["raw"].strip(),
            )
            result = await ask(ctx, f"mmrc.judge_{question.ability.lower()}", messages, AbilityScore)
            return {"condition": answer["condition"], "index": answer["index"], "call": result.call.model_dump()}

        judged = [a for a in state.get("answers", []) if a["call"]["status"] == "ok"]
        return {"grades": list(await asyncio.gather(*(one(a) for a in judged)))}

    return judge
