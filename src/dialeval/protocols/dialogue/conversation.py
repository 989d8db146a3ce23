"""The conversation judge: conversation-level criteria, and summary-level ones where a summary is given.

It sees the conversation in the run's context mode with the whole conversation as the
"earlier" turns (``notes``: the final note plus the last turns), under the same budget.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dialeval.agents.base import register_agent
from dialeval.agents.judge import Judge
from dialeval.config import EvalContext
from dialeval.protocols.dialogue.common import DialogueOptions
from dialeval.protocols.dialogue.context import build_view
from dialeval.conversation.data import Conversation, conversation_of
from dialeval.protocols.dialogue.judge import criterion_values, expected_text, labelled_only, missing, relevant_notes, selected, trajectory_template
from dialeval.protocols.dialogue.notetaker import open_store
from dialeval.conversation.rubric import Criterion, conversation_rubric
from dialeval.protocols.dialogue.trajectory import conversation_trajectory
from dialeval.protocols.dialogue.verdict import Verdict, checker, json_schema, scorer, not_applicable, placeholder, unit

CONVERSATION_JUDGE = Judge(
    "dialogue.conversation_judge", "judge", "dialogue", "dialogue/judge_conversation", Verdict,
    template_key="judge_conversation",
)


async def judge_whole(context: EvalContext, conv: Conversation, criterion: Criterion, notes: list[Any]) -> dict[str, Any]:
    options = DialogueOptions.of(context)
    if criterion.match is not None:
        return conversation_trajectory(criterion, conv)
    why = missing(criterion, conv, None)  # references are per turn: a whole-conversation criterion needing one has none
    if criterion.level == "summary" and conv.summary is None:
        why = "no summary"
    if why:
        return not_applicable(criterion, why, level=criterion.level)
    template, key = trajectory_template(criterion, "judge_trajectory_conversation")
    ctx = CONVERSATION_JUDGE.context(context, template=template, template_key=key)
    values = {
        **criterion_values(criterion, conv),
        "reference_calls": expected_text(conv.reference_tool_calls),
        "summary": conv.summary if criterion.level == "summary" and conv.summary else "(none)",
    }
    view = build_view(
        lambda text: ctx.template.render(**values, context=text), options.context, conv.turns,
        options.context_budget, window_turns=options.window_turns, notes=notes,
    )
    if view.over_budget:
        return unit(criterion, view, None, level=criterion.level)
    answer = await CONVERSATION_JUDGE.ask(
        ctx, view.messages, label=f"dialogue.conversation_judge.{criterion.name}",
        validate=checker(criterion), placeholder=placeholder(criterion), json_schema=json_schema(criterion),
        score=scorer(criterion),
    )
    return unit(criterion, view, answer, level=criterion.level)


@register_agent("dialogue.conversation_judge", role="conversation_judge", benchmark="dialogue")
def conversation_judge():
    """Judges the whole conversation (and its summary, if given) on conversation- and summary-level criteria."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = DialogueOptions.of(context)
        conv = conversation_of(state)
        rubric = conversation_rubric(options, conv.metadata)
        criteria = labelled_only(selected(rubric.at("conversation") + rubric.at("summary"), options), options, conv.id, rubric)
        store = await asyncio.to_thread(open_store, context) if options.context == "notes" and criteria else None

        async def one(criterion: Criterion) -> dict[str, Any]:
            notes = await relevant_notes(store, conv, criterion.description, options.note_top_k) if store else []
            return await judge_whole(context, conv, criterion, notes)

        return {"conversation_units": list(await asyncio.gather(*(one(c) for c in criteria)))}

    return node
