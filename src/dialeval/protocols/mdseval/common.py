"""What the MDSEval agents share: run options and the material every judge sees.

The material is the conversation (real turns when a dialogues file was given, else the
file's dialogue statements) and the images: picture blocks for backends that take them
when an image folder was given, otherwise the image statements (or, for Image-to-Prompt,
a vision model's description). :func:`material` says which, so every record does too.
"""

from __future__ import annotations

from dialeval.agents.templates import prompt_file

from functools import lru_cache
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.agents.base import AgentContext
from dialeval.agents.images import IMAGE_BACKENDS, attach_images
from dialeval.agents.roles import Role, RoleTable
from dialeval.config import EvalContext
from dialeval.protocols.mdseval.data import ASPECTS, SCALES, MdsDialogue
from dialeval.data.images import ImageRef
from dialeval.endpoint import checked_url

Evaluator = Literal["pointwise", "pairwise", "faithfulness", "image_prompt", "checklist"]
FaithfulnessLevel = Literal["summary", "sentence"]
DEFAULT_EVALUATORS: tuple[Evaluator, ...] = ("pointwise", "pairwise", "faithfulness")
FAITHFULNESS_LEVELS: tuple[FaithfulnessLevel, ...] = ("summary", "sentence")
Strategy = Literal["zeroshot", "guidance", "icl"]
ASPECT_NAMES = {
    "coherence": "multimodal coherence",
    "conciseness": "conciseness",
    "coverage-image": "visual critical information coverage",
    "coverage-text": "textual critical information coverage",
    "coverage-overall": "overall critical information coverage",
    "balance": "multimodal information balance",
    "progression": "topic progression",
}


class Setup(BaseModel):
    """One generation setup of the candidate pool: a model and a prompting strategy."""

    model_config = ConfigDict(extra="forbid")

    model: str
    strategy: Strategy
    base_url: str | None = None

    _sendable_url = field_validator("base_url")(classmethod(lambda cls, url: None if url is None else checked_url(url)))

    @property
    def name(self) -> str:
        return f"{self.model}/{self.strategy}"


class MdsevalOptions(BaseModel):
    """``options:`` of an MDSEval run."""

    model_config = ConfigDict(extra="forbid")

    evaluators: list[Evaluator] = Field(
        default_factory=lambda: list(DEFAULT_EVALUATORS),
        description="which evaluators run: pointwise, pairwise, faithfulness (MLLM-as-a-judge), image_prompt, checklist",
    )
    aspects: list[str] = Field(default_factory=lambda: list(ASPECTS), description="scored aspects to judge")
    faithfulness_levels: list[FaithfulnessLevel] = Field(default_factory=lambda: list(FAITHFULNESS_LEVELS))
    images: Literal["auto", "blocks", "text"] = Field(
        default="auto", description="auto: picture blocks for API backends when an image folder is given"
    )
    dialogues: str | None = Field(default=None, description="merged dialogues file (records with a 'dialogue' list)")
    image_dir: str | None = Field(default=None, description="folder the records' image_path values are relative to")
    faithfulness_votes: Literal["tiebreak", "majority"] = Field(
        default="tiebreak",
        description="human sentence labels: tiebreak (a fourth, re-annotation vote decides a three-way split, as the paper's Appendix E does) or majority (more than half, else left out)",
    )
    setups: list[Setup] = Field(default_factory=list, description="generate candidate summaries with these setups")

    @field_validator("aspects")
    @classmethod
    def _known(cls, aspects: list[str]) -> list[str]:
        unknown = [a for a in aspects if a not in SCALES]
        if unknown:
            raise ValueError(f"unknown aspects {unknown}; choose from {list(SCALES)}")
        return aspects

    @classmethod
    def of(cls, context: EvalContext) -> MdsevalOptions:
        return context.options_as(cls, "mdseval")  # validated once per run (or Studio invocation)


RECORD_KEYS = ("dialogue_id", "images", "dialogue_statements", "pseudo_summary", "summary_list", "human_annotations", "dialogue")


def dialogue_of(state: dict[str, Any]) -> MdsDialogue:
    """The dialogue the graph was given: a record of the data file as it is (Studio, the
    API), or wrapped in ``record`` as runs pass it, with the loader's resolved images."""
    record = state.get("record") or {k: state[k] for k in RECORD_KEYS if k in state}
    return MdsDialogue.model_validate(record)


@lru_cache(maxsize=None)
def rubric(aspect: str) -> str:
    """The aspect's definition and scale points, in our words (prompts/mdseval/aspects/)."""
    return prompt_file(f"mdseval/aspects/{aspect}.txt").read_text(encoding="utf-8").strip()


def dialogue_text(item: MdsDialogue) -> str:
    """The conversation as turns, or the statements that stand in for it."""
    if item.dialogue:
        lines = []
        for turn in item.dialogue:
            who = turn.speaker_id if turn.speaker_id is not None else turn.speaker
            line = f"Speaker {who}: {turn.utterance}".rstrip()
            if turn.shared_images is not None:
                line += f" [shares image {turn.shared_images + 1}]"
            lines.append(line)
        return "\n".join(lines)
    return "(The turns themselves are not available; these statements say what was said.)\n" + "\n".join(
        f"- {s}" for s in item.dialogue_statements
    )


def uses_blocks(ctx: AgentContext, item: MdsDialogue, mode: str) -> bool:
    """Picture blocks only when the files exist and the backend takes them (or are forced)."""
    if not item.has_images or mode == "text":
        return False
    return mode == "blocks" or ctx.client.backend in IMAGE_BACKENDS


def images_text(item: MdsDialogue, blocks: bool, description: str | None = None) -> str:
    """What stands in the <images> block: a pointer to the pictures, a description, or statements."""
    if blocks:
        return "\n".join(f"Image {n}: attached as a picture after this message." for n in range(1, len(item.images) + 1))
    if description is not None:
        return "(A vision model described the images; the pictures themselves are not shown.)\n" + description
    parts = []
    for n, image in enumerate(item.images, start=1):
        parts.append(f"Image {n} (described in statements; the picture itself is not shown):")
        parts += [f"- {s}" for s in image.image_statements]
    return "\n".join(parts)


def with_pictures(messages: list[BaseMessage], item: MdsDialogue, blocks: bool) -> list[BaseMessage]:
    """Attach the images as picture blocks to the last user message when ``blocks``."""
    refs = [ImageRef(source=image.local_path) for image in item.images if image.local_path]
    return attach_images(messages, refs, 1, blocks)


def judge_input_label(item: MdsDialogue, blocks: bool, described: bool = False) -> str:
    """The input the judge actually saw, for records and reports."""
    conversation = "dialogue turns" if item.dialogue else "dialogue statements"
    if blocks:
        pictures = "image pictures"
    elif described:
        pictures = "image description by the captioner"
    else:
        pictures = "image statements"
    return f"{conversation} + {pictures}"


def score_range(aspect: str) -> tuple[int, int]:
    return SCALES[aspect]


# one table of roles; the graph builds one node per role from it, all starting at once
ROLES = RoleTable(
    Role("pointwise", "mdseval.pointwise", node="pointwise"),
    Role("pairwise", "mdseval.pairwise", node="pairwise"),
    Role("faithfulness", "mdseval.faithfulness", node="faithfulness", templates=("faithfulness_summary", "faithfulness_sentence")),
    # Image-to-Prompt: a captioner model describes the images, the image_prompt judge scores from that
    Role("image_prompt", "mdseval.image_prompt", node="image_prompt", models=("image_prompt", "captioner"), templates=("captioner", "image_prompt")),
    Role("checklist", "mdseval.checklist", node="checklist"),
    Role("summarizer", "mdseval.summarizer", node="summarizer", templates=tuple(f"summarizer_{s}" for s in ("zeroshot", "guidance", "icl")), system=True),
)
