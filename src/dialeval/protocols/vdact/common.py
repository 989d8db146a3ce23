"""What the VDAct judges share: the turn being judged, the worked example, the record of a verdict.

The graph state holds the dialogue, the index of the next turn and the verdicts so far
(``judged``, in turn order); every judge reads the turn at ``index`` and returns one
verdict for it. A verdict carries ``scores`` per dimension (``rating`` for the 1-3
judges, ``LLM-Acc``/``LLM-Rel`` for the Video-ChatGPT judge) and the call's status.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from pydantic import BaseModel, Field

from dialeval.agents.base import Answer
from dialeval.agents.judge import Judge, TemplateChoice, judge
from dialeval.agents.roles import Role, RoleTable
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


def example_text(state: dict[str, Any]) -> str:
    """The example dialogue as the prompts show it (:func:`render_example` of :func:`example_of`).

    The built-in example is the same text in every prompt of a run: it is read from its
    file and rendered once per process, not once per turn."""
    if state.get("example"):
        return render_example(example_of(state))
    return _builtin_example_text(has_summary(state))


@lru_cache(maxsize=2)
def _builtin_example_text(with_summary: bool) -> str:
    return render_example(builtin_example(with_summary=with_summary))


def summary_template(name: str) -> TemplateChoice:
    """The template of judge ``name`` that matches the run: with a summary (config key
    ``judge``) or without one (``judge_no_summary``)."""

    def choose(state: dict[str, Any]) -> tuple[str, str | None]:
        if has_summary(state):
            return f"vdact/{name}", None
        return f"vdact/{name}_no_summary", "judge_no_summary"

    return choose


def verdict(
    turn: dict[str, Any], answer: Answer[Any] | None, scores: dict[str, float] | None, rationale: str | None, status: str | None = None
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


def skip_unanswered(lowest: dict[str, float]) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """A judge's ``skip``: a turn the system left empty scores ``lowest`` without a call."""
    return lambda state: unanswered(state, lowest)


def turn_verdict(scores: Callable[[Any], dict[str, float]]) -> Callable[[dict[str, Any], Answer[Any]], dict[str, Any]]:
    """A judge's ``output``: the current turn's verdict (``scores`` of a readable answer, its
    rationale if it gives one), and the walk moved on to the next turn."""

    def output(state: dict[str, Any], answer: Answer[Any]) -> dict[str, Any]:
        value = answer.value
        found = scores(value) if value is not None else None
        return advance(state, verdict(current_turn(state), answer, found, getattr(value, "rationale", None)))

    return output


def rating_judge(name: str, template: str | TemplateChoice, summary: str, **declaration: Any) -> Judge[TurnRating]:
    """Declare a judge that rates a turn 1-3 with its rationale first (VDEval, LAVE)."""
    return judge(
        name,
        role="judge",
        benchmark="vdact",
        template=template,
        schema=TurnRating,
        skip=skip_unanswered({"rating": 1}),
        output=turn_verdict(lambda v: {"rating": v.rating}),
        placeholder=lambda: TurnRating(rationale=DRY_RUN_RATIONALE, rating=2),
        summary=summary,
        **declaration,
    )


def turn_only_judge(
    name: str, *, lowest: dict[str, float], scores: Callable[[Any], dict[str, float]], shown_as: str | None = None,
    **declaration: Any,
) -> Judge[Any]:
    """Declare a judge that sees the turn alone (no summary, no history): a system that left
    the turn empty scores ``lowest``; ``shown_as`` names the judge in the setup error."""
    return judge(
        name,
        role="judge",
        benchmark="vdact",
        skip=skip_unanswered(lowest),
        variables=lambda state, context: turn_only_values(state, shown_as or name),
        output=turn_verdict(scores),
        **declaration,
    )


# the one role; which agent plays it follows option `judge` (graph.JUDGE_AGENTS) unless `agents: {judge: ...}` says
ROLES = RoleTable(
    Role("judge", "vdact.session_judge", node="judge_turn", templates=("judge", "judge_no_summary", "lave", "video_chatgpt")),
)
