"""VDEval with turn-based context: the session judge's one-shot example, no dialogue history.

With ``summary: none`` this differs from LAVE only in its worked example (the paper's
Table 6 makes that comparison).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.agents.base import register_agent
from dialeval.protocols.vdact.common import example_of, rate_turn, render_example, template_for, turn_values, unanswered
from dialeval.config import EvalContext
from dialeval.agents.templates import Template


def build_messages(template: Template, state: dict[str, Any]) -> list[BaseMessage]:
    """The prompt for the turn at ``state['index']`` alone (summary only if the run uses one)."""
    return template.render(**turn_values(state), example=render_example(example_of(state)))


@register_agent("vdact.turn_judge", role="judge", benchmark="vdact")
def turn_judge():
    """Grades a turn 1-3 from that turn alone (and the summary), with VDEval's one-shot example."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        skipped = unanswered(state, {"rating": 1})
        if skipped is not None:
            return skipped
        ctx = template_for(context, state, "turn_judge")
        return await rate_turn(ctx, "vdact.turn_judge", build_messages(ctx.template, state), state)

    return judge
