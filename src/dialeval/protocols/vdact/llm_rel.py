"""A variant of LLM-Rel: its own call, with a one-sentence rationale before the 0-5 score.

The paper's LLM-Rel is `vdact.video_chatgpt` (one call gives LLM-Acc and LLM-Rel).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dialeval.agents.base import AgentContext, ask, register_agent
from dialeval.protocols.vdact.common import DRY_RUN_RATIONALE, advance, current_turn, turn_only_values, unanswered, verdict
from dialeval.config import EvalContext

TEMPLATE = "vdact/llm_rel"


class RelScore(BaseModel):
    rationale: str = ""
    score: int = Field(ge=0, le=5)


@register_agent("vdact.llm_rel", role="judge", benchmark="vdact")
def llm_rel():
    """Variant: rates 0-5 in its own call, with a rationale, how well a turn's answer matches its reference."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        skipped = unanswered(state, {"LLM-Rel": 0})
        if skipped is not None:
            return skipped
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        values = turn_only_values(state, "vdact.llm_rel")
        answer = await ask(
            ctx, "vdact.llm_rel", ctx.template.render(**values), RelScore,
            placeholder=lambda: RelScore(rationale=DRY_RUN_RATIONALE, score=2),
        )
        value = answer.value
        scores = None if value is None else {"LLM-Rel": value.score}
        return advance(state, verdict(current_turn(state), answer, scores, value.rationale if value else None))

    return judge
