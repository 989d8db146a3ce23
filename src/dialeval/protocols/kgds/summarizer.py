"""The system under test: a structured prompt asking for background and opinion summaries.

One call per pattern: EBS-AOS (paragraph numbers + opinion summary) or ABS-AOS
(abstractive background + opinion summary), paper Section 3 and Appendix D.3. As in the
paper (Appendix D.1) it generates with max_tokens 4096 and temperature 0 unless the
config sets them, and it gets one chance: an empty, unreadable or cut-off answer is the
system's failure (scored zero), not retried (``summary_retries`` allows corrections for
unreadable answers, never for cut-off ones). ``templates.summarizer_ebs: kgds/summarizer_ebs_guided``
(and ``_abs``) selects our richer prompts, which add guidance the paper's prompts lack.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field, field_validator

from dialeval.agents.base import schema_with
from dialeval.agents.judge import Judge
from dialeval.protocols.kgds.common import (
    KgdsOptions,
    format_discussion,
    format_paragraphs,
    generation_of,
    options_of,
    strip_stars,
    summary_entry,
    system_model,
)
from dialeval.config import EvalContext
from dialeval.protocols.kgds.data import paragraph_number

TEMPLATES = {"ebs": "kgds/summarizer_ebs", "abs": "kgds/summarizer_abs"}


class EbsSummary(BaseModel):
    background_paragraphs: list[int]
    opinion_summary: str = Field(min_length=1)

    @field_validator("background_paragraphs", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        if isinstance(value, (str, int)):
            value = [value]
        return [paragraph_number(v) for v in value] if isinstance(value, list) else value


class AbsSummary(BaseModel):
    background_summary: str = Field(min_length=1)
    opinion_summary: str = Field(min_length=1)


SCHEMAS: dict[str, type[BaseModel]] = {"ebs": EbsSummary, "abs": AbsSummary}
# one call per pattern, each with its template (config keys summarizer_ebs / summarizer_abs) and schema
SUMMARIZERS: dict[str, Judge[Any]] = {
    p: Judge("kgds.summarizer", "summarizer", "kgds", TEMPLATES[p], SCHEMAS[p], template_key=f"summarizer_{p}") for p in TEMPLATES
}


def dry_run_summary(pattern: str, sample: dict[str, Any], **extra: Any) -> BaseModel:
    """A placeholder shaped like a plausible answer, so a dry run's token count is realistic.

    The EBS adds one non-supporting paragraph to the gold ones (so the feedback judge
    is counted); the texts have the length of the gold material.
    """
    opinion = " ".join(strip_stars(c) for c in sample["CAO"]) or "Person1 thinks ..."
    gold = [p["paragraph_index"] for p in sample["BSP"]]
    others = [p["paragraph_index"] for p in sample["SBK"] if p["paragraph_index"] not in gold]
    if pattern == "ebs":
        return EbsSummary(background_paragraphs=sorted(gold + others[:1]), opinion_summary=opinion, **extra)
    background = " ".join(p["paragraph_text"] for p in sample["BSP"])
    return AbsSummary(background_summary=background, opinion_summary=opinion, **extra)


def paragraph_choice(schema: type[BaseModel], pattern: str, sample: dict[str, Any]) -> dict[str, Any] | None:
    """EBS answers pick this sample's paragraphs: each number one of them, at most all of
    them (decoders that follow a schema then cannot count on past the last paragraph)."""
    if pattern != "ebs":
        return None
    numbers = sorted({int(p["paragraph_index"]) for p in sample["SBK"]})
    return schema_with(
        schema, background_paragraphs={"items": {"type": "integer", "enum": numbers}, "maxItems": len(numbers)}
    )


async def summarize(pattern: str, sample: dict[str, Any], context: EvalContext, options: KgdsOptions) -> dict[str, Any]:
    """One structured-prompt call, as a summary entry that keeps the conversation for reflection."""
    model = system_model(context, "summarizer")
    values = {"paragraphs": format_paragraphs(sample["SBK"]), "discussion": format_discussion(sample["KGD"])}
    summarizer = SUMMARIZERS[pattern]
    answer = await summarizer.verdict(
        context,
        values,
        model=model,
        label=f"{summarizer.name}.{pattern}",
        placeholder=lambda: dry_run_summary(pattern, sample),
        retries=options.summary_retries,
        retry_truncated=False,
        json_schema=paragraph_choice(SCHEMAS[pattern], pattern, sample),
    )
    return summary_entry(pattern, 0, answer, generation=generation_of(model))


@SUMMARIZERS["ebs"].register  # one agent for both patterns
def summarizer():
    """Summarizes a sample in each configured pattern with the structured prompt (round 0)."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = options_of(state)
        entries = await asyncio.gather(*(summarize(p, state["sample"], context, options) for p in options.patterns))
        return {"summaries": list(entries), "round": 0}

    return node
