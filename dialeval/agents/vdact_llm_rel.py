"""LLM-Rel baseline: how well the answer matches the reference, 0-5."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dialeval.agents.base import AgentContext, ask, register_agent
from dialeval.agents.vdact_common import DRY_RUN_RATIONALE, current_turn, turn_values, verdict
from dialeval.config import EvalContext

TEMPLATE = "vdact/llm_rel"


class RelScore(BaseModel):
    rationale: str = ""
    score: int = Field(ge=0, le=5)


@register_agent("vdact.llm_rel", role="judge", benchmark="vdact")
def llm_rel():
    """Rates 0-5 how well a turn's answer matches its reference, from that turn alone."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        answer = await ask(
            ctx,
            "vdact.llm_rel",
            ctx.template.render(**turn_values(state)),
            RelScore,
            placeholder=lambda: RelScore(rationale=DRY_RUN_RATIONALE, score=2),
        )
        value = answer.value
        entry = verdict(current_turn(state), answer, value.score if value else None, value.rationale if value else None)
        return {"judged": [entry], "index": state.get("index", 0) + 1}

    return judge
