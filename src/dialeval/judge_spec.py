"""Judge specs beyond one model: an ensemble (a jury) and a cascade (cheap judge first).

A role in a config names a model, or one of these::

    judge: {ensemble: [openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest], combine: majority}
    judge: {cascade: [openai:gpt-4o-mini, openai:gpt-4o], escalate: {when: disagree, samples: 2}}

They sit beside :mod:`dialeval.config` (which accepts them under ``models:``); what they do
at run time is :mod:`dialeval.agents.ensemble`. Members are ordinary model settings
(:mod:`dialeval.model_settings`), so each member call takes the one call path (cache,
limits, accounting, traces).
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dialeval.model_settings import ModelSettings

Combine = Literal["majority", "mean", "median"]
When = Literal["disagree", "confidence", "calibrated"]
LEVEL = 0.9  # the calibrated guarantee holds with this probability (1 - delta) unless set


class Ensemble(BaseModel):
    """Every member judges; their verdicts are combined (``majority``: ties go to the lower verdict)."""

    model_config = ConfigDict(extra="forbid")

    ensemble: list[ModelSettings] = Field(min_length=2, description="the members, each a model spec or settings")
    combine: Combine = "majority"

    @property
    def models(self) -> list[ModelSettings]:
        return list(self.ensemble)

    def describe(self) -> str:
        return f"{self.combine} of " + ", ".join(m.spec for m in self.ensemble)


class Escalate(BaseModel):
    """When the first stage's verdict is not kept and the next stage is asked."""

    model_config = ConfigDict(extra="forbid")

    when: When = "disagree"
    samples: int = Field(default=2, ge=1, description="readings of a single-model first stage (distinct requests: seed 1..n)")
    threshold: float | None = Field(default=None, ge=0, le=1, description="confidence below which a unit is escalated")
    temperature: float = Field(default=1.0, ge=0, description="temperature of the readings after the first")
    tolerance: float = Field(default=0.05, ge=0, le=1, description="calibrated: agreement at most this far below the strong judge's")
    level: float = Field(default=LEVEL, gt=0, lt=1, description="calibrated: the probability the guarantee holds with")

    @model_validator(mode="after")
    def _needs(self) -> Escalate:
        if self.when in ("confidence", "calibrated") and self.threshold is None:
            raise ValueError(f"escalate.when: {self.when} needs a threshold (the card's calibrated cascade gives one)")
        return self


class Cascade(BaseModel):
    """The first stage judges; a unit it is unsure of goes to the next stage, whose verdict stands."""

    model_config = ConfigDict(extra="forbid")

    cascade: list[Union[ModelSettings, Ensemble]] = Field(min_length=2, max_length=2, description="[cheap, strong]")
    escalate: Escalate = Field(default_factory=Escalate)

    @model_validator(mode="before")
    @classmethod
    def _stages(cls, value: Any) -> Any:
        """A stage given as ``{ensemble: [...]}`` is an ensemble, any other as a model."""
        if isinstance(value, dict) and isinstance(value.get("cascade"), list):
            stages = [Ensemble.model_validate(s) if isinstance(s, dict) and "ensemble" in s else s for s in value["cascade"]]
            return {**value, "cascade": stages}
        return value

    @model_validator(mode="after")
    def _confidence_source(self) -> Cascade:
        """A single-model first stage read once is trusted on its verdict's probability
        (logprobs, which OpenAI-compatible APIs give); disagreement needs two readings."""
        first, esc = self.cascade[0], self.escalate
        if isinstance(first, Ensemble) or esc.samples > 1:
            return self
        if esc.when == "disagree":
            raise ValueError("escalate.when: disagree needs samples >= 2 (or an ensemble as the first stage)")
        if first.parsed.backend not in ("openai", "openai-compatible", "dry-run"):
            raise ValueError(f"escalate: samples 1 trusts the verdict's probability from logprobs, which {first.spec} does not "
                             "give; use samples >= 2 (the readings' agreement is the confidence)")
        return self

    @property
    def by_probability(self) -> bool:
        """Whether the first stage's confidence is its verdict's probability (one reading, logprobs)."""
        return not isinstance(self.cascade[0], Ensemble) and self.escalate.samples == 1

    @property
    def models(self) -> list[ModelSettings]:
        out: list[ModelSettings] = []
        for stage in self.cascade:
            out += stage.models if isinstance(stage, Ensemble) else [stage]
        return out

    def describe(self) -> str:
        stages = [s.describe() if isinstance(s, Ensemble) else s.spec for s in self.cascade]
        return f"{stages[0]}, escalating to {stages[1]} when {self.escalate.when}"


Composite = Union[Ensemble, Cascade]


def kind_of(value: Any) -> str:
    """Which of model, ensemble and cascade a role's value is (the union's discriminator)."""
    if isinstance(value, dict):
        return "ensemble" if "ensemble" in value else "cascade" if "cascade" in value else "model"
    if isinstance(value, (Ensemble, Cascade)):
        return "ensemble" if isinstance(value, Ensemble) else "cascade"
    return "model"


def mapped(judge: Composite, change: Any) -> Composite:
    """``judge`` with ``change(member)`` for every member (e.g. each as a dry run)."""
    if isinstance(judge, Ensemble):
        return judge.model_copy(update={"ensemble": [change(m) for m in judge.ensemble]})
    stages = [mapped(s, change) if isinstance(s, Ensemble) else change(s) for s in judge.cascade]
    return judge.model_copy(update={"cascade": stages})


def spec_of(value: Any) -> str | None:
    """A role's model as written in a run's config (a dict): its spec, or an ensemble's or
    cascade's name (``ensemble(a, b)``, ``cascade(a -> b)``), for reports and pages."""
    if not isinstance(value, dict):
        return value if isinstance(value, str) else None
    if "ensemble" in value:
        return "ensemble(" + ", ".join(str(spec_of(m)) for m in value["ensemble"]) + ")"
    if "cascade" in value:
        return "cascade(" + " -> ".join(str(spec_of(m)) for m in value["cascade"]) + ")"
    spec = value.get("spec")
    return str(spec) if spec else None
