"""What the MMRC agents share: run options, turn messages with images, free-text calls.

Image rule: API backends (``openai``, ``anthropic``, ``openai-compatible``) receive each
image as an ``image_url`` content block (local files as base64 data URLs), preceded by
an ``[image n]`` label, and so do local vision-language models (``hf:<folder>`` holding
one). Text-only backends (``smollm2``, text ``hf`` models, ``dry-run``) receive
one text line per image instead: ``[image n: <caption> (<file name or URL>)]``. The
option ``images: blocks | text`` forces either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from dialeval.agents.base import AgentContext
from dialeval.agents.roles import Role, RoleTable
from dialeval.agents.images import IMAGE_BACKENDS, accepts_images, image_line  # noqa: F401  (re-exported)
from dialeval.agents.images import attach_images, turn_content  # noqa: F401  (re-exported)
from dialeval.agents.responder import DRY_RUN_REPLY, with_history  # noqa: F401  (re-exported)
from dialeval.config import EvalContext
from dialeval.data.images import ImageRef, resolve_graph_image
from dialeval.protocols.mmrc.data import ABILITIES, Conversation
from dialeval.memory.client import MemorySettings

Condition = Literal["off", "on"]



# the model under test plays reply and answer (config keys models.responder, templates.responder);
# the judge has one template per ability, paper's and rubric variant (templates.judge_ie, judge_rubric_ie, ...)
ROLES = RoleTable(
    Role("reply", "mmrc.reply", node="reply", models=("responder",), templates=("responder",), system=True),
    Role("notetaker", "mmrc.notetaker", node="take_note"),
    Role("answer", "mmrc.answer", node="answer", models=("responder",), templates=("responder", "responder_notes"), system=True),
    Role(
        "judge",
        "mmrc.ability_judge",
        node="judge",
        templates=tuple(f"judge_{variant}{a.lower()}" for variant in ("", "rubric_") for a in ABILITIES),
    ),
    Role("item_extractor", "mmrc.item_extractor", node="extract_items"),
    Role("refusal_detector", "mmrc.refusal_detector", node="detect_refusals"),
)


class MmrcOptions(BaseModel):
    """``options:`` of an MMRC run. Defaults are the paper's protocol (docs/fidelity.md)."""

    model_config = ConfigDict(extra="forbid")

    note_taking: Literal["both", "on", "off"] = Field(
        default="both", description="answer the questions without notes, with notes, or both (compared)"
    )
    replies: Literal["live", "recorded"] = Field(
        default="live",
        description="assistant turns: the tested model's own (Algorithm 1) or the recorded replies (live where a turn has none)",
    )
    questions: Literal["sequential", "independent"] = Field(
        default="sequential",
        description="sequential: each question and its answer join the conversation before the next (the paper); "
        "independent: every question is asked on its own after the conversation",
    )
    system_prompt: Literal["none", "guided"] = Field(
        default="none",
        description="none: the model under test gets no system prompt (the paper); guided: ours (refuse when unsure, track changes)",
    )
    responder_max_tokens: int | None = Field(
        default=256, gt=0, description="answer cap of the model under test (the paper: 256); null: the model's own max_tokens"
    )
    images: Literal["auto", "blocks", "text"] = Field(
        default="auto", description="auto: image blocks for API backends, text lines for text-only ones"
    )
    memory: MemorySettings = Field(default_factory=MemorySettings)
    context_window: int | None = Field(
        default=None,
        gt=0,
        description="the responder's context window in tokens; when set, a note that does not fit beside the "
        "conversation is handled by note_overflow (null: the whole note is always given, as in the paper)",
    )
    note_overflow: Literal["top_k", "fail"] = Field(
        default="top_k",
        description="a note too long for context_window: top_k gives the entries closest to the question "
        "(at most note_top_k, as many as fit); fail fails the item",
    )
    note_top_k: int = Field(default=12, gt=0, description="with note_overflow top_k: the most entries given")

    @classmethod
    def of(cls, context: EvalContext) -> MmrcOptions:
        return context.options_as(cls, "mmrc")  # validated once per run (or Studio invocation)

    @property
    def conditions(self) -> list[Condition]:
        return {"both": ["off", "on"], "on": ["on"], "off": ["off"]}[self.note_taking]  # type: ignore[return-value]


CONVERSATION_KEYS = ("id", "domain", "turns", "questions")
RESPONDER_TEMPLATES = {"none": "mmrc/responder", "guided": "mmrc/responder_guided"}


def conversation_of(state: dict[str, Any]) -> Conversation:
    """The conversation the graph was given (its input is a record of the data file). A
    run's loader has made image paths absolute; a record posted to the graph directly
    (Studio) names them relative to the working folder, and each must exist there."""
    conv = Conversation.model_validate({k: state[k] for k in CONVERSATION_KEYS if k in state})
    turns = [
        turn.model_copy(update={"images": [
            resolve_graph_image(image, Path.cwd(), f"turns.{t}.images.{i}", f"conversation {conv.id!r}: turn {t + 1}, image {i + 1}")
            for i, image in enumerate(turn.images)
        ]})
        for t, turn in enumerate(conv.turns)
    ]
    return conv.model_copy(update={"turns": turns})


def responder_context(context: EvalContext) -> AgentContext:
    """The model under test: the paper's answer cap unless configured, and its template
    (no system prompt unless ``system_prompt: guided``; ``templates: {responder: ...}`` wins)."""
    options = MmrcOptions.of(context)
    model = context.model_for("responder")
    if options.responder_max_tokens is not None:
        model = model.model_copy(update={"max_tokens": options.responder_max_tokens})
    return AgentContext.for_role(context, "responder", RESPONDER_TEMPLATES[options.system_prompt], model=model)


def open_store(context: EvalContext) -> Any:
    """The run's note store (embedded under the run folder unless a server is configured)."""
    from dialeval.memory.client import open_note_store

    return open_note_store(MmrcOptions.of(context).memory, context.run_dir)


def user_input(text: str, images: list[ImageRef], first_number: int, blocks: bool) -> str:
    """A turn as template text: image lines inline (text backends) or a pointer to the blocks."""
    if blocks:
        if not images:
            return text
        numbers = ", ".join(f"[image {first_number + i}]" for i in range(len(images)))
        return f"{text}\n(pictures attached below: {numbers})".strip()
    return str(turn_content(text, images, first_number, blocks=False))


def history(conv: Conversation, replies: dict[int, str], upto: int, blocks: bool) -> list[BaseMessage]:
    """Turns ``0 .. upto-1`` as alternating user/assistant messages."""
    offsets = conv.image_offsets()
    out: list[BaseMessage] = []
    for index, turn in enumerate(conv.turns[:upto]):
        out.append(HumanMessage(turn_content(turn.user, turn.images, offsets[index] + 1, blocks)))
        out.append(AIMessage(replies.get(index, "")))
    return out


def reply_texts(conv: Conversation, replies: list[dict[str, Any]], recorded: bool) -> dict[int, str]:
    """Assistant text per turn index: live replies from the state, plus recorded ones if used."""
    out = {i: t.assistant for i, t in enumerate(conv.turns) if t.assistant is not None} if recorded else {}
    for reply in replies:
        out[reply["turn"] - 1] = reply["text"]
    return out


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


