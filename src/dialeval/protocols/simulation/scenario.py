"""Scenarios: who the simulated user is, what they want, what they know, and what counts as success.

A suite is a YAML list or JSON/JSONL records. Unknown fields stop the run before the
first model call, naming the file, the record and the field; images must be files
inside the data's folder or ``data:`` URLs (the shared resolver checks them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dialeval.data.images import ImageRef, resolve_graph_image, resolve_image
from dialeval.data.io import DataError, read_records, read_text, validate_record

DEFAULT_MAX_TURNS = 8


class Check(BaseModel):
    """One success check that needs no model: the bot ``said`` a phrase (case-insensitive),
    its text matched a ``pattern`` (a regular expression), or it called ``tool`` with
    ``args`` (every given argument equal; others may be present)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    said: str | None = None
    pattern: str | None = None
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_kind(self) -> Check:
        kinds = [k for k in ("said", "pattern", "tool") if getattr(self, k)]
        if len(kinds) != 1:
            raise ValueError("a check has exactly one of 'said', 'pattern' or 'tool' (with optional 'args')")
        if self.args and not self.tool:
            raise ValueError("'args' goes with 'tool'")
        if self.pattern:
            try:
                re.compile(self.pattern)
            except re.error as err:
                raise ValueError(f"pattern {self.pattern!r} is not a regular expression: {err}") from None
        return self

    def describe(self) -> str:
        if self.said:
            return f"said {self.said!r}"
        if self.pattern:
            return f"matched /{self.pattern}/"
        return f"called {self.tool}({', '.join(f'{k}={v!r}' for k, v in self.args.items())})"


class SuccessCriterion(BaseModel):
    """A conversation-level rubric criterion (the dialogue rubric's fields), and which
    verdicts count as a pass (default: the best value of its scale)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_ -]*$")
    description: str = Field(min_length=1)
    scale: list[Any] = Field(default_factory=lambda: ["yes", "no"], min_length=2)
    examples: list[str] = Field(default_factory=list)
    level: str = "conversation"
    passing: list[Any] | None = Field(default=None, alias="pass")

    @field_validator("level")
    @classmethod
    def _conversation(cls, value: str) -> str:
        if value != "conversation":
            raise ValueError("success criteria judge the whole conversation: level is 'conversation'")
        return value

    def passes(self) -> list[str]:
        """The verdicts that count as a pass, as text (labels case-insensitive)."""
        if self.passing is not None:
            return [str(v).lower() for v in self.passing]
        first = self.scale[0]
        if len(self.scale) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in self.scale):
            return [str(self.scale[1])]  # an integer range: its top
        return [("yes" if first else "no") if isinstance(first, bool) else str(first).lower()]

    def rubric_entry(self) -> dict[str, Any]:
        """The criterion as the dialogue rubric writes it (without ``pass``)."""
        return self.model_dump(exclude={"passing"}, exclude_defaults=False)


class Success(BaseModel):
    model_config = ConfigDict(extra="forbid")

    criteria: list[SuccessCriterion] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something(self) -> Success:
        if not self.criteria and not self.checks:
            raise ValueError("success needs at least one of 'criteria' (judged) or 'checks' (no model)")
        return self


class Scenario(BaseModel):
    """One scenario of a suite; ``hidden_facts`` are revealed only when the bot asks."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    persona: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    hidden_facts: dict[str, str] = Field(default_factory=dict)
    opening: str | None = None
    images: list[ImageRef] = Field(default_factory=list)
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=100)
    success: Success
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def read_suite(path: Path) -> list[Any]:
    """The raw records of a YAML list or a JSON/JSONL file."""
    if path.suffix in (".yaml", ".yml"):
        import yaml

        if not path.is_file():
            raise DataError(path, "file not found")
        try:
            data = yaml.safe_load(read_text(path))
        except yaml.YAMLError as err:
            raise DataError(path, f"not valid YAML: {err}") from None
        if not isinstance(data, list):
            raise DataError(path, "a scenario suite in YAML is a list of scenarios")
        return data
    return read_records(path)


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Every scenario of the suite, ids unique, images resolved inside the data's folder."""
    path = Path(path)
    out: list[Scenario] = []
    seen: set[str] = set()
    for index, raw in enumerate(read_suite(path)):
        name: str | int = f"{index} (id={raw['id']!r})" if isinstance(raw, dict) and "id" in raw else index
        scenario = validate_record(Scenario, raw, path, name)
        if scenario.id in seen:
            raise DataError(path, f"duplicate id {scenario.id!r}", record=name, field="id")
        seen.add(scenario.id)
        images = [resolve_image(image, path.parent, path, name, f"images.{i}") for i, image in enumerate(scenario.images)]
        out.append(scenario.model_copy(update={"images": images}))
    if not out:
        raise DataError(path, "no scenarios in the file")
    return out


def scenario_of(state: dict[str, Any], root: str | Path = ".") -> Scenario:
    """The scenario a graph was given (a record pasted in Studio, or the runner's loaded form)."""
    raw = {k: v for k, v in state.items() if k in Scenario.model_fields}
    scenario = validate_record(Scenario, raw, "graph input", "input")
    images = [resolve_graph_image(image, root, f"images.{i}") for i, image in enumerate(scenario.images)]
    return scenario.model_copy(update={"images": images})
