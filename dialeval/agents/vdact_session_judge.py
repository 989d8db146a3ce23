"""VDEval: the session-based judge. Turn t is graded with turns 1..t-1 and their verdicts."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.agents.base import AgentContext, register_agent
from dialeval.agents.vdact_common import current_turn, rate_turn, turn_values
from dialeval.config import EvalContext
from dialeval.templates import Template

TEMPLATE = "vdact/session_judge"
NO_HISTORY = "(none: this is the first turn)"
NO_VERDICT = "(none: the grader's answer for this turn could not be read)"


def render_history(turns: list[dict[str, Any]], judged: list[dict[str, Any]]) -> str:
    """Earlier turns with question, reference, candidate, rationale and rating, in order."""
    if not judged:
        return NO_HISTORY
    by_id = {t["id"]: t for t in turns}
    blocks = []
    for entry in judged:
        turn = by_id[entry["turn_id"]]
        if entry["score"] is None:
            said = NO_VERDICT
        else:
            said = f"{entry['rationale'].strip()} So rating={entry['score']}"
        blocks.append(
            f"Turn {turn['turn_num']}\n"
            f"Question: {turn['question']}\n"
            f"Reference answer: {turn['reference']}\n"
            f"Candidate answer: {turn['candidate']}\n"
            f"Verdict: {said}"
        )
    return "\n\n".join(blocks)


def build_messages(template: Template, state: dict[str, Any]) -> list[BaseMessage]:
    """The prompt for the turn at ``state['index']``, carrying every verdict so far."""
    judged = state.get("judged", [])
    return template.render(
        **turn_values(state),
        turn_num=current_turn(state)["turn_num"],
        history=render_history(state["dialogue"]["turns"], judged),
    )


@register_agent("vdact.session_judge", role="judge", benchmark="vdact")
def session_judge():
    """Grades a turn 1-3 given the video summary and the judged dialogue history (VDEval)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        return await rate_turn(ctx, "vdact.session_judge", build_messages(ctx.template, state), state)

    return judge
