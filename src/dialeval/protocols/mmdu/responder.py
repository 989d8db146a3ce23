"""The model under test answers one MMDU question, with the dialogue so far as history.

History is the earlier questions (images where their tags are) with the responder's
own earlier answers, or the reference answers (option ``history``). With
``context_window`` set, history is measured in tokens and, past the window, the oldest
turns are dropped or the dialogue fails (option ``overflow``); each reply records how
many turns it was shown and how many were dropped.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from dialeval.agents.base import AgentContext, ask_text, register_agent
from dialeval.agents.images import accepts_images
from dialeval.protocols.mmdu.common import (
    ContextOverflow,
    RESPONDER_TEMPLATES,
    MmduOptions,
    content,
    dialogue_of,
    fit_history,
    history_messages,
    role_model,
)
from dialeval.agents.responder import DRY_RUN_REPLY, with_history
from dialeval.config import EvalContext

# an answer of about the paper's average length (368 tokens) for dry runs: histories as long as a real model's
DRY_RUN_ANSWER = f"{DRY_RUN_REPLY} {DRY_RUN_REPLY}"


@register_agent("mmdu.responder", role="responder", benchmark="mmdu")
def responder():
    """Answers the next question of the dialogue given the turns before it."""

    async def answer(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        options = MmduOptions.of(context)
        dialogue = dialogue_of(state, options.image_root)
        index = state.get("turn", 0)
        turn = dialogue.turns[index]
        ctx = AgentContext.for_role(context, "responder", RESPONDER_TEMPLATES[options.system_prompt], model=role_model(context, "responder"))
        blocks = accepts_images(ctx, options.images)
        rendered = ctx.template.render(question=turn.question if blocks else content(turn.question, dialogue.image, False))
        if blocks and turn.images:
            rendered[-1] = HumanMessage(content(str(rendered[-1].content), dialogue.image, True))
        if options.history == "reference":
            earlier = [t.reference for t in dialogue.turns[:index]]
        else:
            earlier = [r["text"] for r in state.get("replies", [])][:index]
        pairs = history_messages(dialogue, earlier, index, blocks)
        try:
            kept, dropped, tokens = fit_history(
                pairs, rendered, options.context_window, ctx.client.settings.max_tokens, options.image_tokens, options.overflow
            )
        except ContextOverflow as err:
            raise ContextOverflow(f"dialogue {dialogue.id!r}, turn {turn.number}: {err}") from None
        messages = with_history(rendered, [m for pair in kept for m in pair])
        call = await ask_text(ctx, "mmdu.responder", messages, placeholder=DRY_RUN_ANSWER)
        reply = {
            "turn": turn.number,
            "text": call.raw.strip(),
            "history_turns": len(kept),
            "dropped_turns": dropped,
            "prompt_tokens": tokens,
            "call": call.model_dump(),
        }
        return {"replies": [reply], "turn": index + 1}

    return answer
