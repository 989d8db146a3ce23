"""MLLM-as-a-judge, pointwise: each summary scored on each aspect (1-5; balance 1-7).

One call per (summary, aspect) with the aspect's definition and scale points. A score
outside the aspect's scale is not an answer: after the corrective retries it is
``unparsed`` and counted, never clipped.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from dialeval.agents.base import placeholder_for, schema_with
from dialeval.agents.judge import Judge
from dialeval.protocols.mdseval.common import (
    ASPECT_NAMES,
    MdsevalOptions,
    dialogue_of,
    dialogue_text,
    images_text,
    judge_input_label,
    rubric,
    score_range,
    uses_blocks,
    with_pictures,
)
from dialeval.config import EvalContext
from dialeval.protocols.mdseval.data import MdsDialogue

TEMPLATE = "mdseval/pointwise"


class AspectScore(BaseModel):
    rationale: str
    score: int


def score_schema(schema: type[BaseModel], aspect: str) -> dict[str, Any]:
    """The answer's schema with the score on the aspect's scale, as :func:`in_scale` checks it."""
    low, high = score_range(aspect)
    return schema_with(schema, score={"minimum": low, "maximum": high})


def in_scale(aspect: str):
    """A validator: the score must lie on the aspect's scale."""
    low, high = score_range(aspect)

    def check(value: BaseModel) -> str | None:
        score = getattr(value, "score")
        return None if low <= score <= high else f"score {score} is outside {low}-{high}"

    return check


async def score_all(
    judge: Judge[Any], context: EvalContext, item: MdsDialogue, options: MdsevalOptions, description: str | None = None
) -> list[dict[str, Any]]:
    """Every summary on every selected aspect; one row per call, readable or not. The
    evaluator is the judge's role (pointwise, checklist, image_prompt)."""
    ctx, schema = judge.context(context), judge.schema
    blocks = description is None and uses_blocks(ctx, item, options.images)
    seen = judge_input_label(item, blocks, described=description is not None)

    async def one(index: int, aspect: str) -> dict[str, Any]:
        low, high = score_range(aspect)
        messages = ctx.template.render(
            aspect_name=ASPECT_NAMES[aspect],
            rubric=rubric(aspect),
            dialogue=dialogue_text(item),
            images=images_text(item, blocks, description),
            summary=item.summary_list[index].summary,
            low=low,
            high=high,
        )
        answer = await judge.ask(
            ctx,
            with_pictures(messages, item, blocks),
            validate=in_scale(aspect),
            placeholder=lambda: schema.model_validate({**placeholder_for(schema).model_dump(), "score": low}),
            json_schema=score_schema(schema, aspect),  # a model that follows it stays on the scale
        )
        score = answer.value.score if answer.value is not None else None  # type: ignore[attr-defined]
        return {"evaluator": judge.role, "summary": index, "aspect": aspect, "score": score, "input": seen, "call": answer.call.model_dump()}

    jobs = [one(i, a) for i in range(len(item.summary_list)) for a in options.aspects]
    return list(await asyncio.gather(*jobs))


POINTWISE = Judge("mdseval.pointwise", "pointwise", "mdseval", TEMPLATE, AspectScore)


@POINTWISE.register
def pointwise():
    """Scores each summary on each aspect with the paper's scales (MLLM-as-a-judge)."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MdsevalOptions.of(context)
        if POINTWISE.role not in options.evaluators:
            return {}
        return {"scores": await score_all(POINTWISE, context, dialogue_of(state), options)}

    return judge
