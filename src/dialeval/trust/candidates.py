"""Candidate judges: a model setting, optionally with a context mode or a template.

``--judge SPEC`` gives a bare model (``--base-url`` applies to each); ``--candidates
FILE`` (YAML) lists richer ones::

    candidates:
      - model: {spec: openai:gpt-4o-mini, temperature: 0}
        context: notes
      - model: anthropic:claude-3-5-haiku-latest
        template: my_judge.txt
        name: haiku-custom

A candidate's ``name`` (default: derived from the spec and choices) names its run
folders and its row on the card.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dialeval.config import ModelSettings, RoleModel, describe_error, primary
from dialeval.errors import ConfigError

Mode = Literal["full", "window", "session", "notes"]
# model-name stems of the usual families: a judge prefers its own family's replies, if any
FAMILIES = (
    ("openai", ("gpt", "o1", "o3", "o4", "chatgpt", "davinci")),
    ("anthropic", ("claude",)),
    ("google", ("gemini", "gemma", "palm")),
    ("meta", ("llama",)),
    ("mistral", ("mistral", "mixtral", "ministral", "codestral")),
    ("qwen", ("qwen", "qwq")),
    ("deepseek", ("deepseek",)),
    ("microsoft", ("phi",)),
    ("huggingface", ("smollm",)),
)


class Candidate(BaseModel):
    """One judge to put on the card."""

    model_config = ConfigDict(extra="forbid")

    model: RoleModel  # issue 49: a model, an ensemble or a cascade
    context: Mode | None = Field(default=None, description="what the judge sees (default: the dialogue benchmark's)")
    template: str | None = Field(default=None, description="the turn judge's template: a name or a file")
    name: str | None = Field(default=None, description="the card's label and run folders' stem")

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        parts = [self.spec] + [p for p in (self.context, self.template and Path(self.template).stem) if p]
        return "+".join(parts)

    @property
    def slug(self) -> str:
        """The label as a folder name."""
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.label).strip("-") or "judge"

    @property
    def family(self) -> str:
        """The judge's model family, for the self-preference probe."""
        first = primary(self.model)  # an ensemble's or cascade's first member
        return family_of(first.parsed.name or first.spec)

    @property
    def spec(self) -> str:
        """The model's spec, or an ensemble's or cascade's name."""
        from dialeval.judge_spec import spec_of

        return self.model.spec if isinstance(self.model, ModelSettings) else str(spec_of(self.model.model_dump()))

    def spec_dict(self) -> dict[str, Any]:
        """What the card records of the candidate (no secret: keys stay in the environment)."""
        return {"label": self.label, "model": self.model.model_dump(exclude_defaults=True), "context": self.context,
                "template": self.template, "family": self.family}


class CandidatesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    candidates: list[Candidate] = Field(min_length=1)


def family_of(model: str) -> str:
    """``gpt-4o-mini`` -> ``openai``; a name of no known family is its own first word."""
    name = model.rsplit("/", 1)[-1].lower()
    for family, stems in FAMILIES:
        if any(name.startswith(stem) for stem in stems):
            return family
    return re.split(r"[-_:.\s]", name, maxsplit=1)[0] or name


def read_candidates(path: str | Path) -> list[Candidate]:
    """The candidates of a YAML file; a mistake names the file, the candidate and the field."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--candidates {path}: file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    try:
        return CandidatesFile.model_validate(data).candidates
    except ValidationError as err:
        raise ConfigError(f"{path}: {describe_error(err, CandidatesFile)}") from None


def as_candidate(judge: Any) -> Candidate:
    """A candidate from a spec string, model settings, or a candidate's fields (Python API)."""
    if isinstance(judge, Candidate):
        return judge
    if isinstance(judge, dict) and "model" in judge:
        return Candidate.model_validate(judge)
    return Candidate.model_validate({"model": judge})  # a spec, model settings, an ensemble or a cascade


def candidates_of(judges: list[str], file: str | Path | None = None, base_url: str | None = None) -> list[Candidate]:
    """``--judge`` specs (each with ``--base-url``) then the file's candidates; labels unique."""
    out = []
    for spec in judges:
        if spec.lstrip().startswith("{"):  # issue 49: an ensemble or a cascade, as YAML or JSON
            out.append(_composite(spec))
            continue
        try:
            out.append(Candidate(model=ModelSettings.model_validate({"spec": spec, **({"base_url": base_url} if base_url else {})})))
        except ValidationError as err:
            raise ConfigError(f"--judge {spec!r}: {describe_error(err, ModelSettings)}") from None
    if file is not None:
        out += read_candidates(file)
    if not out:
        raise ConfigError("dialeval trust: give at least one --judge SPEC or a --candidates FILE")
    slugs = [c.slug for c in out]
    for slug in slugs:
        if slugs.count(slug) > 1:
            raise ConfigError(f"dialeval trust: two candidates are both called {slug!r}; give them distinct `name:`s")
    return out


def _composite(text: str) -> Candidate:
    """``--judge '{cascade: [openai:gpt-4o-mini, openai:gpt-4o]}'``: a candidate that is an ensemble or a cascade."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"--judge {text!r}: not valid YAML: {err}") from None
    try:
        return Candidate.model_validate({"model": value})
    except ValidationError as err:
        raise ConfigError(f"--judge {text!r}: {describe_error(err, Candidate)}") from None
