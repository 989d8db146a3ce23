"""The judge's note-taker (NOTE-TAKING for the judge): a JSON note of each conversation.

After each assistant turn it sees the current note and the newest exchange (the user
turns since the previous reply, and the reply) and returns the whole updated note,
stored in Chroma one entry per key, so a corrected fact overwrites the old one. Its
prompt is bounded by the same budget as the judge's: an exchange that does not fit
beside the note is not sent, and is recorded ``over_budget``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict

from dialeval.agents.judge import Judge
from dialeval.config import EvalContext
from dialeval.protocols.dialogue.common import ROLES, DialogueOptions
from dialeval.protocols.dialogue.context import prompt_tokens, turn_line
from dialeval.protocols.dialogue.data import Conversation, Turn
from dialeval.protocols.dialogue.verdict import dumps


class Note(BaseModel):
    """Any JSON object: the keys are the note-taker's choice."""

    model_config = ConfigDict(extra="allow")


NOTETAKER = Judge("dialogue.notetaker", "notetaker", "dialogue", "dialogue/notetaker", Note)


def open_store(context: EvalContext) -> Any:
    """The run's note store (under the run folder unless a Chroma server is configured)."""
    from dialeval.memory.client import open_note_store

    return open_note_store(DialogueOptions.of(context).memory, context.run_dir)


def exchange_of(conv: Conversation, reply: Turn) -> list[Turn]:
    """The user turns since the previous assistant turn, and the reply."""
    start = reply.number - 1
    while start > 0 and conv.turn(start).role == "user":
        start -= 1
    return conv.turns[start:reply.number]


async def take_note(context: EvalContext, store: Any, conv: Conversation, reply: Turn) -> dict[str, Any]:
    """Update the stored note with the exchange ending at ``reply``; the record of what happened."""
    options = DialogueOptions.of(context)
    current = await asyncio.to_thread(store.note, conv.id)
    ctx = NOTETAKER.context(context, model=ROLES.model(context, "notetaker"))
    exchange = "\n".join(turn_line(t) for t in exchange_of(conv, reply))
    messages = ctx.template.render(note=dumps(current) if current else "{}", exchange=exchange)
    tokens = prompt_tokens(messages)
    record: dict[str, Any] = {"turn": reply.number, "prompt_tokens": tokens, "change": None}
    if tokens > options.context_budget:
        return {**record, "status": "over_budget", "call": None}
    answer = await NOTETAKER.ask(
        ctx, messages, placeholder=lambda: Note.model_validate({**current, f"turn_{reply.number}": reply.text[:60]})
    )
    if answer.call.status == "ok" and answer.call.value is not None:
        change = await asyncio.to_thread(store.update, conv.id, answer.call.value, reply.number)
        record["change"] = change.as_dict()
    return {**record, "status": answer.call.status, "call": answer.call.model_dump()}
