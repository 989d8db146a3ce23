"""Summarizer for a candidate pool: zero-shot, guidance and in-context prompting.

Runs once per configured setup (model x strategy, option ``setups``) and returns the
text between ``<summary>`` tags. Nothing is scored here; the pool and the diverse-setup
selection are built from the records (see ``dialeval metrics mdseval-select``).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from dialeval.agents.base import AgentContext, ask_text, register_agent
from dialeval.protocols.mdseval.common import MdsevalOptions, Setup, dialogue_of, dialogue_text, images_text, uses_blocks, with_pictures
from dialeval.config import EvalContext, ModelSettings

TEMPLATES = {s: f"mdseval/summarizer_{s}" for s in ("zeroshot", "guidance", "icl")}
_SUMMARY = re.compile(r"<summary>(.*?)(?:</summary>|$)", re.DOTALL | re.IGNORECASE)


def summary_text(raw: str) -> str:
    """The text inside the last <summary> block, or the whole answer when there is none."""
    found = [m.strip() for m in _SUMMARY.findall(raw) if m.strip()]
    return found[-1] if found else raw.strip()


@register_agent("mdseval.summarizer", role="summarizer", benchmark="mdseval")
def summarizer():
    """Writes one candidate summary per configured setup (model x prompting strategy)."""

    async def summarize(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MdsevalOptions.of(context)
        if not options.setups:
            return {}
        item = dialogue_of(state)

        async def one(setup: Setup) -> dict[str, Any]:
            base = context.model_for("summarizer")
            model = ModelSettings.model_validate({**base.model_dump(), "spec": setup.model, "base_url": setup.base_url or base.base_url})
            ctx = AgentContext.for_role(
                context, "summarizer", TEMPLATES[setup.strategy], template_key=f"summarizer_{setup.strategy}", model=model
            )
            blocks = uses_blocks(ctx, item, options.images)
            messages = ctx.template.render(dialogue=dialogue_text(item), images=images_text(item, blocks))
            call = await ask_text(ctx, "mdseval.summarizer", with_pictures(messages, item, blocks), placeholder="<summary>dry-run summary</summary>")
            text = summary_text(call.raw) if call.status == "ok" else None
            return {"setup": setup.name, "summary": text, "call": call.model_dump()}

        return {"candidates": list(await asyncio.gather(*(one(s) for s in options.setups)))}

    return summarize
