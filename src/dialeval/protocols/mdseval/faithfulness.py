"""Faithfulness judge: four labels, per summary and per sentence.

Summary level: the whole summary gets one label. Sentence level: each sentence is
judged on its own against the sources (without the rest of the summary), as the paper's
sentence-level setting does. Labels: faithful, not faithful to the text, to the image,
to both (``true``, ``false-text``, ``false-image``, ``false-both`` in the data file).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel

from dialeval.agents.base import AgentContext
from dialeval.agents.judge import Judge
from dialeval.protocols.mdseval.common import (
    MdsevalOptions,
    dialogue_of,
    dialogue_text,
    images_text,
    judge_input_label,
    uses_blocks,
    with_pictures,
)
from dialeval.config import EvalContext

SUMMARY_TEMPLATE = "mdseval/faithfulness_summary"
SENTENCE_TEMPLATE = "mdseval/faithfulness_sentence"
TO_DATA_LABEL = {"faithful": "true", "false-text": "false-text", "false-image": "false-image", "false-both": "false-both"}


class FaithVerdict(BaseModel):
    rationale: str
    label: Literal["faithful", "false-text", "false-image", "false-both"]


FAITHFULNESS = Judge(
    "mdseval.faithfulness", "faithfulness", "mdseval", SUMMARY_TEMPLATE, FaithVerdict, template_key="faithfulness_summary"
)


@FAITHFULNESS.register
def faithfulness():
    """Labels each summary and each of its sentences faithful / not faithful to text, image or both."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MdsevalOptions.of(context)
        if FAITHFULNESS.role not in options.evaluators:
            return {}
        item = dialogue_of(state)
        summary_ctx = FAITHFULNESS.context(context)
        sentence_ctx = FAITHFULNESS.context(context, template=SENTENCE_TEMPLATE, template_key="faithfulness_sentence")
        blocks = uses_blocks(summary_ctx, item, options.images)
        common = {"dialogue": dialogue_text(item), "images": images_text(item, blocks)}

        async def one(ctx: AgentContext, index: int, sentence: int | None) -> dict[str, Any]:
            summary = item.summary_list[index]
            if sentence is None:
                messages = ctx.template.render(summary=summary.summary, **common)
            else:
                messages = ctx.template.render(sentence=summary.summary_sentence_lvl[sentence], **common)
            answer = await FAITHFULNESS.ask(ctx, with_pictures(messages, item, blocks))
            return {
                "evaluator": FAITHFULNESS.role,
                "summary": index,
                "level": "summary" if sentence is None else "sentence",
                "sentence": sentence,
                "label": None if answer.value is None else TO_DATA_LABEL[answer.value.label],
                "input": judge_input_label(item, blocks),
                "call": answer.call.model_dump(),
            }

        jobs = []
        for index, summary in enumerate(item.summary_list):
            if "summary" in options.faithfulness_levels:
                jobs.append(one(summary_ctx, index, None))
            if "sentence" in options.faithfulness_levels:
                jobs += [one(sentence_ctx, index, s) for s in range(len(summary.summary_sentence_lvl))]
        return {"faithfulness": list(await asyncio.gather(*jobs))}

    return judge
