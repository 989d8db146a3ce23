"""LLM-Acc baseline: is the answer correct, yes or no (scored 1 or 0)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_validator

from dialeval.agents.base import AgentContext, ask, register_agent
from dialeval.agents.vdact_common import DRY_RUN_RATIONALE, current_turn, turn_values, verdict
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
    """Decides whether a turn's answer is correct (1) or not (0) from that turn alone."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        answer = await ask(
            ctx,
            "vdact.llm_acc",
            ctx.template.render(**turn_values(state)),
            AccVerdict,
            placeholder=lambda: AccVerdict(rationale=DRY_RUN_RATIONALE, correct="no"),
        )
        value = answer.value
        score = None if value is None else (1 if value.correct == "yes" else 0)
        entry = verdict(current_turn(state), answer, score, value.rationale if value else None)
        return {"judged": [entry], "index": state.get("index", 0) + 1}

    return judge
