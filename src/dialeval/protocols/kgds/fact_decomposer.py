"""Atomic fact decomposition (paper Section 4.4, Appendix D.2), for users' own paragraphs.

The official KGDS file already holds expert-annotated atomic facts, so this agent only
runs for paragraphs that come without them. Without expert key-fact annotation, every
fact of a gold supporting paragraph counts as key and every fact of another paragraph
as non-supporting (the paper's masking of conflicting facts is not done).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field, field_validator

from dialeval.agents.judge import Judge
from dialeval.protocols.kgds.common import options_of
from dialeval.config import EvalContext

TEMPLATE = "kgds/fact_decomposer"


class AtomicFacts(BaseModel):
    # the schema asks for what the check below accepts: at least one fact with a visible character
    facts: list[str] = Field(json_schema_extra={"minItems": 1, "items": {"type": "string", "pattern": r"\S"}})

    @field_validator("facts")
    @classmethod
    def _clean(cls, facts: list[str]) -> list[str]:
        return [f.strip() for f in facts if f and f.strip()]


DECOMPOSER = Judge(
    "kgds.fact_decomposer",
    "fact_decomposer",
    "kgds",
    TEMPLATE,
    AtomicFacts,
    validate=lambda v: None if v.facts else "no fact listed",
)


async def decompose(paragraph: dict[str, Any], context: EvalContext) -> Any:
    """The atomic facts of one paragraph (an ``Answer`` of :class:`AtomicFacts`)."""
    sentences = [s.strip() + "." for s in paragraph["paragraph_text"].split(".") if s.strip()]
    return await DECOMPOSER.verdict(
        context,
        {"paragraph": paragraph["paragraph_text"]},
        placeholder=lambda: AtomicFacts(facts=sentences or ["dry-run"]),
    )


def needs_facts(state: dict[str, Any]) -> bool:
    patterns = {p["pattern"] for p in state.get("predictions") or []} or set(options_of(state).patterns)
    return "abs" in patterns and bool(state.get("fact_gaps"))


@DECOMPOSER.register
def fact_decomposer():
    """Splits paragraphs that have no atomic facts into indivisible, independent, declarative facts."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        if not needs_facts(state) or not options_of(state).decompose_missing_facts:
            return {}
        sample = state["sample"]
        gold = {p["paragraph_index"] for p in sample["BSP"]}
        wanted = [p for p in sample["SBK"] if p["paragraph_index"] in state["fact_gaps"]]
        answers = await asyncio.gather(*(decompose(p, context) for p in wanted))
        facts, gaps, calls = [], [], []
        for paragraph, answer in zip(wanted, answers):
            index = paragraph["paragraph_index"]
            calls.append({"paragraph": index, "call": answer.call.model_dump()})
            if answer.value is None:
                gaps.append(index)
                continue
            kind = "key" if index in gold else "nonsupporting"
            for position, text in enumerate(answer.value.facts):
                fact = {"paragraph": index, "position": position, "kind": kind, "text": text}
                facts.append({**fact, "fact_id": f"{index}.{position}"})
        return {"facts": facts, "fact_gaps": gaps, "decompositions": calls}

    return node
