"""Two systems on the same conversations (option ``versus``): which reply is better, per criterion.

Each comparison is asked twice, once in each order (MDSEval's protocol for positional
bias). A verdict that flips with the order is a tie and is counted position-inconsistent;
any change with the order (a tie in one, a winner in the other too) is counted
``order_inconsistent``, as the MT-Bench paper counts it. At turn level each candidate is
its system's conversation up to the judged reply (in the run's window), at conversation
level the whole conversation; a pair that does not fit the budget is recorded ``over_budget``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel

from dialeval.agents.base import register_agent
from dialeval.agents.judge import Judge
from dialeval.config import EvalContext
from dialeval.protocols.dialogue.common import ROLES, DialogueOptions
from dialeval.protocols.dialogue.context import View, prompt_tokens, turn_line
from dialeval.conversation.data import Conversation, Turn, conversation_of
from dialeval.protocols.dialogue.judge import grounding_text, labelled_only, missing, selected
from dialeval.conversation.rubric import Criterion, conversation_rubric


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
    changed = None not in verdicts and verdicts[0] != verdicts[1]
    return {**where, "criterion": criterion.name, "status": status, "winner": winner, "position_inconsistent": flipped,
            "order_inconsistent": changed, "orders": verdicts, "prompt_tokens": tokens, "calls": calls}


def transcript(conv: Conversation, turns: list[Turn]) -> str:
    return "\n".join(turn_line(t) for t in turns)


def renderer(conv: Conversation, criterion: Criterion, sides: dict[str, str], note: str, budget: int) -> Any:
    """``render_pair(ctx, first, second)`` of :func:`ask_both` for two candidate transcripts."""

    def render_pair(ctx: Any, first: str, second: str) -> tuple[list[Any], View]:
        values = {"criterion": criterion.name, "description": criterion.description.strip(), "system_prompt": conv.system or "(none)",
                  "grounding": grounding_text(conv), "first": sides[first], "second": sides[second], "context": note}
        messages = ctx.template.render(**values)
        size = prompt_tokens(messages)
        return messages, View(messages, size, over_budget=size > budget)

    return render_pair


async def compare_turn(context: EvalContext, conv: Conversation, turn: Turn, criterion: Criterion) -> dict[str, Any]:
    """One reply of each system, each shown in its own conversation up to that reply, as
    MT-Bench's judge saw them (issue 49): two identical replies after different earlier
    replies are not the same candidate. The window mode shows the last ``window_turns``
    turns before the reply."""
    options = DialogueOptions.of(context)
    assert conv.versus is not None
    start = 0 if options.context == "full" else max(0, turn.number - 1 - options.window_turns)
    sides = {"a": transcript(conv, conv.turns[start: turn.number]), "b": transcript(conv, conv.versus[start: turn.number])}
    note = (f"(each candidate is one assistant's conversation with the user, up to its reply at turn {turn.number}; "
            f"judge that reply, the candidate's last, in the light of what came before it)")
    return await ask_both(context, renderer(conv, criterion, sides, note, options.context_budget), criterion, turn=turn.number)


async def compare_whole(context: EvalContext, conv: Conversation, criterion: Criterion) -> dict[str, Any]:
    options = DialogueOptions.of(context)
    assert conv.versus is not None
    sides = {"a": transcript(conv, conv.turns), "b": transcript(conv, conv.versus)}
    note = "(the candidates are whole conversations)"
    return await ask_both(context, renderer(conv, criterion, sides, note, options.context_budget), criterion, level=criterion.level)


@register_agent("dialogue.pairwise_judge", role="pairwise_judge", benchmark="dialogue")
def pairwise_judge():
    """With option versus: compares the two systems per criterion, per turn and per conversation, in both orders."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = DialogueOptions.of(context)
        conv = conversation_of(state)
        if conv.versus is None:
            return {"pairwise_units": []}
        rubric = conversation_rubric(options, conv.metadata)
        # a reference is one system's turn; criteria that need one are not compared
        usable = [c for c in selected(rubric.criteria, options)
                  if "reference" not in c.needs and c.match is None and not missing(c, conv, None)]  # match: no model to ask
        turn_level = [c for c in usable if c.level == "turn"]  # judge_only=labelled: the labelled units only
        jobs = [compare_turn(context, conv, t, c) for t in conv.assistant_turns()
                for c in labelled_only(turn_level, options, f"{conv.id}/{t.number}", rubric, comparing=True)]
        jobs += [compare_whole(context, conv, c)
                 for c in labelled_only([c for c in usable if c.level == "conversation"], options, conv.id, rubric, comparing=True)]
        return {"pairwise_units": list(await asyncio.gather(*jobs))}

    return node
