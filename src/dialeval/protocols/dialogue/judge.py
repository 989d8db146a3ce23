"""The turn judge: every assistant turn, every turn-level criterion, in the chosen context mode.

Turns are judged in order (the session layout shows the judge its earlier verdicts; the
note-taker writes after each reply), the criteria of one turn together. A criterion that
needs grounding or a reference the conversation lacks is ``not_applicable``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dialeval.agents.images import accepts_images, attach_images
from dialeval.agents.judge import Judge
from dialeval.config import EvalContext
from dialeval.protocols.dialogue.common import DialogueOptions
from dialeval.protocols.dialogue.context import build_view, turn_text
from dialeval.conversation.data import Conversation, Turn, conversation_of
from dialeval.conversation.labels import labelled_units
from dialeval.protocols.dialogue.notetaker import exchange_of, open_store, take_note
from dialeval.conversation.rubric import Criterion, Rubric, conversation_rubric, dimension, load_rubric
from dialeval.conversation.toolcalls import ToolCall, reference_lines, tools_text
from dialeval.protocols.dialogue.trajectory import turn_trajectory
from dialeval.protocols.dialogue.verdict import Verdict, checker, json_schema, scorer, not_applicable, placeholder, scale_values, shown, unit

JUDGE = Judge("dialogue.criterion_judge", "judge", "dialogue", "dialogue/judge", Verdict)


def missing(criterion: Criterion, conv: Conversation, turn: Turn | None) -> str | None:
    """What the criterion needs and this unit lacks (then it is not judged)."""
    if "grounding" in criterion.needs and not conv.grounding:
        return "no grounding documents"
    if "reference" in criterion.needs and (turn is None or turn.reference is None):
        return "no reference reply"
    return None


def grounding_text(conv: Conversation) -> str:
    return "\n\n".join(f"[document {i + 1}]\n{d}" for i, d in enumerate(conv.grounding)) or "(none)"


def criterion_values(criterion: Criterion, conv: Conversation) -> dict[str, Any]:
    """Template values every judge prompt has: the criterion, the system prompt, the documents, the tools."""
    return {**scale_values(criterion), "system_prompt": conv.system or "(none)", "grounding": grounding_text(conv),
            "tools": tools_text(conv.tools)}


def trajectory_template(criterion: Criterion, key: str) -> tuple[str | None, str | None]:
    """The LLM trajectory judge's template and key (``kind: trajectory``), or none: the usual one."""
    return (f"dialogue/{key}", key) if criterion.kind == "trajectory" else (None, None)


def expected_text(calls: list[ToolCall] | None) -> str:
    return "\n".join(reference_lines(calls)) if calls else "(none given)"


async def relevant_notes(store: Any, conv: Conversation, query: str, k: int) -> list[Any]:
    count = await asyncio.to_thread(store.count, conv.id)
    if not count:
        return []
    return list(await asyncio.to_thread(store.search, conv.id, query, min(k, count)))


async def judge_turn(
    context: EvalContext, conv: Conversation, turn: Turn, criterion: Criterion,
    verdicts: dict[int, str], notes: list[Any],
) -> dict[str, Any]:
    options = DialogueOptions.of(context)
    if criterion.match is not None:
        return turn_trajectory(criterion, turn)
    why = missing(criterion, conv, turn)
    if why:
        return not_applicable(criterion, why, turn=turn.number)
    template, key = trajectory_template(criterion, "judge_trajectory")
    ctx = JUDGE.context(context, template=template, template_key=key)
    values = {
        **criterion_values(criterion, conv),
        "reference": turn.reference or "(none)",
        "reference_calls": expected_text(turn.reference_tool_calls),
        "turn": turn.number,
        "reply": turn_text(turn),
    }
    view = build_view(
        lambda text: ctx.template.render(**values, context=text), options.context, conv.turns[: turn.number - 1],
        options.context_budget, window_turns=options.window_turns, verdicts=verdicts, notes=notes,
    )
    if view.over_budget:
        return unit(criterion, view, None, turn=turn.number)
    messages = view.messages
    pictures = [image for t in exchange_of(conv, turn) for image in t.images]  # the user's latest and the reply's
    if pictures and accepts_images(ctx, options.images):
        messages = attach_images(messages, pictures, 1, True)
    answer = await JUDGE.ask(
        ctx, messages, label=f"dialogue.judge.{criterion.name}",
        validate=checker(criterion), placeholder=placeholder(criterion), json_schema=json_schema(criterion),
        score=scorer(criterion),
    )
    return unit(criterion, view, answer, turn=turn.number)


@JUDGE.register
def criterion_judge():
    """Judges every assistant turn on each turn-level criterion, rationale first, in the chosen context mode."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = DialogueOptions.of(context)
        conv = conversation_of(state)
        rubric = conversation_rubric(options, conv.metadata)
        criteria = selected(rubric.at("turn"), options)
        store = None
        if options.context == "notes":
            store = await asyncio.to_thread(open_store, context)
            await asyncio.to_thread(store.clear, conv.id)
        units: list[dict[str, Any]] = []
        notes_log: list[dict[str, Any]] = []
        session: dict[str, dict[int, str]] = {c.name: {} for c in criteria}
        for turn in conv.assistant_turns():
            notes: list[Any] = []
            todo = labelled_only(criteria, options, f"{conv.id}/{turn.number}", rubric)
            if store is not None and todo:
                before = conv.turns[max(0, turn.number - 2)]
                notes = await relevant_notes(store, conv, f"{before.text}\n{turn.text}", options.note_top_k)
            done = await asyncio.gather(*(judge_turn(context, conv, turn, c, session[c.name], notes) for c in todo))
            for criterion, record in zip(todo, done):
                text = shown(record)
                if text:
                    session[criterion.name][turn.number] = text
            units.extend(done)
            if store is not None:
                notes_log.append(await take_note(context, store, conv, turn))
        return {"turn_units": units, "note_updates": notes_log}

    return node


def labelled_only(criteria: list[Criterion], options: DialogueOptions, unit: str, rubric: Rubric,
                  comparing: bool = False) -> list[Criterion]:
    """The criteria to judge ``unit`` on: all, or under ``judge_only=labelled`` those
    with a human label for it (the labels file is read once per version); under
    ``judge_only=pairs`` only the comparison (``comparing``) judges, the scoring judges nothing."""
    if options.judge_only == "pairs":  # issue 49: a pairwise card compares the two systems and scores nothing
        return criteria if comparing else []
    if options.judge_only != "labelled" or not options.human_scores:
        return criteria
    wanted = labelled_units(options.human_scores, options.rubric)
    turn_names = {c.name for c in rubric.at("turn")}
    return [c for c in criteria if (unit, dimension(c.name, c.level, c.name in turn_names)) in wanted]


def selected(criteria: list[Criterion], options: DialogueOptions) -> list[Criterion]:
    """The rubric's criteria, or those ``criteria`` names (checked at load)."""
    if options.criteria is None:
        return criteria
    return [c for c in criteria if c.name in options.criteria]
