"""The model under test (model B): replies to user turns and answers the evaluation questions.

Algorithm 1 of the paper, with its defaults:
- ``mmrc.reply`` gives the assistant reply of one turn from the conversation so far,
  the model's own earlier replies included (``replies: live``); ``replies: recorded``
  replays the data file's replies and asks the model only where a turn has none.
- ``mmrc.answer`` asks one evaluation question per graph step, in each condition:
  NOTE-TAKING off (the conversation only) and on (the conversation plus the note, given
  with the question). With ``questions: sequential`` each question and the model's
  answer join the conversation before the next question; ``independent`` asks each one
  right after the conversation.

The model gets no system prompt of ours unless ``system_prompt: guided``, and its answers
are capped at ``responder_max_tokens`` (256, the paper's cap). A cut-off or empty answer is
its own: kept as it stands, judged (a cut-off one) or scored 0 (an empty one).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from dialeval.agents.base import AgentContext, ask_text, register_agent
from dialeval.protocols.mmrc.common import (
    DRY_RUN_REPLY,
    MmrcOptions,
    accepts_images,
    attach_images,
    conversation_of,
    dumps,
    history,
    open_store,
    reply_texts,
    responder_context,
    user_input,
    with_history,
)
from dialeval.config import EvalContext
from dialeval.protocols.mmrc.data import Conversation, Question
from dialeval.memory.notes import NoteEntry, unflatten
from dialeval.agents.templates import load_template
from dialeval.models.usage import count_tokens

NOTES_TEMPLATE = "mmrc/responder_notes"
LETTERS = "ABCDEFGHIJ"


class NoteTooLong(RuntimeError):
    """The whole note does not fit the responder's context window and the policy is ``fail``."""


def choices_text(question: Question) -> str:
    """Multiple-choice options, lettered A, B, ...; empty for other formats."""
    if question.format != "multiple_choice":
        return ""
    return "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(question.options))


def question_text(question: Question) -> str:
    """The question as the user asks it (options, if any, on the lines below)."""
    choices = choices_text(question)
    return f"{question.question}\n{choices}" if choices else question.question


def tokens_of(messages: list[BaseMessage]) -> int:
    """Text tokens of a prompt (image blocks are not counted), 4 a message for the roles."""
    return sum(count_tokens(m.text) + 4 for m in messages)


@register_agent("mmrc.reply", role="reply", benchmark="mmrc")
def reply():
    """Replies to the current user turn as the model under test (Algorithm 1, step 1)."""

    async def reply_turn(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmrcOptions.of(context)
        conv = conversation_of(state)
        index = state.get("turn", 0)
        turn = conv.turns[index]
        if options.replies == "recorded" and turn.assistant is not None:
            return {}
        ctx = responder_context(context)
        blocks = accepts_images(ctx, options.images)
        texts = reply_texts(conv, state.get("replies", []), options.replies == "recorded")
        first = conv.image_offsets()[index] + 1
        message = turn.user if blocks else user_input(turn.user, turn.images, first, blocks=False)
        rendered = attach_images(ctx.template.render(message=message), turn.images, first, blocks)
        messages = with_history(rendered, history(conv, texts, index, blocks))
        call = await ask_text(ctx, "mmrc.reply", messages, placeholder=DRY_RUN_REPLY)
        return {"replies": [{"turn": index + 1, "text": call.raw.strip(), "call": call.model_dump()}]}

    return reply_turn


def fit_note(closest: list[NoteEntry], size: Callable[[list[NoteEntry]], int], budget: int) -> list[NoteEntry]:
    """The most entries of ``closest`` (nearest first) whose message ``size`` fits ``budget``."""
    kept = list(closest)
    while kept and size(kept) > budget:
        kept.pop()  # the farthest entry goes first
    return kept


class _Notes:
    """The note given with a question: whole, or cut to fit ``context_window`` (see options)."""

    def __init__(self, context: EvalContext, options: MmrcOptions, conv: Conversation, reserve: int):
        self.options = options
        self.conv = conv
        self.reserve = reserve  # the answer's own tokens
        self.template = load_template(context.templates.get("responder_notes", NOTES_TEMPLATE))
        self.store = open_store(context)

    def message(self, note: dict[str, Any], asked: str) -> str:
        return str(self.template.render(note=dumps(note), question=asked)[-1].content)

    async def given(self, question: Question, asked: str, earlier: list[BaseMessage]) -> tuple[str, dict[str, Any]]:
        """The question message with the note, and how much of the note it holds."""
        entries: list[NoteEntry] = await asyncio.to_thread(self.store.entries, self.conv.id)
        whole = self.message(unflatten(entries), asked)
        report = {"mode": "full", "entries": len(entries), "total": len(entries)}
        window = self.options.context_window
        if window is None:
            return whole, report
        budget = window - tokens_of(earlier) - self.reserve
        if count_tokens(whole) + 4 <= budget:
            return whole, report
        if self.options.note_overflow == "fail":
            raise NoteTooLong(
                f"conversation {self.conv.id!r}: the note ({len(entries)} entries, {count_tokens(whole)} tokens with the "
                f"question) does not fit the {budget} tokens left of context_window={window} (note_overflow: fail)"
            )
        closest = await asyncio.to_thread(self.store.search, self.conv.id, question.question, self.options.note_top_k)
        kept = fit_note(closest, lambda some: count_tokens(self.message(unflatten(some), asked)) + 4, budget)
        return self.message(unflatten(kept), asked), {**report, "mode": "top_k", "entries": len(kept)}


def _earlier_questions(state: dict[str, Any], condition: str) -> list[BaseMessage]:
    """The questions already asked in ``condition`` and the model's answers, in order."""
    asked = sorted((a for a in state.get("answers", []) if a["condition"] == condition), key=lambda a: a["index"])
    out: list[BaseMessage] = []
    for a in asked:
        out += [HumanMessage(a["asked"]), AIMessage(a["call"]["raw"].strip())]
    return out


@register_agent("mmrc.answer", role="answer", benchmark="mmrc")
def answer():
    """Asks the current evaluation question in each condition (Algorithm 1, step 2)."""

    async def answer_question(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmrcOptions.of(context)
        conv = conversation_of(state)
        index = state.get("question", 0)
        question = conv.questions[index]
        ctx: AgentContext = responder_context(context)
        blocks = accepts_images(ctx, options.images)
        texts = reply_texts(conv, state.get("replies", []), options.replies == "recorded")
        replay = history(conv, texts, len(conv.turns), blocks)
        asked = question_text(question)
        notes = _Notes(context, options, conv, ctx.client.settings.max_tokens) if "on" in options.conditions else None

        async def prompt(condition: str) -> tuple[list[BaseMessage], dict[str, Any]]:
            earlier = replay + (_earlier_questions(state, condition) if options.questions == "sequential" else [])
            message, note = asked, {"mode": None, "entries": 0, "total": 0}
            if condition == "on" and notes is not None:
                message, note = await notes.given(question, asked, earlier)
            return with_history(ctx.template.render(message=message), earlier), note

        # every condition's prompt first, then the calls together: a local model batches
        # them only if they arrive together (reading the note would delay one of them)
        prompts = await asyncio.gather(*(prompt(c) for c in options.conditions))

        async def one(condition: str, messages: list[BaseMessage], note: dict[str, Any]) -> dict[str, Any]:
            call = await ask_text(ctx, "mmrc.answer", messages, placeholder=DRY_RUN_REPLY)
            return {
                "condition": condition,
                "index": index,
                "ability": question.ability,
                "asked": asked,
                "notes_mode": note["mode"],
                "notes_entries": note["entries"],
                "notes_total": note["total"],
                "call": call.model_dump(),
            }

        calls = (one(c, messages, note) for c, (messages, note) in zip(options.conditions, prompts))
        return {"answers": list(await asyncio.gather(*calls))}

    return answer_question
