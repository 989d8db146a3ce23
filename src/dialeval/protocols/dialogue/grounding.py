"""Grounding: assistant turns (or the summary) split into atomic facts, each verified.

Where a conversation has grounding documents, each assistant turn is decomposed and its
facts verified against the documents in one batched call (the KGDS protocol: one
verdict per fact, in order); a summary is verified against the dialogue itself.
Per unit: factual precision (supported / facts) and the unsupported claims. Both prompts
are bounded by the run's budget: one that does not fit is recorded ``over_budget``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Literal

from pydantic import BaseModel

from dialeval.agents.base import register_agent
from dialeval.agents.schemas import numbered
from dialeval.agents.judge import Judge
from dialeval.config import EvalContext
from dialeval.protocols.dialogue.common import ROLES, DialogueOptions
from dialeval.protocols.dialogue.context import prompt_tokens, turn_line
from dialeval.conversation.data import Conversation, conversation_of
from dialeval.protocols.dialogue.judge import grounding_text


class Facts(BaseModel):
    facts: list[str]


class FactVerdict(BaseModel):
    fact: int
    reason: str
    label: Literal["supported", "unsupported"]


class Verification(BaseModel):
    verdicts: list[FactVerdict]


DECOMPOSER = Judge("dialogue.fact_decomposer", "fact_checker", "dialogue", "dialogue/fact_decomposer", Facts,
                   template_key="fact_decomposer")
VERIFIER = Judge("dialogue.fact_verifier", "fact_checker", "dialogue", "dialogue/fact_verifier", Verification,
                 template_key="fact_verifier")


def one_per_fact(count: int) -> Callable[[Verification], str | None]:
    def check(value: Verification) -> str | None:
        numbers = [v.fact for v in value.verdicts]
        if numbers != list(range(1, count + 1)):
            return f"give exactly one verdict per fact, numbered 1 to {count} in order (got {numbers})"
        return None

    return check


async def check_text(context: EvalContext, text: str, source: str, **where: Any) -> dict[str, Any]:
    """Decompose ``text`` and verify its facts against ``source``: the unit's record."""
    options = DialogueOptions.of(context)
    model = ROLES.model(context, "fact_checker")
    out: dict[str, Any] = {**where, "facts": [], "labels": [], "precision": None, "unsupported": [], "calls": []}
    ctx = DECOMPOSER.context(context, model=model)
    messages = ctx.template.render(text=text)
    if prompt_tokens(messages) > options.context_budget:
        return {**out, "status": "over_budget", "prompt_tokens": prompt_tokens(messages)}
    split = await DECOMPOSER.ask(ctx, messages, label="dialogue.fact_checker.decompose")  # recorded under its role
    out["calls"].append(split.call.model_dump())
    if split.value is None:
        return {**out, "status": split.call.status}
    facts = [f.strip() for f in split.value.facts if f.strip()]
    out["facts"] = facts
    if not facts:
        return {**out, "status": "ok"}
    ctx = VERIFIER.context(context, model=model)
    messages = ctx.template.render(source=source, facts="\n".join(f"{i + 1}. {f}" for i, f in enumerate(facts)))
    if prompt_tokens(messages) > options.context_budget:
        return {**out, "status": "over_budget", "prompt_tokens": prompt_tokens(messages)}
    checked = await VERIFIER.ask(
        ctx, messages, label="dialogue.fact_checker.verify", validate=one_per_fact(len(facts)),
        json_schema=numbered(Verification, "verdicts", "fact", len(facts)),
        placeholder=lambda: Verification(verdicts=[FactVerdict(fact=i + 1, reason="dry-run", label="supported") for i in range(len(facts))]),
    )
    out["calls"].append(checked.call.model_dump())
    if checked.value is None:
        return {**out, "status": checked.call.status}
    labels = [v.label for v in checked.value.verdicts]
    return {
        **out, "status": "ok", "labels": labels,
        "precision": labels.count("supported") / len(labels),
        "unsupported": [f for f, label in zip(facts, labels) if label == "unsupported"],
    }


@register_agent("dialogue.fact_checker", role="fact_checker", benchmark="dialogue")
def fact_checker():
    """Splits assistant turns (and a summary) into atomic facts and verifies them, batched, against the grounding."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = DialogueOptions.of(context)
        conv: Conversation = conversation_of(state)
        jobs = []
        if options.facts == "auto" and conv.grounding:
            source = grounding_text(conv)
            jobs += [check_text(context, t.text, source, turn=t.number) for t in conv.assistant_turns()]
        if options.facts == "auto" and conv.summary:
            dialogue = "\n".join(turn_line(t) for t in conv.turns)
            jobs.append(check_text(context, conv.summary, dialogue, level="summary"))
        return {"grounding_units": list(await asyncio.gather(*jobs))}

    return node
