"""VDEval: the session-based judge. Turn t is graded with turns 1..t-1 and their verdicts.

The prompt holds the instruction with a one-shot example dialogue (the user's, else
dialeval's built-in one), the video summary when the run uses one, the earlier turns
with the judge's own rationale and rating, and the turn to grade.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.protocols.vdact.common import (
    current_turn,
    example_text,
    rating_judge,
    summary_template,
    turn_block,
    turn_values,
)
from dialeval.models.prompt_cache import mark_stable_prefix
from dialeval.agents.templates import Template

NO_HISTORY = "(none: this is the first turn)"
NO_VERDICT = "(no grade: the grader's reply for this turn could not be read)"


def history_blocks(turns: list[dict[str, Any]], judged: list[dict[str, Any]]) -> list[str]:
    """Earlier turns with question, reference, candidate, rationale and rating, in order."""
    by_id = {t["id"]: t for t in turns}
    blocks = []
    for entry in judged:
        turn = by_id[entry["turn_id"]]
        if entry["scores"] is None:
            said = NO_VERDICT
        else:
            said = f"{entry['rationale'].strip()} So rating={int(entry['scores']['rating'])}"
        blocks.append(turn_block(f"Turn {turn['turn_num']}", turn["question"], turn["reference"], turn["candidate"], said))
    return blocks


def build_messages(template: Template, state: dict[str, Any]) -> list[BaseMessage]:
    """The prompt for the turn at ``state['index']``, carrying every verdict so far.

    Everything before the turn to grade (instructions, example, summary, earlier turns)
    is what the next turn's prompt repeats, so API prompt caches serve it; for Anthropic
    the user message notes where each earlier turn ends (see ``mark_stable_prefix``).
    """
    blocks = history_blocks(state["dialogue"]["turns"], state.get("judged", []))
    history = "\n\n".join(blocks) or NO_HISTORY
    messages = template.render(
        **turn_values(state),
        example=example_text(state),
        turn_num=current_turn(state)["turn_num"],
        history=history,
    )
    text = messages[-1].content
    start = text.find(history) if blocks and isinstance(text, str) else -1
    if start >= 0:
        ends, end = [], start - len("\n\n")  # where each earlier turn ends, as running sums (not one join per turn)
        for block in blocks:
            end += len("\n\n") + len(block)
            ends.append(end)
        messages[-1] = mark_stable_prefix(messages[-1], ends)
    return messages


SESSION_JUDGE = rating_judge(
    "vdact.session_judge",
    summary_template("session_judge"),
    messages=build_messages,
    summary="Grades a turn 1-3 given the video summary and the judged dialogue history (VDEval).",
)
