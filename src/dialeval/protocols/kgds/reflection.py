"""Self-reflection: a further turn in the summarizer's conversation (paper Appendix D.4).

The summarizer is asked whether its summaries fit their definitions and answers again
with its reasoning. Each round continues the previous round's conversation; every
round's summaries are kept and evaluated. Like the summarizer it is the system under
test: the paper's generation settings unless configured, no retry of a cut-off answer,
and a round that fails (or follows a failed round) is the system's failure.
``templates.reflection_ebs: kgds/reflection_ebs_guided`` (and ``_abs``) selects our
richer reflection request. The JSON fields come in the paper's order: both summaries,
then the reasoning.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field

from dialeval.agents.judge import Judge
from dialeval.protocols.kgds.common import (
    PLACEHOLDER_REASONING,
    KgdsOptions,
    generation_of,
    load_messages,
    options_of,
    summary_entry,
    system_model,
)
from dialeval.protocols.kgds.summarizer import AbsSummary, EbsSummary, dry_run_summary, paragraph_choice
from dialeval.config import EvalContext

TEMPLATES = {"ebs": "kgds/reflection_ebs", "abs": "kgds/reflection_abs"}


class EbsReflection(EbsSummary):
    reflection: str = Field(min_length=1)


class AbsReflection(AbsSummary):
    reflection: str = Field(min_length=1)


SCHEMAS: dict[str, type[BaseModel]] = {"ebs": EbsReflection, "abs": AbsReflection}
# one turn per pattern, each with its template (config keys reflection_ebs / reflection_abs) and schema
REFLECTIONS: dict[str, Judge[Any]] = {
    p: Judge("kgds.reflection", "reflection", "kgds", TEMPLATES[p], SCHEMAS[p], template_key=f"reflection_{p}") for p in TEMPLATES
}


def latest(summaries: list[dict[str, Any]], pattern: str) -> dict[str, Any] | None:
    rows = [s for s in summaries if s["pattern"] == pattern]
    return max(rows, key=lambda s: s["round"]) if rows else None


async def reflect(
    previous: dict[str, Any], sample: dict[str, Any], context: EvalContext, options: KgdsOptions
) -> dict[str, Any]:
    """One reflection turn after ``previous``; skipped when there is no answer to reflect on."""
    pattern, round_ = previous["pattern"], previous["round"] + 1
    if previous.get("status") != "ok":
        return summary_entry(pattern, round_, None, status="skipped", reason=f"round {round_ - 1} has no readable answer")
    model = system_model(context, "reflection")
    reflection = REFLECTIONS[pattern]
    answer = await reflection.verdict(
        context,
        {},
        before=load_messages(previous["messages"]),
        model=model,
        label=f"{reflection.name}.{pattern}",
        placeholder=lambda: SCHEMAS[pattern](**dry_run_summary(pattern, sample).model_dump(), reflection=PLACEHOLDER_REASONING),
        retries=options.summary_retries,
        retry_truncated=False,
        json_schema=paragraph_choice(SCHEMAS[pattern], pattern, sample),
    )
    return summary_entry(pattern, round_, answer, generation=generation_of(model))


@REFLECTIONS["ebs"].register  # one agent for both patterns
def reflection():
    """Asks the summarizer to check its summaries against their definitions and answer again."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = options_of(state)
        previous = [latest(state["summaries"], p) for p in options.patterns]
        entries = await asyncio.gather(*(reflect(prev, state["sample"], context, options) for prev in previous if prev))
        return {"summaries": list(entries), "round": state.get("round", 0) + 1}

    return node
