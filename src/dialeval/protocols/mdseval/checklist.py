"""Checklist-CoT: list the key points of each modality, integrate them, then score.

The same scales and material as the pointwise judge; the answer carries the checklist
(image points, text points, integration) before the score.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dialeval.agents.judge import Judge
from dialeval.protocols.mdseval.common import MdsevalOptions, dialogue_of
from dialeval.protocols.mdseval.pointwise import score_all
from dialeval.config import EvalContext

TEMPLATE = "mdseval/checklist"


class ChecklistScore(BaseModel):
    image_points: list[str]
    text_points: list[str]
    integration: str
    score: int


CHECKLIST = Judge("mdseval.checklist", "checklist", "mdseval", TEMPLATE, ChecklistScore)


@CHECKLIST.register
def checklist():
    """Scores each summary on each aspect after a per-modality checklist (Checklist-CoT)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MdsevalOptions.of(context)
        if CHECKLIST.role not in options.evaluators:
            return {}
        return {"scores": await score_all(CHECKLIST, context, dialogue_of(state), options)}

    return judge
