"""Image-to-Prompt: a vision model describes the images, a text model then scores.

The captioner (role ``captioner``) sees the pictures when the backend takes them and an
image folder was given; otherwise it can only rewrite the image statements, which the
record says. The judge (role ``image_prompt``) never sees pictures, only the description,
and scores with the pointwise template. An unreadable description fails nothing: the
judge is not asked and every score of the dialogue is counted as unreadable.
"""

from __future__ import annotations

from typing import Any

from dialeval.agents.base import AgentContext, ask_text
from dialeval.agents.judge import Judge
from dialeval.protocols.mdseval.common import (
    MdsevalOptions,
    dialogue_of,
    images_text,
    judge_input_label,
    uses_blocks,
    with_pictures,
)
from dialeval.protocols.mdseval.pointwise import AspectScore, score_all
from dialeval.config import EvalContext

CAPTION_TEMPLATE = "mdseval/captioner"
JUDGE_TEMPLATE = "mdseval/pointwise"
JUDGE = Judge("mdseval.image_prompt", "image_prompt", "mdseval", JUDGE_TEMPLATE, AspectScore)


@JUDGE.register
def image_prompt():
    """Describes the images with a vision model, then scores each summary from the description."""

    async def judge(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MdsevalOptions.of(context)
        if JUDGE.role not in options.evaluators:
            return {}
        item = dialogue_of(state)
        captioner = AgentContext.for_role(context, "captioner", CAPTION_TEMPLATE)
        blocks = uses_blocks(captioner, item, options.images)
        messages = captioner.template.render(images=images_text(item, blocks))
        caption = await ask_text(captioner, "mdseval.captioner", with_pictures(messages, item, blocks), placeholder="Image 1: dry-run description")
        row = {"from": judge_input_label(item, blocks), "call": caption.model_dump()}
        if caption.status != "ok":
            skipped = [
                {"evaluator": JUDGE.role, "summary": i, "aspect": a, "score": None, "input": "no description", "call": None}
                for i in range(len(item.summary_list))
                for a in options.aspects
            ]
            return {"captions": [row], "scores": skipped}
        assert caption.value is not None  # an ok answer has its value
        rows = await score_all(JUDGE, context, item, options, description=caption.value["text"])
        return {"captions": [row], "scores": rows}

    return judge
