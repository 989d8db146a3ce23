"""A variant of LLM-Acc: its own call, with a one-sentence rationale before yes/no (scored 1 or 0).

The paper's LLM-Acc is `vdact.video_chatgpt` (one call gives LLM-Acc and LLM-Rel).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_validator

from dialeval.agents.base import AgentContext, ask, register_agent
from dialeval.protocols.vdact.common import DRY_RUN_RATIONALE, advance, current_turn, turn_only_values, unanswered, verdict
from dialeval.config import EvalContext

TEMPLATE = "vdact/llm_acc"


class AccVerdict(BaseModel):
    rationale: str = ""
    correct: Literal["yes", "no"]

    @field_validator("correct", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value.strip().lower() if isinstance(value, str) else value


@register_agent("vdact.llm_acc", role="judge", benchmark="vdact")
def llm_acc():
    """Variant: decides in its own call, with a rationale, whether a turn's answer is correct (1) or not (0)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        skipped = unanswered(state, {"LLM-Acc": 0})
        if skipped is not None:
            return skipped
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        values = turn_only_values(state, "vdact.llm_acc")
        answer = await ask(
            ctx, "vdact.llm_acc", ctx.template.render(**values), AccVerdict,
            placeholder=lambda: AccVerdict(rationale=DRY_RUN_RATIONALE, correct="no"),
        )
        value = answer.value
        scores = None if value is None else {"LLM-Acc": 1 if value.correct == "yes" else 0}
        return advance(state, verdict(current_turn(state), answer, scores, value.rationale if value else None))

    return judge
