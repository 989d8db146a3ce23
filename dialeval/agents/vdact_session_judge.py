"""VDEval: the session-based judge. Turn t is graded with turns 1..t-1 and their verdicts.

The prompt holds the instruction with a one-shot example dialogue (the user's, else
dialeval's built-in one), the video summary when the run uses one, the earlier turns
with the judge's own rationale and rating, and the turn to grade.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.agents.base import AgentContext, register_agent
from dialeval.agents.vdact_common import (
    current_turn,
    example_of,
    rate_turn,
    render_example,
    template_for,
    turn_block,
    turn_values,
    unanswered,
)
from dialeval.config import EvalContext
from dialeval.templates import Template

NO_HISTORY = "(none: this is the first turn)"
NO_VERDICT = "(no grade: the grader's reply for this turn could not be read)"


def render_history(turns: list[dict[str, Any]], judged: list[dict[str, Any]]) -> str:
    """Earlier turns with question, reference, candidate, rationale and rating, in order."""
    if not judged:
        return NO_HISTORY
    by_id = {t["id"]: t for t in turns}
    blocks = []
    for entry in judged:
        turn = by_id[entry["turn_id"]]
        if entry["scores"] is None:
            said = NO_VERDICT
        else:
            said = f"{entry['rationale'].strip()} So rating={int(entry['scores']['rating'])}"
        blocks.append(turn_block(f"Turn {turn['turn_num']}", turn["question"], turn["reference"], turn["candidate"], said))
    return "\n\n".join(blocks)


def build_messages(template: Template, state: dict[str, Any]) -> list[BaseMessage]:
    """The prompt for the turn at ``state['index']``, carrying every verdict so far."""
    return template.render(
        **turn_values(state),
        example=render_example(example_of(state)),
        turn_num=current_turn(state)["turn_num"],
        history=render_history(state["dialogue"]["turns"], state.get("judged", [])),
    )


@register_agent("vdact.session_judge", role="judge", benchmark="vdact")
def session_judge():
    """Grades a turn 1-3 given the video summary and the judged dialogue history (VDEval)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        skipped = unanswered(state, {"rating": 1})
        if skipped is not None:
            return skipped
        ctx: AgentContext = template_for(context, state, "session_judge")
        return await rate_turn(ctx, "vdact.session_judge", build_messages(ctx.template, state), state)

    return judge
