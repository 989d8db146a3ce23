"""Scenarios: who the simulated user is, what they want, what they know, and what counts as success.

A suite is a YAML list or JSON/JSONL records. Unknown fields stop the run before the
first model call, naming the file, the record and the field; images must be files
inside the data's folder or ``data:`` URLs (the shared resolver checks them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dialeval.data.images import ImageRef, resolve_graph_image, resolve_image
from dialeval.data.io import DataError, read_records, read_text, validate_record

DEFAULT_MAX_TURNS = 8


class Check(BaseModel):
    """One success check that needs no model: the bot ``said`` a phrase (case-insensitive),
    its text matched a ``pattern`` (a regular expression), it called ``tool`` with ``args``
    (every given argument equal; others may be present), or it never called ``not_tool``
    (with ``args``: never with those arguments)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    said: str | None = None
    pattern: str | None = None
    tool: str | None = None
    not_tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_kind(self) -> Check:
        kinds = [k for k in ("said", "pattern", "tool", "not_tool") if getattr(self, k)]
        if len(kinds) != 1:
            raise ValueError("a check has exactly one of 'said', 'pattern', 'tool' or 'not_tool' (with optional 'args')")
        if self.args and not (self.tool or self.not_tool):
            raise ValueError("'args' goes with 'tool' or 'not_tool'")
        if self.pattern:
            try:
                re.compile(self.pattern)
            except re.error as err:
                raise ValueError(f"pattern {self.pattern!r} is not a regular expression: {err}") from None
        return self

    @property
    def wanted(self) -> bool:
        """Whether the check asks for something to happen (``not_tool`` holds from the start)."""
        return not self.not_tool

    def describe(self) -> str:
        if self.said:
            return f"said {self.said!r}"
        if self.pattern:
            return f"matched /{self.pattern}/"
        name = self.tool or self.not_tool
        call = f"{name}({', '.join(f'{k}={v!r}' for k, v in self.args.items())})"
        return f"called {call}" if self.tool else f"never called {call}"


class Call(BaseModel):
    """One tool call the bot must make: its ``name`` and the arguments it must carry
    (every given one equal; others may be present)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)

    def describe(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.args.items())})"


MatchMode = Literal["strict", "unordered", "subset", "superset"]


class Actions(BaseModel):
    """The tool calls the bot must make, compared as a trajectory: ``strict`` (these calls,
    in this order, no others), ``unordered`` (these calls, any order, no others), ``superset``
    (at least these; others allowed) or ``subset`` (no call outside these; any may be left out)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: MatchMode = "unordered"
    calls: list[Call] = Field(default_factory=list)

    @property
    def wanted(self) -> bool:
        """Whether the bot must do something (a ``subset`` is met by doing nothing)."""
        return bool(self.calls) and self.match != "subset"


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
    """What counts as success: judged ``criteria``, and model-free ``actions`` (tool calls),
    ``checks`` and ``state`` (a ``module:function`` reading the bot's environment), as tau-bench judges."""

    model_config = ConfigDict(extra="forbid")

    criteria: list[SuccessCriterion] = Field(default_factory=list)
    actions: Actions | None = None
    checks: list[Check] = Field(default_factory=list)
    state: str | None = Field(default=None, pattern=r"^[^:\s]+:[A-Za-z_][A-Za-z0-9_.]*$")

    @model_validator(mode="after")
    def _something(self) -> Success:
        if not (self.criteria or self.checks or self.actions or self.state):
            raise ValueError("success needs at least one of 'criteria' (judged), 'actions', 'checks' or 'state' (no model)")
        return self

    @property
    def wanted(self) -> bool:
        """Whether a model-free part asks for something to happen (then meeting it ends the conversation)."""
        return any(c.wanted for c in self.checks) or (self.actions is not None and self.actions.wanted)


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
