"""LAVE-style baseline: the same 1-3 scale from the single turn, no dialogue history."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.agents.base import AgentContext, ask, register_agent
from dialeval.agents.vdact_common import DRY_RUN_RATIONALE, TurnRating, current_turn, turn_values, verdict
from dialeval.config import EvalContext
from dialeval.templates import Template

TEMPLATE = "vdact/turn_judge"


def build_messages(template: Template, state: dict[str, Any]) -> list[BaseMessage]:
    """The prompt for the turn at ``state['index']`` alone (summary only if the run uses one)."""
    return template.render(**turn_values(state))


@register_agent("vdact.turn_judge", role="judge", benchmark="vdact")
def turn_judge():
    """Grades a turn 1-3 from its question, reference and answer only (LAVE-style)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        answer = await ask(
            ctx,
            "vdact.turn_judge",
            build_messages(ctx.template, state),
            TurnRating,
            placeholder=lambda: TurnRating(rationale=DRY_RUN_RATIONALE, rating=2),
        )
        value = answer.value
        entry = verdict(current_turn(state), answer, value.rating if value else None, value.rationale if value else None)
        return {"judged": [entry], "index": state.get("index", 0) + 1}

    return judge
