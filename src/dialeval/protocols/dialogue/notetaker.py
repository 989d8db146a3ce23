"""The judge's note-taker (NOTE-TAKING for the judge): a JSON note of each conversation.

After each assistant turn it sees the current note and the newest exchange (the user
turns since the previous reply, and the reply) and returns the whole updated note,
stored in Chroma one entry per key, so a corrected fact overwrites the old one. Its
prompt is bounded by the same budget as the judge's: a note too long for it is shown in
part (the entries closest to the exchange), and an exchange that does not fit even
beside an empty note is not sent (recorded ``over_budget``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict

from dialeval.agents.judge import Judge
from dialeval.config import EvalContext
from dialeval.memory.notes import NoteEntry, flatten, unflatten
from dialeval.models.usage import count_tokens
from dialeval.protocols.dialogue.common import ROLES, DialogueOptions
from dialeval.protocols.dialogue.context import prompt_tokens, turn_line
from dialeval.conversation.data import Conversation, Turn
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


async def note_to_show(store: Any, conv: Conversation, exchange: str, render: Any, budget: int) -> list[NoteEntry]:
    """The note entries the note-taker sees: all of them when they fit the budget, else
    those closest in meaning to the exchange, as many as fit."""
    entries = await asyncio.to_thread(store.entries, conv.id)
    if not entries or prompt_tokens(render(unflatten(entries))) <= budget:
        return entries
    ranked = await asyncio.to_thread(store.search, conv.id, exchange, len(entries))
    room = budget - prompt_tokens(render({}))
    chosen: list[NoteEntry] = []
    for entry in ranked:
        size = count_tokens(dumps({entry.key: entry.value}))
        if size <= room:
            chosen.append(entry)
            room -= size
    while chosen and prompt_tokens(render(unflatten(chosen))) > budget:
        chosen.pop()
    return chosen


def merged(entries: list[NoteEntry], shown: list[NoteEntry], answer: dict[str, Any]) -> dict[str, Any]:
    """The whole note after the note-taker rewrote the part it was shown: the entries it
    did not see stay as they were."""
    seen = {e.path for e in shown}
    kept = [e for e in entries if e.path not in seen]
    return unflatten(kept + [NoteEntry(path, value, 0) for path, value in flatten(answer).items()])


async def take_note(context: EvalContext, store: Any, conv: Conversation, reply: Turn) -> dict[str, Any]:
    """Update the stored note with the exchange ending at ``reply``; the record of what happened.

    A note too long for the budget is shown in part (the entries closest to the exchange)
    and the answer rewrites only that part; an exchange that does not fit even beside an
    empty note is not sent (``over_budget``)."""
    options = DialogueOptions.of(context)
    ctx = NOTETAKER.context(context, model=ROLES.model(context, "notetaker"))
    exchange = "\n".join(turn_line(t) for t in exchange_of(conv, reply))

    def render(note: dict[str, Any]) -> Any:
        return ctx.template.render(note=dumps(note) if note else "{}", exchange=exchange)

    entries = await asyncio.to_thread(store.entries, conv.id)
    shown = await note_to_show(store, conv, exchange, render, options.context_budget)
    current = unflatten(shown)
    messages = render(current)
    tokens = prompt_tokens(messages)
    record: dict[str, Any] = {"turn": reply.number, "prompt_tokens": tokens, "change": None,
                              "entries_shown": len(shown), "entries": len(entries)}
    if tokens > options.context_budget:
        return {**record, "status": "over_budget", "call": None}
    answer = await NOTETAKER.ask(
        ctx, messages, placeholder=lambda: Note.model_validate({**current, f"turn_{reply.number}": reply.text[:60]})
    )
    if answer.call.status == "ok" and answer.call.value is not None:
        note = merged(entries, shown, answer.call.value)
        change = await asyncio.to_thread(store.update, conv.id, note, reply.number)
        record["change"] = change.as_dict()
    return {**record, "status": answer.call.status, "call": answer.call.model_dump()}
