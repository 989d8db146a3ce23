"""Atomic fact verification of an abstractive background summary (paper Eq. 3, App. D.6).

Given only the background summary, each scored fact (key and non-supporting) is judged
knowable or unknowable. As in the paper, facts are sent in one batch per paragraph;
``one_fact_per_call`` (or the ``kgds.fact_verifier_single`` agent) sends them one by one.
"""

from __future__ import annotations

import asyncio
from itertools import groupby
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from dialeval.agents.schemas import numbered
from dialeval.agents.judge import Judge
from dialeval.protocols.kgds.common import format_numbered, options_of
from dialeval.config import EvalContext

TEMPLATE = "kgds/fact_verifier"
Verdict = Literal["knowable", "unknowable"]


def normalise_verdict(value: Any) -> Any:
    """``"Knowable"``, ``" unknowable."`` -> canonical label; other text is left to fail."""
    if isinstance(value, str):
        text = value.strip().strip(".").lower().replace("_", "").replace("-", "").replace(" ", "")
        if text in ("knowable", "unknowable"):
            return text
    return value


class FactVerdict(BaseModel):
    fact: int
    verdict: Verdict

    @field_validator("verdict", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return normalise_verdict(value)


class FactVerdicts(BaseModel):
    verdicts: list[FactVerdict]


def check_numbers(n: int):
    """Exactly one verdict for each of the facts 1..n."""

    def validate(value: FactVerdicts) -> str | None:
        got = sorted(v.fact for v in value.verdicts)
        if got != list(range(1, n + 1)):
            return f"expected one verdict for each fact 1..{n}, got facts {got}"
        return None

    return validate


def numbered_verdicts(n: int) -> dict[str, Any]:
    """The answer's schema for facts 1..n: verdict i is about fact i (decoders that follow
    a schema then cannot skip, repeat or renumber a fact)."""
    return numbered(FactVerdicts, "verdicts", "fact", n)


def batches(facts: list[dict[str, Any]], one_per_call: bool) -> list[list[dict[str, Any]]]:
    """Facts grouped per paragraph (the paper's batching), or one fact per batch."""
    if one_per_call:
        return [[f] for f in facts]
    ordered = sorted(facts, key=lambda f: (f["paragraph"], f["position"]))
    return [list(group) for _, group in groupby(ordered, key=lambda f: f["paragraph"])]


VERIFIER = Judge("kgds.fact_verifier", "fact_verifier", "kgds", TEMPLATE, FactVerdicts)


async def verify_batch(summary: dict[str, Any], facts: list[dict[str, Any]], context: EvalContext) -> dict[str, Any]:
    n = len(facts)
    answer = await VERIFIER.verdict(
        context,
        {"summary": summary["background"], "facts": format_numbered([f["text"] for f in facts])},
        validate=check_numbers(n),
        json_schema=numbered_verdicts(n),
        placeholder=lambda: FactVerdicts(verdicts=[FactVerdict(fact=i, verdict="knowable") for i in range(1, n + 1)]),
    )
    by_number = {v.fact: v.verdict == "knowable" for v in answer.value.verdicts} if answer.value else {}
    return {
        "pattern": summary["pattern"],
        "round": summary["round"],
        "paragraph": facts[0]["paragraph"],
        "facts": [f["fact_id"] for f in facts],
        "kinds": [f["kind"] for f in facts],
        "knowable": [by_number.get(i) for i in range(1, n + 1)],
        "call": answer.call.model_dump(),
    }


def verifiable(summary: dict[str, Any]) -> bool:
    """A readable ABS with text (an empty one scores 0 without a judge)."""
    return summary["pattern"] == "abs" and summary.get("status") in ("ok", "given") and bool((summary.get("background") or "").strip())


def make_verifier(force_single: bool):
    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        single = force_single or options_of(state).one_fact_per_call
        facts = state.get("facts", [])
        jobs = [
            verify_batch(summary, batch, context)
            for summary in state.get("summaries", [])
            if verifiable(summary)
            for batch in batches(facts, single)
        ]
        return {"fact_checks": list(await asyncio.gather(*jobs))}

    return node


@VERIFIER.register
def fact_verifier():
    """Judges scored facts knowable/unknowable from the ABS alone, one call per paragraph."""
    return make_verifier(force_single=False)


@VERIFIER.register_as("kgds.fact_verifier_single")
def fact_verifier_single():
    """Judges scored facts knowable/unknowable from the ABS alone, one call per fact."""
    return make_verifier(force_single=True)
