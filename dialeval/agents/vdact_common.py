"""What the VDAct judges share: the turn being judged, the summary block, the record of a verdict.

The graph state holds the dialogue, the index of the next turn and the verdicts so far
(``judged``, in turn order); every judge reads the turn at ``index`` and returns one
verdict for it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from langchain_core.messages import BaseMessage

from dialeval.agents.base import AgentContext, Answer, ask

# A rationale of typical length for dry runs, so token estimates include the verdicts
# that a session judge carries into later prompts.
DRY_RUN_RATIONALE = (
    "The candidate answer names the same action and object as the reference answer, and the "
    "summary and the earlier turns support the extra detail it adds about where this happens, "
    "so nothing in it contradicts what the person did in the video."
)


class TurnRating(BaseModel):
    """A 1-3 verdict (incorrect, partially correct, correct) with its reasoning first."""

    rationale: str = Field(min_length=1)  # required: later turns of a session carry it
    rating: int = Field(ge=1, le=3)


def current_turn(state: dict[str, Any]) -> dict[str, Any]:
    return state["dialogue"]["turns"][state.get("index", 0)]


def summary_section(summary: str | None) -> str:
    """The summary block of a prompt; empty when the run uses no summary."""
    if not summary:
        return ""
    return f"Summary of the video (written from its knowledge graph):\n{summary}\n"


def verdict(turn: dict[str, Any], answer: Answer[Any], score: float | None, rationale: str | None) -> dict[str, Any]:
    """One judged turn for the state: its score (``None`` unless parsed) and the raw call."""
    return {
        "turn_id": turn["id"],
        "turn_num": turn["turn_num"],
        "score": score if answer.ok else None,
        "rationale": rationale if answer.ok else None,
        "status": answer.call.status,
        "call": answer.call.model_dump(),
    }


def turn_values(state: dict[str, Any]) -> dict[str, str]:
    """Template values of the turn being judged."""
    turn = current_turn(state)
    return {
        "summary_section": summary_section(state["dialogue"].get("summary")),
        "question": turn["question"],
        "reference": turn["reference"],
        "candidate": turn["candidate"],
    }


async def rate_turn(ctx: AgentContext, agent: str, messages: list[BaseMessage], state: dict[str, Any]) -> dict[str, Any]:
    """Ask for a 1-3 rating of the current turn and move the walk on to the next turn."""
    answer = await ask(
        ctx, agent, messages, TurnRating, placeholder=lambda: TurnRating(rationale=DRY_RUN_RATIONALE, rating=2)
    )
    value = answer.value
    entry = verdict(current_turn(state), answer, value.rating if value else None, value.rationale if value else None)
    return {"judged": [entry], "index": state.get("index", 0) + 1}
