"""What the MMRC agents share: run options, turn messages with images, free-text calls.

Image rule: API backends (``openai``, ``anthropic``, ``openai-compatible``) receive each
image as an ``image_url`` content block (local files as base64 data URLs), preceded by
an ``[image n]`` label. Text-only backends (``smollm2``, ``hf``, ``dry-run``) receive
one text line per image instead: ``[image n: <caption> (<file name or URL>)]``. The
option ``images: blocks | text`` forces either way.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from dialeval.agents.base import AgentContext
from dialeval.agents.images import IMAGE_BACKENDS, accepts_images, image_line  # noqa: F401  (re-exported)
from dialeval.agents.images import image_url as _image_url
from dialeval.config import EvalContext
from dialeval.data.mmrc import Conversation, ImageRef
from dialeval.memory.client import MemorySettings

Condition = Literal["off", "on"]


class MmrcOptions(BaseModel):
    """``options:`` of an MMRC run."""

    model_config = ConfigDict(extra="forbid")

    note_taking: Literal["both", "on", "off"] = Field(
        default="both", description="answer the questions without notes, with notes, or both (compared)"
    )
    replies: Literal["recorded", "live"] = Field(
        default="recorded",
        description="assistant turns: the recorded replies (live where a turn has none) or the responder's own",
    )
    images: Literal["auto", "blocks", "text"] = Field(
        default="auto", description="auto: image blocks for API backends, text lines for text-only ones"
    )
    memory: MemorySettings = Field(default_factory=MemorySettings)
    full_note_max_entries: int = Field(
        default=40, ge=0, description="up to this many note entries the whole note is given"
    )
    note_top_k: int = Field(default=12, gt=0, description="longer notes: this many entries closest to the question")

    @classmethod
    def of(cls, context: EvalContext) -> MmrcOptions:
        return cls.model_validate(context.options)

    @property
    def conditions(self) -> list[Condition]:
        return {"both": ["off", "on"], "on": ["on"], "off": ["off"]}[self.note_taking]  # type: ignore[return-value]


def conversation_of(state: dict[str, Any]) -> Conversation:
    return Conversation.model_validate(state["item"])


def open_store(context: EvalContext) -> Any:
    """The run's note store (embedded under the run folder unless a server is configured)."""
    from dialeval.memory.client import open_note_store

    return open_note_store(MmrcOptions.of(context).memory, context.run_dir)


def turn_content(text: str, images: list[ImageRef], first_number: int, blocks: bool) -> str | list[dict[str, Any]]:
    """A user message body: text plus images as blocks or as text lines; images numbered from ``first_number``."""
    if not images:
        return text
    if not blocks:
        lines = [image_line(image, first_number + i) for i, image in enumerate(images)]
        return "\n".join([text, *lines]) if text.strip() else "\n".join(lines)
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
    for i, image in enumerate(images):
        parts.append({"type": "text", "text": f"[image {first_number + i}]"})
        parts.append({"type": "image_url", "image_url": {"url": _image_url(image)}})
    return parts


def user_input(text: str, images: list[ImageRef], first_number: int, blocks: bool) -> str:
    """A turn as template text: image lines inline (text backends) or a pointer to the blocks."""
    if blocks:
        if not images:
            return text
        numbers = ", ".join(f"[image {first_number + i}]" for i in range(len(images)))
        return f"{text}\n(pictures attached below: {numbers})".strip()
    return str(turn_content(text, images, first_number, blocks=False))


def attach_images(messages: list[BaseMessage], images: list[ImageRef], first_number: int, blocks: bool) -> list[BaseMessage]:
    """Put image blocks after the text of the last (user) message of a rendered template."""
    if not blocks or not images:
        return messages
    last = messages[-1]
    return [*messages[:-1], HumanMessage(turn_content(str(last.content), images, first_number, blocks=True))]


def with_history(rendered: list[BaseMessage], earlier: list[BaseMessage]) -> list[BaseMessage]:
    """A rendered template with the conversation inserted before its final user message."""
    return [*rendered[:-1], *earlier, rendered[-1]]


def agent_context(context: EvalContext, model_role: str, template_role: str, default_template: str) -> AgentContext:
    """The responder has two templates (turn replies, evaluation questions) and the judge
    one per ability; ``templates: {judge_ie: my.txt}`` overrides just one of them while
    ``models: {judge: ...}`` still picks the model of all six."""
    return AgentContext.for_role(context, model_role, default_template, template_key=template_role)


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


