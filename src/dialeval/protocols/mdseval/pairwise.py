"""MLLM-as-a-judge, pairwise: which of two summaries is better on one aspect.

Every pair of summaries is asked in both orders (A/B and B/A) for every selected aspect
(faithfulness is judged on its own, never in pairs). Each answer is kept with the order
it was asked in, so accuracy and positional bias can be computed per order.
"""

from __future__ import annotations

import asyncio
from itertools import combinations
from typing import Any, Literal

from pydantic import BaseModel

from dialeval.agents.judge import Judge
from dialeval.protocols.mdseval.common import (
    ASPECT_NAMES,
    MdsevalOptions,
    dialogue_of,
    dialogue_text,
    images_text,
    judge_input_label,
    rubric,
    uses_blocks,
    with_pictures,
)
from dialeval.config import EvalContext

TEMPLATE = "mdseval/pairwise"


class Preference(BaseModel):
    rationale: str
    preferred: Literal["A", "B"]


def both_orders(n_summaries: int) -> list[tuple[int, int]]:
    """(first shown, second shown) for every pair, in the original and the swapped order."""
    pairs = list(combinations(range(n_summaries), 2))
    return pairs + [(b, a) for a, b in pairs]


PAIRWISE = Judge("mdseval.pairwise", "pairwise", "mdseval", TEMPLATE, Preference)


@PAIRWISE.register
def pairwise():
    """Prefers one of two summaries per aspect; every pair asked in both orders."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MdsevalOptions.of(context)
        if PAIRWISE.role not in options.evaluators:
            return {}
        item = dialogue_of(state)
        ctx = PAIRWISE.context(context)
        blocks = uses_blocks(ctx, item, options.images)

        async def one(first: int, second: int, aspect: str) -> dict[str, Any]:
            messages = ctx.template.render(
                aspect_name=ASPECT_NAMES[aspect],
                rubric=rubric(aspect),
                dialogue=dialogue_text(item),
                images=images_text(item, blocks),
                summary_a=item.summary_list[first].summary,
                summary_b=item.summary_list[second].summary,
            )
            answer = await PAIRWISE.ask(ctx, with_pictures(messages, item, blocks))
            pick = None if answer.value is None else (0 if answer.value.preferred == "A" else 1)
            return {
                "evaluator": PAIRWISE.role,
                "aspect": aspect,
                "first": first,
                "second": second,
                "swapped": first > second,
                "pick": pick,  # 0: the summary shown first, 1: the second
                "input": judge_input_label(item, blocks),
                "call": answer.call.model_dump(),
            }

        jobs = [one(a, b, aspect) for a, b in both_orders(len(item.summary_list)) for aspect in options.aspects]
        return {"preferences": list(await asyncio.gather(*jobs))}

    return judge
