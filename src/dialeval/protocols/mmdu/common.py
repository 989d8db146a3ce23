"""What the MMDU agents share: run options, messages with images where the tags are, history budgets.

Image rule (as for MMRC, see :mod:`dialeval.agents.images`): backends that take images
get each ``<image-i>`` tag replaced by the label ``[image i]`` followed by the image as a
base64 block, in tag order; text-only backends get the tag replaced by the image's
caption line. The option ``images: blocks | text`` forces either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from dialeval.agents.images import image_line, image_url
from dialeval.agents.roles import Role, RoleTable
from dialeval.config import EvalContext, ModelSettings
from dialeval.protocols.mmdu.data import TAG, Dialogue, check_dialogue
from dialeval.data.images import ImageRef, resolve_graph_image
from dialeval.models.usage import count_tokens


# the model under test answers turn by turn (unless answers are given), then the judge scores every turn
ROLES = RoleTable(
    Role("responder", "mmdu.responder", node="respond", system=True),
    Role("judge", "mmdu.judge", node="judge"),
)


class MmduOptions(BaseModel):
    """``options:`` of an MMDU run."""

    model_config = ConfigDict(extra="forbid")

    predictions: str | None = Field(
        default=None, description="file or folder of system answers; without it the model under test answers (role responder)"
    )
    system: str | None = Field(default=None, description="name of the system evaluated (default: from predictions or the responder's model)")
    history: Literal["own", "reference"] = Field(
        default="own", description="earlier turns shown to the responder: its own answers or the reference answers"
    )
    images: Literal["auto", "blocks", "text"] = Field(
        default="auto", description="auto: image blocks for API backends, caption lines for text-only ones"
    )
    judge_images: Literal["dialogue", "turn", "none"] = Field(
        default="dialogue", description="images the judge sees per turn: all of the dialogue, the ones the turn tags, or none"
    )
    context_window: int | None = Field(
        default=None, gt=0, description="responder context window in tokens (history + question + answer budget); none: no limit"
    )
    overflow: Literal["drop_oldest", "fail"] = Field(
        default="drop_oldest", description="past context_window: drop the oldest turns, or fail the dialogue"
    )
    image_tokens: int = Field(default=765, ge=0, description="tokens counted per image block when measuring history")
    aggregation: Literal["dialogue", "turn"] = Field(
        default="dialogue", description="dialogue: mean over turns, then over dialogues (Sec. 2.3); turn: mean over all turns"
    )
    human_scores: str | None = Field(default=None, description="JSON/JSONL of expert Overall scores per turn")
    image_root: str | None = Field(default=None, description="folder relative image paths start from (default: the data file's)")
    budgets: Literal["authors", "config"] = Field(
        default="authors",
        description="answer budgets: the authors' (4096 tokens for API models and the judge, 2048 for local open models) where the config sets none, or the config's max_tokens",
    )
    system_prompt: Literal["generic", "guided"] = Field(
        default="generic",
        description="the responder's system prompt: a generic assistant one, as the authors' scripts send, or ours with instructions about the pictures",
    )

    @classmethod
    def of(cls, context: EvalContext) -> MmduOptions:
        return context.options_as(cls, "mmdu")  # validated once per run (or Studio invocation)


# The authors' generation budgets (their released generation and judging scripts): new tokens
# for API models and for the judge, and for open models answering locally.
AUTHORS_MAX_TOKENS = 4096
AUTHORS_OPEN_MODEL_MAX_TOKENS = 2048
RESPONDER_TEMPLATES = {"generic": "mmdu/responder", "guided": "mmdu/responder_guided"}


def role_model(context: EvalContext, role: str) -> ModelSettings:
    """The model of ``role`` with the authors' answer budget unless the config set one (a
    model's own default counts as set: the bundled ``smollm2`` keeps its small budget)."""
    settings = context.model_for(role)
    if MmduOptions.of(context).budgets == "config" or "max_tokens" in settings.model_fields_set:
        return settings
    local = role == "responder" and settings.spec.startswith("hf:")
    return settings.model_copy(update={"max_tokens": AUTHORS_OPEN_MODEL_MAX_TOKENS if local else AUTHORS_MAX_TOKENS})


class ContextOverflow(RuntimeError):
    """A turn does not fit the responder's context window (policy ``fail``, or nothing left to drop)."""


def dialogue_of(state: dict[str, Any], image_root: str | None = None) -> Dialogue:
    """The graph input (a dialogue record in the data format), checked: tags resolve, roles
    alternate, local images exist. A run's loader has already made image paths absolute;
    a record posted to the graph directly (Studio) may name them relative to ``image_root``
    (the option), else to the working folder, as the CLI reads them relative to the data file's."""
    dialogue = check_dialogue(Dialogue.model_validate({k: state[k] for k in ("id", "image", "conversations") if k in state}))
    root = Path(image_root) if image_root is not None else Path.cwd()
    images = [
        resolve_graph_image(image, root, f"image.{index}", f"dialogue {dialogue.id!r}: image {index + 1}")
        for index, image in enumerate(dialogue.image)
    ]
    return dialogue.model_copy(update={"image": images})


def content(text: str, images: list[ImageRef], blocks: bool) -> str | list[str | dict[str, Any]]:
    """``text`` with each ``<image-i>`` tag replaced by image i: blocks in tag order, or caption lines."""
    if not TAG.search(text):
        return text
    if not blocks:
        return TAG.sub(lambda m: image_line(images[int(m.group(1)) - 1], int(m.group(1))), text)
    parts: list[str | dict[str, Any]] = []
    position = 0
    for match in TAG.finditer(text):
        number = int(match.group(1))
        before = text[position : match.start()] + f"[image {number}]"
        parts.append({"type": "text", "text": before})
        parts.append({"type": "image_url", "image_url": {"url": image_url(images[number - 1])}})
        position = match.end()
    if text[position:].strip():
        parts.append({"type": "text", "text": text[position:]})
    return parts


def labelled_images(numbers: list[int], images: list[ImageRef], blocks: bool) -> str | list[dict[str, Any]]:
    """Images ``numbers`` (1-based) each after its ``[image i]`` label; caption lines for text backends."""
    if not blocks:
        return "\n".join(image_line(images[n - 1], n) for n in numbers)
    parts: list[dict[str, Any]] = []
    for n in numbers:
        parts.append({"type": "text", "text": f"[image {n}]"})
        parts.append({"type": "image_url", "image_url": {"url": image_url(images[n - 1])}})
    return parts


def message_tokens(message: BaseMessage, image_tokens: int) -> int:
    """Tokens a message costs: its text (cl100k) plus ``image_tokens`` per image block, +4 for the frame."""
    body = message.content
    if isinstance(body, str):
        return count_tokens(body) + 4
    total = 4
    for part in body:
        if isinstance(part, dict) and part.get("type") == "text":
            total += count_tokens(part.get("text", ""))
        elif isinstance(part, dict):
            total += image_tokens
        else:
            total += count_tokens(str(part))
    return total


def history_messages(dialogue: Dialogue, answers: list[str], upto: int, blocks: bool) -> list[list[BaseMessage]]:
    """Turns ``1 .. upto`` as (question, answer) message pairs, oldest first."""
    return [
        [HumanMessage(content(turn.question, dialogue.image, blocks)), AIMessage(answers[i])]
        for i, turn in enumerate(dialogue.turns[:upto])
    ]


def fit_history(
    pairs: list[list[BaseMessage]], fixed: list[BaseMessage], window: int | None, answer_budget: int, image_tokens: int, policy: str
) -> tuple[list[list[BaseMessage]], int, int]:
    """The earlier turns that fit ``window`` with the fixed messages and the answer budget.

    Returns (kept pairs, number dropped, prompt tokens). Oldest turns go first under
    ``drop_oldest``; ``fail`` (or a question that alone does not fit) raises ContextOverflow.
    """
    fixed_tokens = sum(message_tokens(m, image_tokens) for m in fixed)
    sizes = [sum(message_tokens(m, image_tokens) for m in pair) for pair in pairs]
    total = fixed_tokens + sum(sizes)
    if window is None or total + answer_budget <= window:
        return pairs, 0, total
    if policy == "fail":
        raise ContextOverflow(f"{total} prompt tokens + {answer_budget} for the answer exceed the context window of {window}")
    dropped = 0
    while dropped < len(pairs) and total + answer_budget > window:
        total -= sizes[dropped]
        dropped += 1
    if total + answer_budget > window:
        raise ContextOverflow(
            f"the question alone takes {total} tokens + {answer_budget} for the answer, over the context window of {window}"
        )
    return pairs[dropped:], dropped, total
