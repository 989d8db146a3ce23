"""One verdict on one criterion: schema, scale check, and the unit record kept in results."""

from __future__ import annotations

import json
from typing import Any, Callable

from pydantic import BaseModel

from dialeval.agents.base import Answer
from dialeval.protocols.dialogue.context import View
from dialeval.conversation.rubric import Criterion


class Verdict(BaseModel):
    """Rationale first, then the verdict on the criterion's scale."""

    rationale: str
    verdict: int | str


def checker(criterion: Criterion) -> Callable[[Verdict], str | None]:
    """The meaning check of :func:`ask`: a verdict off the criterion's scale is unreadable."""

    def check(value: Verdict) -> str | None:
        if criterion.scale.read(value.verdict) is None:
            return f"the verdict {value.verdict!r} is not {criterion.scale.describe()}"
        return None

    return check


def scorer(criterion: Criterion) -> Callable[[Verdict], float | None]:
    """A verdict as the number an ensemble or cascade combines (a label's rank on labels)."""

    def score(value: Verdict) -> float | None:
        read = criterion.scale.read(value.verdict)
        return None if read is None else criterion.scale.score(read)

    return score


def placeholder(criterion: Criterion) -> Callable[[], Verdict]:
    """A dry run's stand-in verdict: the scale's first value."""
    scale = criterion.scale
    first: int | str = scale.low if scale.low is not None else scale.labels[0]
    return lambda: Verdict(rationale="dry-run", verdict=first)


def json_schema(criterion: Criterion) -> dict[str, Any]:
    """The answer's shape for decoders that follow a schema (local models)."""
    return {
        "type": "object",
        "properties": {"rationale": {"type": "string", "maxLength": 400}, "verdict": criterion.scale.json_schema()},
        "required": ["rationale", "verdict"],
    }


def scale_values(criterion: Criterion) -> dict[str, str]:
    """Template values describing the criterion."""
    examples = "\n".join(f"Example: {e}" for e in criterion.examples)
    return {
        "criterion": criterion.name,
        "description": criterion.description.strip(),
        "scale": criterion.scale.describe(),
        "examples": examples,
    }


def not_applicable(criterion: Criterion, reason: str, **where: Any) -> dict[str, Any]:
    """A unit the criterion does not apply to (it needs what the conversation lacks)."""
    return {**where, "criterion": criterion.name, "status": "not_applicable", "reason": reason,
            "verdict": None, "score": None, "rationale": None}


def unit(criterion: Criterion, view: View, answer: Answer[Verdict] | None, **where: Any) -> dict[str, Any]:
    """The result of one (unit, criterion): status, verdict, score, rationale, context size.

    ``over_budget`` (the prompt was not sent) and ``unparsed``/``truncated`` keep no
    score; the call's raw answer stays in ``call``."""
    out: dict[str, Any] = {**where, "criterion": criterion.name, "context": view.record()}
    if answer is None:
        return {**out, "status": "over_budget", "verdict": None, "score": None, "rationale": None, "call": None}
    value = criterion.scale.read(answer.value.verdict) if answer.value is not None else None
    score = None if value is None else criterion.scale.score(value)
    if value is not None and answer.call.judge is not None:  # issue 49: a mean or median of verdicts may fall between two
        score = answer.call.judge["score"]
        value = criterion.scale.label_of(score) or (int(score) if float(score).is_integer() and criterion.scale.numeric else value)
    return {
        **out,
        "status": answer.call.status,
        "verdict": value,
        "score": score,
        "rationale": answer.value.rationale if answer.value is not None else None,
        "call": answer.call.model_dump(),
    }


def shown(unit_record: dict[str, Any]) -> str | None:
    """A verdict as the session judge sees it again at later turns."""
    if unit_record.get("verdict") is None:
        return None
    return f"{unit_record['verdict']} ({unit_record.get('rationale') or ''})"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)
