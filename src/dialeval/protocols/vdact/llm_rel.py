"""A variant of LLM-Rel: its own call, with a one-sentence rationale before the 0-5 score.

The paper's LLM-Rel is `vdact.video_chatgpt` (one call gives LLM-Acc and LLM-Rel).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dialeval.agents.judge import judge
from dialeval.protocols.vdact.common import DRY_RUN_RATIONALE, skip_unanswered, turn_only_values, turn_verdict

TEMPLATE = "vdact/llm_rel"


class RelScore(BaseModel):
    rationale: str = ""
    score: int = Field(ge=0, le=5)


LLM_REL = judge(
    "vdact.llm_rel",
    role="judge",
    benchmark="vdact",
    template=TEMPLATE,
    schema=RelScore,
    skip=skip_unanswered({"LLM-Rel": 0}),
    variables=lambda state, context: turn_only_values(state, "vdact.llm_rel"),
    output=turn_verdict(lambda v: {"LLM-Rel": v.score}),
    placeholder=lambda: RelScore(rationale=DRY_RUN_RATIONALE, score=2),
    summary="Variant: rates 0-5 in its own call, with a rationale, how well a turn's answer matches its reference.",
)
