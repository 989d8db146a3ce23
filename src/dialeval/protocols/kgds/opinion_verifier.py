"""Clear atomic opinion verification of an opinion summary (paper Eq. 7, Appendix D.6).

One call per opinion, as in the paper: given only the opinion summary, is the opinion
(with its clarified references between ``**``) knowable? The conversation is kept so
the error classifier can continue it for unknowable opinions. The default prompt asks
only the paper's question; ``templates.opinion_verifier: kgds/opinion_verifier_criteria``
selects our stricter prompt, which spells out when an opinion counts as knowable.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from dialeval.agents.judge import Judge
from dialeval.protocols.kgds.common import PLACEHOLDER_REASONING, dump_messages
from dialeval.protocols.kgds.fact_verifier import normalise_verdict
from dialeval.config import EvalContext

TEMPLATE = "kgds/opinion_verifier"


class OpinionVerdict(BaseModel):
    """The paper's order: the conclusion, then the explanation (Figure 10)."""

    verdict: Literal["knowable", "unknowable"]
    reasoning: str = Field(min_length=1)

    @field_validator("verdict", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return normalise_verdict(value)


# dry runs assume the worst case (unknowable) so the error classifier's calls are counted
VERIFIER = Judge(
    "kgds.opinion_verifier",
    "opinion_verifier",
    "kgds",
    TEMPLATE,
    OpinionVerdict,
    placeholder=lambda: OpinionVerdict(reasoning=PLACEHOLDER_REASONING, verdict="unknowable"),
)


async def verify_opinion(summary: dict[str, Any], index: int, opinion: str, context: EvalContext) -> dict[str, Any]:
    answer = await VERIFIER.verdict(
        context, {"summary": summary["opinion"], "opinion": opinion}, label=f"{VERIFIER.name}.{summary['pattern']}"
    )
    return {
        "pattern": summary["pattern"],
        "round": summary["round"],
        "opinion": index,
        "knowable": None if answer.value is None else answer.value.verdict == "knowable",
        "call": answer.call.model_dump(),
        "messages": dump_messages(answer.messages) if answer.value is not None else [],
    }


def verifiable(summary: dict[str, Any]) -> bool:
    """A readable summary with an opinion text (an empty one scores 0 without a judge)."""
    return summary.get("status") in ("ok", "given") and bool((summary.get("opinion") or "").strip())


@VERIFIER.register
def opinion_verifier():
    """Judges each clear atomic opinion knowable/unknowable from the opinion summary alone."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        opinions = state["sample"]["CAO"]
        jobs = [
            verify_opinion(summary, i, opinion, context)
            for summary in state.get("summaries", [])
            if verifiable(summary)
            for i, opinion in enumerate(opinions)
        ]
        return {"opinion_checks": list(await asyncio.gather(*jobs))}

    return node
