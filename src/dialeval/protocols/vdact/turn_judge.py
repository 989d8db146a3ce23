"""VDEval with turn-based context: the session judge's one-shot example, no dialogue history.

With ``summary: none`` this differs from LAVE only in its worked example (the paper's
Table 6 makes that comparison).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.protocols.vdact.common import example_text, rating_judge, summary_template, turn_values
from dialeval.agents.templates import Template


def build_messages(template: Template, state: dict[str, Any]) -> list[BaseMessage]:
    """The prompt for the turn at ``state['index']`` alone (summary only if the run uses one)."""
    return template.render(**turn_values(state), example=example_text(state))


TURN_JUDGE = rating_judge(
    "vdact.turn_judge",
    summary_template("turn_judge"),
    messages=build_messages,
    summary="Grades a turn 1-3 from that turn alone (and the summary), with VDEval's one-shot example.",
)
