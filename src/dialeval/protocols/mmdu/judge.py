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

from dialeval.agents.base import AgentContext
from dialeval.agents.judge import Judge
from dialeval.agents.images import accepts_images
from dialeval.agents.parsing import read_integer
from dialeval.protocols.mmdu.common import MmduOptions, dialogue_of, labelled_images, role_model
from dialeval.config import EvalContext
from dialeval.protocols.mmdu.data import Dialogue, Turn, tags_in
from dialeval.protocols.mmdu.metrics import DIMENSIONS, SHORT  # the paper's names, the keys of the judge's dictionary
from dialeval.models.prompt_cache import mark_stable_prefix

TEMPLATE = "mmdu/judge"
LOW, HIGH = 1, 10
CLOSE = "\n</pictures>"  # the template's end of the pictures


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
    """(score, None) for an integer 1-10 read as every benchmark reads numbers
    (:func:`~dialeval.agents.parsing.read_integer`), else (None, why not)."""
    number = read_integer(value)
    if number is None:
        return None, f"not an integer: {value!r}"
    value = number
    if not LOW <= value <= HIGH:
        return None, f"{value} is outside {LOW}-{HIGH}"
    return value, None


def dimension_scores(scores: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per dimension: ``{"score": int | None, "status": "ok" | "unparsed", "reason": ...}``."""
    given = {_KEYS[_canon(str(k))]: v for k, v in scores.items() if _canon(str(k)) in _KEYS}
    out: dict[str, dict[str, Any]] = {}
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
    """The rendered judge prompt, the pictures (blocks or captions) first in its user message.

    With ``judge_images: dialogue`` every turn of a dialogue shows the same pictures, so
    instructions and pictures form a prefix that API prompt caches serve from the
    second turn on; for Anthropic the message notes where that prefix ends.
    """
    numbers = judged_images(dialogue, turn, mode)
    if not numbers:
        note = "(no pictures are shown with this question)"
    elif blocks:
        note = "The pictures of this conversation, each after its label:"
    else:
        note = "The pictures of this conversation, described in words:\n" + str(labelled_images(numbers, dialogue.image, False))
    messages = ctx.template.render(question=turn.question, reference=turn.reference, answer=answer, images=note)
    text = str(messages[-1].content)
    cut = text.find(note)
    cut = len(text) if cut < 0 else cut + len(note)  # the pictures go right after the note
    end = cut + len(CLOSE) if text.startswith(CLOSE, cut) else cut  # where the part every turn repeats ends
    if blocks and numbers:
        head = [{"type": "text", "text": text[:cut]}, *labelled_images(numbers, dialogue.image, True)]
        head += [{"type": "text", "text": text[cut:end]}] if end > cut else []  # Anthropic keeps no mark on an image
        messages[-1] = HumanMessage(head + ([{"type": "text", "text": text[end:]}] if text[end:] else []))
        end = len(head)
    if mode == "dialogue" and numbers:
        messages[-1] = mark_stable_prefix(messages[-1], [end])
    return messages


def _placeholder() -> TurnJudgement:
    return TurnJudgement(explanation="dry-run placeholder", scores={d: LOW for d in DIMENSIONS})


JUDGE = Judge("mmdu.judge", "judge", "mmdu", TEMPLATE, TurnJudgement, validate=_no_readable_score, placeholder=_placeholder)


@JUDGE.register
def judge():
    """Scores each answered turn 1-10 on the six MMDU dimensions and Overall."""

    async def judge_all(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmduOptions.of(context)
        dialogue = dialogue_of(state, options.image_root)
        ctx = JUDGE.context(context, model=role_model(context, "judge"))
        blocks = accepts_images(ctx, options.images)
        answers = answers_to_judge(state, dialogue)

        async def one(turn: Turn, answer: str) -> dict[str, Any]:
            messages = build_messages(ctx, dialogue, turn, answer, options.judge_images, blocks)
            result = await JUDGE.ask(ctx, messages)
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
        # the first turn alone, then the rest at once: a provider caches a prefix only once a
        # request has sent it, so the others then find the instructions and pictures cached
        first = [await one(*todo[0])] if todo else []
        return {"grades": first + list(await asyncio.gather(*(one(t, a) for t, a in todo[1:])))}

    return judge_all


def answers_to_judge(state: dict[str, Any], dialogue: Dialogue) -> dict[int, str]:
    """Turn number -> the system's answer: given answers, or replies the responder produced.

    A reply cut off or empty is judged as it is (the system's failure, as the paper's
    pipeline judges whatever the model returned); a reply that errored is not judged.
    """
    if state.get("answers") is not None:
        return {t.number: a for t, a in zip(dialogue.turns, state["answers"])}
    return {r["turn"]: r["text"] for r in state.get("replies", []) if r["call"]["status"] != "error"}

