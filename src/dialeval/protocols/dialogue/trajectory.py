"""Trajectory criteria without a model: the tool calls of a turn (or of the whole
conversation) against the reference calls the data gives.

A rubric criterion with ``match:`` is scored here, by :mod:`dialeval.metrics.trajectory`;
its verdict is the scale's best value when the calls match and its worst when they do not
(default scale ``[0, 1]``, so a mean is the share of units that matched). A unit without
reference calls is ``not_applicable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dialeval.conversation.rubric import TrajectoryMatch
from dialeval.conversation.toolcalls import ToolCall
from dialeval.metrics.trajectory import Call, Match, Rule, match

if TYPE_CHECKING:
    from dialeval.conversation.data import Conversation, Turn
    from dialeval.conversation.rubric import Criterion


def calls(tool_calls: list[ToolCall]) -> list[Call]:
    return [Call(c.name, c.arguments) for c in tool_calls]


def trajectory_unit(criterion: Criterion, made: list[ToolCall], expected: list[ToolCall] | None, **where: Any) -> dict[str, Any]:
    """The unit record of one deterministic comparison (the same shape as a judged unit)."""
    rule = criterion.match
    assert rule is not None
    base = {**where, "criterion": criterion.name}
    if expected is None:
        return {**base, "status": "not_applicable", "reason": "no reference tool calls",
                "verdict": None, "score": None, "rationale": None}
    got, want = calls(made), calls(expected)
    outcome: Match = match(got, want, rule.mode, Rule(arguments=rule.arguments, ignore_keys=frozenset(rule.ignore_keys), tolerance=rule.tolerance))
    scale = criterion.scale
    verdict: int | str
    if scale.numeric:
        verdict = scale.high if outcome.matched else scale.low  # type: ignore[assignment]
    else:
        verdict = scale.labels[0] if outcome.matched else scale.labels[-1]
    return {
        **base, "status": "ok", "verdict": verdict, "score": scale.score(verdict),
        "rationale": outcome.explain(got, want, rule.mode), "call": None,
        "match": {"matched": outcome.matched, "pairs": outcome.pairs, "missing": outcome.missing, "extra": outcome.extra},
    }


def turn_trajectory(criterion: Criterion, turn: Turn) -> dict[str, Any]:
    return trajectory_unit(criterion, turn.tool_calls, turn.reference_tool_calls, turn=turn.number)


def conversation_trajectory(criterion: Criterion, conv: Conversation) -> dict[str, Any]:
    """The whole conversation's calls against its ``reference_tool_calls`` (or, without them,
    against the turns' references joined in order when every turn that made calls has one)."""
    expected = conv.reference_tool_calls
    if expected is None:
        turns = conv.assistant_turns()
        if any(t.reference_tool_calls is not None for t in turns) and all(
            t.reference_tool_calls is not None for t in turns if t.tool_calls
        ):
            expected = [c for t in turns for c in t.reference_tool_calls or []]
    return trajectory_unit(criterion, conv.tool_calls(), expected, level=criterion.level)
