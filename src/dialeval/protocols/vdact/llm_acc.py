"""A variant of LLM-Acc: its own call, with a one-sentence rationale before yes/no (scored 1 or 0).

The paper's LLM-Acc is `vdact.video_chatgpt` (one call gives LLM-Acc and LLM-Rel).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, field_validator

from dialeval.protocols.vdact.common import DRY_RUN_RATIONALE, turn_only_judge

TEMPLATE = "vdact/llm_acc"


class AccVerdict(BaseModel):
    rationale: str = ""
    correct: Literal["yes", "no"]

    @field_validator("correct", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value.strip().lower() if isinstance(value, str) else value


LLM_ACC = turn_only_judge(
    "vdact.llm_acc",
    template=TEMPLATE,
    schema=AccVerdict,
    lowest={"LLM-Acc": 0},
    scores=lambda v: {"LLM-Acc": 1 if v.correct == "yes" else 0},
    placeholder=lambda: AccVerdict(rationale=DRY_RUN_RATIONALE, correct="no"),
    summary="Variant: decides in its own call, with a rationale, whether a turn's answer is correct (1) or not (0).",
)
