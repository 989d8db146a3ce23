"""LLM-Acc and LLM-Rel as Video-ChatGPT's evaluation defines them: one call, yes/no and 0-5.

The judge sees the question, the correct answer and the prediction only, and answers
with a dictionary ``{'pred': 'yes'|'no', 'score': 0-5}`` and no explanation. LLM-Acc is
the share of ``yes``, LLM-Rel the mean score; the score is read as Video-ChatGPT's
scoring reads it, as an integer (``int()``, so 4.8 counts 4).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from dialeval.protocols.vdact.common import turn_only_judge

TEMPLATE = "vdact/video_chatgpt"


class MatchVerdict(BaseModel):
    """Video-ChatGPT's verdict: does the prediction match (pred), and how closely (score 0-5)."""

    pred: Literal["yes", "no"]
    score: float = Field(ge=0, le=5)

    @field_validator("pred", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value.strip().strip(".!'\"").lower() if isinstance(value, str) else value


VIDEO_CHATGPT = turn_only_judge(
    "vdact.video_chatgpt",
    shown_as="Video-ChatGPT",
    template=TEMPLATE,
    template_key="video_chatgpt",
    schema=MatchVerdict,
    lowest={"LLM-Acc": 0, "LLM-Rel": 0},
    scores=lambda v: {"LLM-Acc": 1 if v.pred == "yes" else 0, "LLM-Rel": int(v.score)},
    placeholder=lambda: MatchVerdict(pred="no", score=2),
    summary="Decides yes/no and scores 0-5 how well a turn's answer matches its reference (LLM-Acc, LLM-Rel).",
)
