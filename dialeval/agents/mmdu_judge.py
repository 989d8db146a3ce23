"""The MMDU judge: every answered turn scored 1-10 on six dimensions and Overall.

One call per turn, with that turn's question, reference answer and the system's
answer (between tags named as material, never instructions) and the dialogue's images
(option ``judge_images``). The judge explains first, then gives a dictionary of integer
scores. Each dimension is read on its own: a score missing, outside 1-10 or not an
integer makes that dimension of that turn ``unparsed`` while the others still count.
An answer with no readable score at all is retried, then recorded ``unparsed``.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field, model_validator

from dialeval.agents.base import AgentContext, ask, register_agent
from dialeval.agents.images import accepts_images
from dialeval.agents.mmdu_common import MmduOptions, dialogue_of, labelled_images
from dialeval.config import EvalContext
from dialeval.data.mmdu import Dialogue, Turn, tags_in
from dialeval.metrics.mmdu import DIMENSIONS, SHORT  # the paper's names, the keys of the judge's dictionary

TEMPLATE = "mmdu/judge"
LOW, HIGH = 1, 10


def _canon(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


_KEYS = {_canon(d): d for d in DIMENSIONS} | {_canon(short): d for d, short in SHORT.items()}  # also C, VP, IRU, Overall


class TurnJudgement(BaseModel):
    """Explanation first, then the dictionary of scores (read per dimension, see module doc)."""

    explanation: str = ""
    scores: dict[str, Any] = Field(
        json_schema_extra={
            "properties": {d: {"type": "integer", "minimum": LOW, "maximum": HIGH} for d in DIMENSIONS},
            "required": list(DIMENSIONS),
        }
    )

    @model_validator(mode="before")
    @classmethod
    def _bare_dictionary(cls, data: Any) -> Any:
        """The paper's answer shape: prose, then ``{'Creativity': 6, ..., 'Overall Score': 7}`` alone."""
        if isinstance(data, dict) and "scores" not in data and any(_canon(str(k)) in _KEYS for k in data):
            rest = {k: v for k, v in data.items() if k != "explanation"}
            return {"explanation": str(data.get("explanation", "")), "scores": rest}
        return data


def read_score(value: Any) -> tuple[int | None, str | None]:
    """(score, None) for an integer 1-10 (``7``, ``7.0``, ``"7"``), else (None, why not)."""
    if isinstance(value, bool):
        return None, f"not an integer: {value!r}"
    if isinstance(value, str) and re.fullmatch(r"\s*\d+(\.0+)?\s*", value):
        value = float(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        return None, f"not an integer: {value!r}"
    if not LOW <= value <= HIGH:
        return None, f"{value} is outside {LOW}-{HIGH}"
    return value, None


def dimension_scores(scores: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per dimension: ``{"score": int | None, "status": "ok" | "unparsed", "reason": ...}``."""
    given = {_KEYS[_canon(str(k))]: v for k, v in scores.items() if _canon(str(k)) in _KEYS}
    out = {}
    for dim in DIMENSIONS:
        if dim not in given:
            out[dim] = {"score": None, "status": "unparsed", "reason": "missing"}
            continue
        score, reason = read_score(given[dim])
        out[dim] = {"score": score, "status": "ok" if reason is None else "unparsed", "reason": reason}
    return out


def _no_readable_score(value: TurnJudgement) -> str | None:
    if all(d["score"] is None for d in dimension_scores(value.scores).values()):
        return f"no readable {LOW}-{HIGH} score for any of {', '.join(DIMENSIONS)}"
    return None


def judged_images(dialogue: Dialogue, turn: Turn, mode: str) -> list[int]:
    """Image numbers the judge sees for ``turn``: all, the ones its question or reference tags, or none."""
    if mode == "dialogue":
        return list(range(1, len(dialogue.image) + 1))
    if mode == "turn":
        return sorted(set(turn.images) | set(tags_in(turn.reference)))
    return []


def build_messages(ctx: AgentContext, dialogue: Dialogue, turn: Turn, answer: str, mode: str, blocks: bool) -> list[Any]:
    """The rendered judge prompt with the turn's images appended to its last user message."""
    numbers = judged_images(dialogue, turn, mode)
    if not numbers:
        note = "(no pictures are shown with this question)"
    elif blocks:
        note = "The pictures of this conversation follow after the answer, each after its label: " + ", ".join(
            f"[image {n}]" for n in numbers
        )
    else:
        note = "The pictures of this conversation, described in words:\n" + str(labelled_images(numbers, dialogue.image, False))
    messages = ctx.template.render(question=turn.question, reference=turn.reference, answer=answer, images=note)
    if blocks and numbers:
        last = messages[-1]
        messages[-1] = HumanMessage([{"type": "text", "text": str(last.content)}, *labelled_images(numbers, dialogue.image, True)])
    return messages


def _placeholder() -> TurnJudgement:
    return TurnJudgement(explanation="dry-run placeholder", scores={d: LOW for d in DIMENSIONS})


@register_agent("mmdu.judge", role="judge", benchmark="mmdu")
def judge():
    """Scores each answered turn 1-10 on the six MMDU dimensions and Overall."""

    async def judge_all(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmduOptions.of(context)
        dialogue = dialogue_of(state)
        ctx = AgentContext.for_role(context, "judge", TEMPLATE)
        blocks = accepts_images(ctx, options.images)
        answers = answers_to_judge(state, dialogue)

        async def one(turn: Turn, answer: str) -> dict[str, Any]:
            messages = build_messages(ctx, dialogue, turn, answer, options.judge_images, blocks)
            result = await ask(ctx, "mmdu.judge", messages, TurnJudgement, validate=_no_readable_score, placeholder=_placeholder)
            dims = dimension_scores(result.value.scores) if result.value is not None else {}
            explanation = ""
            if result.value is not None:
                raw = result.call.raw
                explanation = result.value.explanation or raw[: raw.rfind("{")].strip()
            return {
                "turn": turn.number,
                "images": judged_images(dialogue, turn, options.judge_images),
                "dimensions": dims,
                "explanation": explanation,
                "call": result.call.model_dump(),
            }

        todo = [(t, answers[t.number]) for t in dialogue.turns if t.number in answers]
        return {"grades": list(await asyncio.gather(*(one(t, a) for t, a in todo)))}

    return judge_all


def answers_to_judge(state: dict[str, Any], dialogue: Dialogue) -> dict[int, str]:
    """Turn number -> the system's answer: given answers, or replies the responder produced.

    A reply cut off or empty is judged as it is (the system's failure, as the paper's
    pipeline judges whatever the model returned); a reply that errored is not judged.
    """
    if state.get("answers") is not None:
        return {t.number: a for t, a in zip(dialogue.turns, state["answers"])}
    return {r["turn"]: r["text"] for r in state.get("replies", []) if r["call"]["status"] != "error"}

