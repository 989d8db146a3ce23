"""LAVE as the VDEval paper ran it: the turn-based instruction with LAVE's own few-shot demos.

LAVE (Mañas et al., AAAI 2024) rates 1-3 with a rationale first and shows general
visual-question demonstrations: 8 of them, from a yes/no set when the reference is a
bare yes or no. The demonstrations here are dialeval's own, in that shape.
"""

from __future__ import annotations

from dialeval.agents.templates import prompt_file

import json
from functools import lru_cache
from typing import Any

from langchain_core.messages import BaseMessage

from dialeval.protocols.vdact.common import rating_judge, turn_only_values
from dialeval.agents.templates import Template

TEMPLATE = "vdact/turn_judge_no_summary"  # the instruction VDEval's turn-based, summary-free variant uses
SHOTS = 8


@lru_cache(maxsize=1)
def demonstrations() -> dict[str, list[dict[str, Any]]]:
    text = prompt_file("vdact/lave_demos.json").read_text(encoding="utf-8")
    return json.loads(text)


def is_binary(reference: str) -> bool:
    """LAVE's test: the reference is a bare yes or no."""
    return reference.strip().lower().rstrip(".") in ("yes", "no")


def render_demos(reference: str) -> str:
    demos = demonstrations()["binary" if is_binary(reference) else "general"][:SHOTS]
    return "\n\n".join(
        f"Question: {d['question']}\nReference answers: {', '.join(d['references'])}\n"
        f"Candidate answer: {d['candidate']}\nOutput: {d['rationale']} So rating={d['rating']}"
        for d in demos
    )


def build_messages(template: Template, state: dict[str, Any]) -> list[BaseMessage]:
    values = turn_only_values(state, "LAVE")
    return template.render(**values, example=render_demos(values["reference"]))


LAVE_JUDGE = rating_judge(
    "vdact.lave_judge",
    TEMPLATE,
    template_key="lave",
    messages=build_messages,
    summary="Grades a turn 1-3 from that turn alone with LAVE-style general VQA demonstrations.",
)
