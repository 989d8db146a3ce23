"""The dialogue benchmark's options and roles, shared by its agents and graph."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.agents.roles import Role, RoleTable
from dialeval.config import EvalContext
from dialeval.memory.client import MemorySettings

Mode = Literal["full", "window", "session", "notes"]

ROLES = RoleTable(
    Role("judge", "dialogue.criterion_judge", node="judge_turns", templates=("judge", "judge_trajectory")),
    Role("notetaker", "dialogue.notetaker", follows="judge"),
    # the conversation judge asks the judge's model (models.judge) with its own template
    Role("conversation_judge", "dialogue.conversation_judge", node="judge_conversation", models=(), templates=("judge_conversation", "judge_trajectory_conversation")),
    Role("fact_checker", "dialogue.fact_checker", node="check_facts", templates=("fact_decomposer", "fact_verifier"), follows="judge"),
    Role("pairwise_judge", "dialogue.pairwise_judge", node="compare", templates=("pairwise",), follows="judge"),
)


class DialogueOptions(BaseModel):
    """``options:`` of a dialogue run (``--option key=value``)."""

    model_config = ConfigDict(extra="forbid")

    rubric: str = Field(default="dialogue", description="a rubric YAML file, or a built-in rubric's name (dialogue)")
    criteria: list[str] | None = Field(default=None, description="judge only these criteria of the rubric")
    context: Mode = Field(default="window", description="what the judge sees: full, window, session or notes")
    window_turns: int = Field(default=6, gt=0, description="window and notes: the last turns shown before the judged one")
    context_budget: int = Field(
        default=4000, gt=0, description="the most tokens any prompt of the run may have (judge and note-taker)"
    )
    note_top_k: int = Field(default=8, gt=0, description="notes: the most note entries shown, closest to the turn first")
    images: Literal["auto", "blocks", "text"] = Field(default="auto", description="images as blocks (API models) or text lines")
    facts: Literal["auto", "off"] = Field(
        default="auto", description="auto: split replies into atomic facts and verify them where there are documents (and a summary)"
    )
    versus: str | None = Field(default=None, description="another system's turns on the same conversations: compare the two")
    human_scores: str | None = Field(default=None, description="human labels per turn or conversation and criterion: agreement")
    human_rule: Literal["mean", "median", "majority"] = Field(
        default="mean", description="several annotators of one unit: their labels combined by mean, median or majority"
    )
    majority_tie: Literal["lower", "upper", "middle", "drop"] | None = Field(
        default=None, description="human_rule=majority: a split vote goes to the lower, upper or middle label, or the unit "
        "is dropped; default: middle where the scale has a middle label (A better / tie / B better: tie), else lower"
    )
    judge_only: Literal["all", "labelled", "pairs"] = Field(
        default="all", description="labelled: judge only the turns and conversations that carry a human label; "
                                   "pairs: only compare the two systems (option versus), score nothing"
    )
    memory: MemorySettings = Field(default_factory=MemorySettings)
    format: str = Field(
        default="dialogue", description="the data file's format: dialogue records, or a registered importer's "
        "(otel, langsmith, langfuse, hf, or a plugin's: docs/data.md, docs/extending.md)"
    )
    columns: dict[str, str] = Field(default_factory=dict, description="format=hf: dialogue field -> dataset column")

    @field_validator("format")
    @classmethod
    def _known_format(cls, name: str) -> str:
        from dialeval.data.importers import importer_names

        formats = ["dialogue", *importer_names()]
        if name not in formats:
            raise ValueError(f"unknown format {name!r}; formats: {', '.join(formats)}")
        return name

    @classmethod
    def of(cls, context: EvalContext) -> DialogueOptions:
        return context.options_as(cls, "dialogue")  # validated once per run (or Studio invocation)
