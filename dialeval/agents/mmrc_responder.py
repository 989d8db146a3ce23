"""The model under test (model B): replies to user turns and answers the six questions.

- ``mmrc.reply`` gives the assistant reply of one turn when replies are live (or the
  turn has no recorded reply); the history is the earlier turns and replies.
- ``mmrc.answer`` answers every evaluation question from the whole history, once per
  condition: NOTE-TAKING off (history only) and on (history plus the notes as a JSON
  block in the question message). Each question is answered on its own, against the
  same history. With more than ``full_note_max_entries`` entries the notes given are
  the ``note_top_k`` entries closest to the question instead of the whole note.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dialeval.agents.base import ask_text, register_agent
from dialeval.agents.mmrc_common import (
    MmrcOptions,
    accepts_images,
    agent_context,
    attach_images,
    conversation_of,
    dumps,
    history,
    open_store,
    reply_texts,
    user_input,
    with_history,
)
from dialeval.config import EvalContext
from dialeval.data.mmrc import Question
from dialeval.memory.notes import NoteEntry, unflatten

TURN_TEMPLATE = "mmrc/responder"
QUESTION_TEMPLATE = "mmrc/responder_question"
LETTERS = "ABCDEFGHIJ"


def notes_block(note: dict[str, Any] | None) -> str:
    """The structured prompt of NOTE-TAKING: empty when notes are off."""
    if note is None:
        return ""
    return (
        "Notes taken during this conversation (JSON; newer facts have replaced older ones):\n"
        f"{dumps(note)}\nUse these notes together with the conversation.\n\n"
    )


def choices_text(question: Question) -> str:
    if question.format == "multiple_choice":
        return "Options:\n" + "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(question.options))
    if question.format == "true_false":
        return "(a true/false question)"
    return ""


def format_hint(question: Question) -> str:
    if question.format == "multiple_choice":
        return choices_text(question) + "\nAnswer with the letter of the right option, then a short reason."
    if question.format == "true_false":
        return "Answer true or false, then give a short reason."
    return ""


@register_agent("mmrc.reply", role="reply", benchmark="mmrc")
def reply():
    """Replies to the current user turn (live replies, or turns without a recorded one)."""

    async def reply_turn(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmrcOptions.of(context)
        conv = conversation_of(state)
        index = state.get("turn", 0)
        turn = conv.turns[index]
        if options.replies == "recorded" and turn.assistant is not None:
            return {}
        ctx = agent_context(context, "responder", "responder", TURN_TEMPLATE)
        blocks = accepts_images(ctx, options.images)
        texts = reply_texts(conv, state.get("replies", []), options.replies == "recorded")
        first = conv.image_offsets()[index] + 1
        rendered = ctx.template.render(message=user_input(turn.user, turn.images, first, blocks))
        messages = with_history(attach_images(rendered, turn.images, first, blocks), history(conv, texts, index, blocks))
        call = await ask_text(ctx, "mmrc.reply", messages, placeholder="dry-run reply")
        return {"replies": [{"turn": index + 1, "text": call.raw.strip(), "call": call.model_dump()}]}

    return reply_turn


@register_agent("mmrc.answer", role="answer", benchmark="mmrc")
def answer():
    """Answers the six evaluation questions without and/or with the notes."""

    async def answer_all(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmrcOptions.of(context)
        conv = conversation_of(state)
        ctx = agent_context(context, "responder", "responder_question", QUESTION_TEMPLATE)
        blocks = accepts_images(ctx, options.images)
        texts = reply_texts(conv, state.get("replies", []), options.replies == "recorded")
        earlier = history(conv, texts, len(conv.turns), blocks)
        entries: list[NoteEntry] = []
        store = None
        if "on" in options.conditions:
            store = open_store(context)
            entries = await asyncio.to_thread(store.entries, conv.id)

        async def notes_for(question: Question) -> tuple[dict[str, Any], str, int]:
            if len(entries) <= options.full_note_max_entries:
                return unflatten(entries), "full", len(entries)
            closest = await asyncio.to_thread(store.search, conv.id, question.question, options.note_top_k)
            return unflatten(closest), "top_k", len(closest)

        async def one(condition: str, index: int, question: Question) -> dict[str, Any]:
            note, mode, n_entries = (None, None, 0)
            if condition == "on":
                note, mode, n_entries = await notes_for(question)
            rendered = ctx.template.render(
                notes=notes_block(note), question=question.question, format_hint=format_hint(question)
            )
            call = await ask_text(ctx, "mmrc.answer", with_history(rendered, earlier), placeholder="dry-run answer")
            return {
                "condition": condition,
                "index": index,
                "ability": question.ability,
                "notes": note,
                "notes_mode": mode,
                "notes_entries": n_entries,
                "call": call.model_dump(),
            }

        answers = await asyncio.gather(
            *(one(c, i, q) for c in options.conditions for i, q in enumerate(conv.questions))
        )
        return {"answers": list(answers)}

    return answer_all
