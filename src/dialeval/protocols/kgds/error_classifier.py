"""Error classification of unknowable opinions (paper Section 4.5, Appendix D.7).

Continues the opinion verifier's conversation: for an opinion it found unknowable, the
model names exactly one of five error types, with its reasoning.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from dialeval.agents.judge import Judge
from dialeval.protocols.kgds.common import ROLES, PLACEHOLDER_REASONING, load_messages
from dialeval.config import EvalContext
from dialeval.protocols.kgds.metrics import ERROR_TYPES

TEMPLATE = "kgds/error_classifier"
ErrorCode = Literal["OM", "IRIC", "IRU", "OSD", "OFI"]
_BY_NUMBER = dict(zip("12345", ERROR_TYPES))  # the paper's Error Type1..Type5 order


def normalise_error_type(value: Any) -> Any:
    """``"IRU"``, ``"iru"``, ``"Error Type3"``, ``"3"``, ``"implicit reference unclarified"`` -> ``"IRU"``."""
    if isinstance(value, int) and str(value) in _BY_NUMBER:
        return _BY_NUMBER[str(value)]
    if not isinstance(value, str):
        return value
    text = value.strip().strip(".").strip()
    if text.upper() in ERROR_TYPES:
        return text.upper()
    for code, name in ERROR_TYPES.items():
        if text.lower() == name:
            return code
    number = re.fullmatch(r"(?:error\s*type\s*)?([1-5])", text, flags=re.IGNORECASE)
    if number:
        return _BY_NUMBER[number.group(1)]
    return value


class ErrorClassification(BaseModel):
    """The paper's order: the detected type, then the reasoning (Figure 18)."""

    error_type: ErrorCode
    reasoning: str = Field(min_length=1)

    @field_validator("error_type", mode="before")
    @classmethod
    def _code(cls, value: Any) -> Any:
        return normalise_error_type(value)


CLASSIFIER = Judge(
    "kgds.error_classifier",
    "error_classifier",
    "kgds",
    TEMPLATE,
    ErrorClassification,
    placeholder=lambda: ErrorClassification(reasoning=PLACEHOLDER_REASONING, error_type="IRU"),
)


async def classify(check: dict[str, Any], context: EvalContext) -> dict[str, Any]:
    """One more turn in the opinion verifier's conversation (its model unless configured)."""
    answer = await CLASSIFIER.verdict(
        context,
        {},
        before=load_messages(check["messages"]),
        model=ROLES.model(context, CLASSIFIER.role),
        label=f"{CLASSIFIER.name}.{check['pattern']}",
    )
    return {
        "pattern": check["pattern"],
        "round": check["round"],
        "opinion": check["opinion"],
        "error_type": None if answer.value is None else answer.value.error_type,
        "call": answer.call.model_dump(),
    }


@CLASSIFIER.register
def error_classifier():
    """Names the one error type that explains why an opinion is unknowable."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        unknowable = [c for c in state.get("opinion_checks", []) if c["knowable"] is False and c["messages"]]
        return {"error_checks": list(await asyncio.gather(*(classify(c, context) for c in unknowable)))}

    return node
