"""Two systems on the same conversations (option ``versus``): which reply is better, per criterion.

Each comparison is asked twice, once in each order (MDSEval's protocol for positional
bias). A verdict that flips with the order is a tie and is counted position-inconsistent.
At turn level the judge reads the earlier USER turns only (the two systems' earlier
replies differ, and showing one side's would favour it), in the run's window under the
budget; at conversation level it reads both whole conversations, and a pair that does
not fit the budget is recorded ``over_budget``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel

from dialeval.agents.base import register_agent
from dialeval.agents.judge import Judge
from dialeval.config import EvalContext
from dialeval.protocols.dialogue.common import ROLES, DialogueOptions
from dialeval.protocols.dialogue.context import View, build_view, prompt_tokens, turn_line
from dialeval.conversation.data import Conversation, Turn, conversation_of
from dialeval.protocols.dialogue.judge import grounding_text, labelled_only, missing, selected
from dialeval.conversation.rubric import Criterion, load_rubric, rubric_ref


class Preference(BaseModel):
    rationale: str
    winner: Literal["1", "2", "tie"]


PAIRWISE = Judge("dialogue.pairwise_judge", "pairwise_judge", "dialogue", "dialogue/pairwise", Preference, template_key="pairwise")
ORDERS = (("a", "b"), ("b", "a"))


def combine(first: str | None, second: str | None) -> tuple[str | None, bool]:
    """The verdict (``a``, ``b``, ``tie``) of the two orders, and whether it flipped with the order."""
    if first is None or second is None:
        return None, False
    if first == second:
        return first, False
    if "tie" in (first, second):
        return "tie", False  # one order saw no difference: a tie, not a flip
    return "tie", True


async def ask_both(context: EvalContext, render_pair: Any, criterion: Criterion, **where: Any) -> dict[str, Any]:
    """Ask in both orders; ``render_pair(first, second)`` gives (messages, View) for one order."""
    ctx = PAIRWISE.context(context, model=ROLES.model(context, "pairwise_judge"))
    verdicts: list[str | None] = []
    calls: list[dict[str, Any]] = []
    tokens: list[int] = []
    for order in ORDERS:
        messages, view = render_pair(ctx, *order)
        tokens.append(view.tokens)
        if view.over_budget:
            return {**where, "criterion": criterion.name, "status": "over_budget", "winner": None,
                    "position_inconsistent": False, "prompt_tokens": tokens, "orders": [], "calls": calls}
        answer = await PAIRWISE.ask(ctx, messages, label=f"dialogue.pairwise.{criterion.name}",
                                    placeholder=lambda: Preference(rationale="dry-run", winner="tie"))
        calls.append(answer.call.model_dump())
        pick = answer.value.winner if answer.value is not None else None
        verdicts.append(None if pick is None else "tie" if pick == "tie" else order[int(pick) - 1])
    winner, flipped = combine(*verdicts)
    status = "ok" if winner is not None else next(c["status"] for c in calls if c["status"] != "ok")
    return {**where, "criterion": criterion.name, "status": status, "winner": winner, "position_inconsistent": flipped,
            "orders": verdicts, "prompt_tokens": tokens, "calls": calls}


def transcript(conv: Conversation, turns: list[Turn]) -> str:
    return "\n".join(turn_line(t) for t in turns)


async def compare_turn(context: EvalContext, conv: Conversation, turn: Turn, criterion: Criterion) -> dict[str, Any]:
    options = DialogueOptions.of(context)
    assert conv.versus is not None
    replies = {"a": turn.text, "b": conv.versus[turn.number - 1].text}
    earlier_users = [t for t in conv.turns[: turn.number - 1] if t.role == "user"]

    def render_pair(ctx: Any, first: str, second: str) -> tuple[list[Any], View]:
        values = {"criterion": criterion.name, "description": criterion.description.strip(), "system_prompt": conv.system or "(none)",
                  "grounding": grounding_text(conv), "first": replies[first], "second": replies[second]}
        view = build_view(lambda text: ctx.template.render(**values, context=text), "window" if options.context != "full" else "full",
                          earlier_users, options.context_budget, window_turns=options.window_turns)
        return view.messages, view

    return await ask_both(context, render_pair, criterion, turn=turn.number)


async def compare_whole(context: EvalContext, conv: Conversation, criterion: Criterion) -> dict[str, Any]:
    options = DialogueOptions.of(context)
    assert conv.versus is not None
    sides = {"a": transcript(conv, conv.turns), "b": transcript(conv, conv.versus)}

    def render_pair(ctx: Any, first: str, second: str) -> tuple[list[Any], View]:
        values = {"criterion": criterion.name, "description": criterion.description.strip(), "system_prompt": conv.system or "(none)",
                  "grounding": grounding_text(conv), "first": sides[first], "second": sides[second], "context": "(the candidates are whole conversations)"}
        messages = ctx.template.render(**values)
        size = prompt_tokens(messages)
        return messages, View(messages, size, over_budget=size > options.context_budget)

    return await ask_both(context, render_pair, criterion, level=criterion.level)


@register_agent("dialogue.pairwise_judge", role="pairwise_judge", benchmark="dialogue")
def pairwise_judge():
    """With option versus: compares the two systems per criterion, per turn and per conversation, in both orders."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = DialogueOptions.of(context)
        conv = conversation_of(state)
        if conv.versus is None:
            return {"pairwise_units": []}
        rubric = load_rubric(rubric_ref(options, conv.metadata))
        # a reference is one system's turn; criteria that need one are not compared
        usable = [c for c in selected(rubric.criteria, options)
                  if "reference" not in c.needs and c.match is None and not missing(c, conv, None)]  # match: no model to ask
        turn_level = [c for c in usable if c.level == "turn"]  # judge_only=labelled: the labelled units only
        jobs = [compare_turn(context, conv, t, c) for t in conv.assistant_turns()
                for c in labelled_only(turn_level, options, f"{conv.id}/{t.number}", rubric)]
        jobs += [compare_whole(context, conv, c)
                 for c in labelled_only([c for c in usable if c.level == "conversation"], options, conv.id, rubric)]
        return {"pairwise_units": list(await asyncio.gather(*jobs))}

    return node
