"""NOTE-TAKING (model A): after each user turn, the updated JSON note; never a reply.

The note-taker sees only the new user turn and the current note (read from the store),
as in the paper's Algorithm 1, and returns the whole updated note. The store keeps one
document per key, so a changed fact overwrites the outdated one. An answer that is not
a JSON object after the retries leaves the stored note as it was (and is counted).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict

from dialeval.agents.judge import Judge
from dialeval.protocols.mmrc.common import (
    MmrcOptions,
    accepts_images,
    attach_images,
    conversation_of,
    dumps,
    open_store,
    user_input,
)
from dialeval.config import EvalContext

TEMPLATE = "mmrc/notetaker"


class Note(BaseModel):
    """Any JSON object: the note's keys are the note-taker's choice."""

    model_config = ConfigDict(extra="allow")


NOTETAKER = Judge("mmrc.notetaker", "notetaker", "mmrc", TEMPLATE, Note)
NEW_KEYS_PER_TURN = 3


def note_schema(current: dict[str, Any]) -> dict[str, Any]:
    """The note's shape for decoders that follow a schema (local models): short snake_case
    keys over short strings or short lists of strings, as the prompt asks, a few new keys per turn,
    so a small model cannot fill its whole token budget with one note."""
    entry = {"type": "string", "maxLength": 100}
    return {
        "type": "object",
        "maxProperties": len(current) + NEW_KEYS_PER_TURN,
        "propertyNames": {"pattern": "^[a-z][a-z0-9_]{0,39}$"},  # short snake_case keys
        "additionalProperties": {"anyOf": [entry, {"type": "array", "items": entry, "maxItems": 5}]},
    }


async def clear_note(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
    """Graph node before the first turn: a resumed or repeated item starts from an empty note.

    Also opens the note store (Chroma, the embedding model) before the turns start, so
    the first note and the first reply reach a local model together and share a batch.
    """
    context = runtime.context if runtime is not None and runtime.context is not None else EvalContext()
    if isinstance(context, dict):
        context = EvalContext.model_validate(context)
    if "on" in MmrcOptions.of(context).conditions:
        store = await asyncio.to_thread(open_store, context)
        await asyncio.to_thread(store.clear, state["id"])
    return {}


@NOTETAKER.register
def notetaker():
    """Rewrites the conversation's JSON note after each user turn (NOTE-TAKING on only)."""

    async def take_note(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmrcOptions.of(context)
        if "on" not in options.conditions:
            return {}
        conv = conversation_of(state)
        index = state.get("turn", 0)
        turn = conv.turns[index]
        store = open_store(context)
        current = await asyncio.to_thread(store.note, conv.id)
        ctx = NOTETAKER.context(context)
        blocks = accepts_images(ctx, options.images)
        first = conv.image_offsets()[index] + 1
        messages = ctx.template.render(
            note=dumps(current) if current else "{}",
            turn=index + 1,
            user_input=user_input(turn.user, turn.images, first, blocks) or "(pictures only)",
        )
        messages = attach_images(messages, turn.images, first, blocks)
        answer = await NOTETAKER.ask(
            ctx,
            messages,
            placeholder=lambda: Note.model_validate({**current, f"turn_{index + 1}": turn.user[:80] or "pictures"}),
            json_schema=note_schema(current),
        )
        change = None
        if answer.call.status == "ok" and answer.call.value is not None:
            change = (await asyncio.to_thread(store.update, conv.id, answer.call.value, index + 1)).as_dict()
        return {"note_updates": [{"turn": index + 1, "change": change, "call": answer.call.model_dump()}]}

    return take_note
