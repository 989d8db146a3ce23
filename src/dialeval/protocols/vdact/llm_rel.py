"""A variant of LLM-Rel: its own call, with a one-sentence rationale before the 0-5 score.

The paper's LLM-Rel is `vdact.video_chatgpt` (one call gives LLM-Acc and LLM-Rel).
"""

from __future__ import annotations


from pydantic import BaseModel, Field

from dialeval.protocols.vdact.common import DRY_RUN_RATIONALE, turn_only_judge

TEMPLATE = "vdact/llm_rel"


class RelScore(BaseModel):
    rationale: str = ""
    score: int = Field(ge=0, le=5)


LLM_REL = turn_only_judge(
    "vdact.llm_rel",
    template=TEMPLATE,
    schema=RelScore,
    lowest={"LLM-Rel": 0},
    scores=lambda v: {"LLM-Rel": v.score},
    placeholder=lambda: RelScore(rationale=DRY_RUN_RATIONALE, score=2),
    summary="Variant: rates 0-5 in its own call, with a rationale, how well a turn's answer matches its reference.",
)
