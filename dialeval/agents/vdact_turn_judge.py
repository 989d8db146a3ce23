"""LAVE-style baseline: the same 1-3 scale from the single turn, no dialogue history."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.agents.base import AgentContext, register_agent
from dialeval.agents.vdact_common import rate_turn, turn_values
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
        return await rate_turn(ctx, "vdact.turn_judge", build_messages(ctx.template, state), state)

    return judge
