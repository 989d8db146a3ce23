"""What the VDAct judges share: the turn being judged, the worked example, the record of a verdict.

The graph state holds the dialogue, the index of the next turn and the verdicts so far
(``judged``, in turn order); every judge reads the turn at ``index`` and returns one
verdict for it. A verdict carries ``scores`` per dimension (``rating`` for the 1-3
judges, ``LLM-Acc``/``LLM-Rel`` for the Video-ChatGPT judge) and the call's status.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from dialeval.agents.base import AgentContext, Answer, ask
from dialeval.config import EvalContext
from dialeval.protocols.vdact.data import JudgeExample, builtin_example

# A rationale of typical length for dry runs, so token estimates include the verdicts
# that a session judge carries into later prompts.
DRY_RUN_RATIONALE = (
    "The candidate answer names the same action and object as the reference answer, and the "
    "summary and the earlier turns support the extra detail it adds about where this happens, "
    "so nothing in it contradicts what the person did in the video."
)
NO_ANSWER = "(no answer)"
NO_ANSWER_RATIONALE = "The system gave no answer."
NO_ANSWER_STATUS = "no_answer"  # the system's failure: scored lowest, no judge call


class TurnRating(BaseModel):
    """A 1-3 verdict (incorrect, partially correct, correct) with its reasoning first."""

    rationale: str = Field(min_length=1)  # required: later turns of a session carry it
    rating: int = Field(ge=1, le=3)


def current_turn(state: dict[str, Any]) -> dict[str, Any]:
    return state["dialogue"]["turns"][state.get("index", 0)]


def has_summary(state: dict[str, Any]) -> bool:
    return bool(state["dialogue"].get("summary"))


def turn_block(label: str, question: str, reference: str, candidate: str, output: str) -> str:
    """One graded turn as the example and the history show it (the paper's Output: ... So rating=N)."""
    return (
        f"{label}\nQuestion: {question}\nReference answer: {reference}\n"
        f"Candidate answer: {candidate or NO_ANSWER}\nOutput: {output}"
    )


def example_of(state: dict[str, Any]) -> JudgeExample:
    """The user's example dialogue (graph input ``example``), else the built-in one.

    The example shows a summary exactly when the run does, so the example and the turn
    to grade have the same shape.
    """
    raw = state.get("example")
    example = JudgeExample.model_validate(raw) if raw else builtin_example(with_summary=True)
    return example if has_summary(state) else example.model_copy(update={"summary": None})


def render_example(example: JudgeExample) -> str:
    """The example dialogue: its summary, then every turn with its verdict."""
    blocks = [f"Summary: {example.summary}"] if example.summary else []
    blocks += [
        turn_block(f"Turn {n}", t.question, t.reference, t.candidate, f"{t.rationale.strip()} So rating={t.rating}")
        for n, t in enumerate(example.turns, start=1)
    ]
    return "\n\n".join(blocks)


def template_for(context: EvalContext, state: dict[str, Any], name: str) -> AgentContext:
    """The agent context with the template that matches the run: with or without a summary.

    Config keys: ``judge`` (with a summary) and ``judge_no_summary``.
    """
    if has_summary(state):
        return AgentContext.for_role(context, "judge", f"vdact/{name}")
    return AgentContext.for_role(context, "judge", f"vdact/{name}_no_summary", template_key="judge_no_summary")


def verdict(
    turn: dict[str, Any], answer: Answer[Any] | None, scores: Mapping[str, float] | None, rationale: str | None, status: str | None = None
) -> dict[str, Any]:
    """One judged turn for the state: scores per dimension (``None`` unless read) and the raw call."""
    ok = answer is None or answer.ok
    return {
        "turn_id": turn["id"],
        "turn_num": turn["turn_num"],
        "scores": scores if ok else None,
        "rationale": rationale if ok else None,
        "status": status or (answer.call.status if answer is not None else "ok"),
        "call": answer.call.model_dump() if answer is not None else None,
    }


def advance(state: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    return {"judged": [entry], "index": state.get("index", 0) + 1}


def unanswered(state: dict[str, Any], lowest: dict[str, float]) -> dict[str, Any] | None:
    """A turn the system left without an answer: the system's failure, scored lowest, judge not asked."""
    turn = current_turn(state)
    if turn["candidate"].strip():
        return None
    return advance(state, verdict(turn, None, lowest, NO_ANSWER_RATIONALE, status=NO_ANSWER_STATUS))


def turn_values(state: dict[str, Any]) -> dict[str, str]:
    """Template values of the turn being judged."""
    turn = current_turn(state)
    return {
        "summary": state["dialogue"].get("summary") or "",
        "question": turn["question"],
        "reference": turn["reference"],
        "candidate": turn["candidate"],
    }


def turn_only_values(state: dict[str, Any], agent: str) -> dict[str, str]:
    """Template values for judges that see the turn alone; a run with a summary is a setup error."""
    if has_summary(state):
        raise ValueError(f"the {agent} judge takes no video summary: set option summary='none'")
    values = turn_values(state)
    del values["summary"]
    return values


async def rate_turn(ctx: AgentContext, agent: str, messages: list[BaseMessage], state: dict[str, Any]) -> dict[str, Any]:
    """Ask for a 1-3 rating of the current turn and move the walk on to the next turn."""
    answer = await ask(
        ctx, agent, messages, TurnRating, placeholder=lambda: TurnRating(rationale=DRY_RUN_RATIONALE, rating=2)
    )
    value = answer.value
    scores = {"rating": value.rating} if value else None
    return advance(state, verdict(current_turn(state), answer, scores, value.rationale if value else None))
