"""Checklist-CoT: list the key points of each modality, integrate them, then score.

The same scales and material as the pointwise judge; the answer carries the checklist
(image points, text points, integration) before the score.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dialeval.agents.base import AgentContext, register_agent
from dialeval.protocols.mdseval.common import MdsevalOptions, dialogue_of
from dialeval.protocols.mdseval.pointwise import score_all
from dialeval.config import EvalContext

TEMPLATE = "mdseval/checklist"


class ChecklistScore(BaseModel):
    image_points: list[str]
    text_points: list[str]
    integration: str
    score: int


@register_agent("mdseval.checklist", role="checklist", benchmark="mdseval")
def checklist():
    """Scores each summary on each aspect after a per-modality checklist (Checklist-CoT)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MdsevalOptions.of(context)
        if "checklist" not in options.evaluators:
            return {}
        ctx = AgentContext.for_role(context, "checklist", TEMPLATE)
        rows = await score_all(
            ctx, dialogue_of(state), options, evaluator="checklist", agent="mdseval.checklist", schema=ChecklistScore
        )
        return {"scores": rows}

    return judge
