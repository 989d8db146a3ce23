"""Rubrics: the user's criteria in YAML, or a built-in rubric by name.

A criterion has a name, a level (``turn``: every assistant turn; ``conversation``;
``summary``), a description, a scale (``[yes, no]``, an integer range ``[1, 5]`` or any
list of labels), optional examples, and what it needs (``grounding``, ``reference``).
Problems are reported with the rubric file, the criterion and the field.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dialeval.errors import ConfigError
from dialeval.protocols.dialogue.trajectory import TrajectoryMatch

Level = Literal["turn", "conversation", "summary"]
Need = Literal["grounding", "reference"]
BUILT_IN = ("dialogue",)


class Scale(BaseModel):
    """An integer range (``low``..``high``) or named labels (yes/no is two labels)."""

    model_config = ConfigDict(frozen=True)

    low: int | None = None
    high: int | None = None
    labels: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        return self.low is not None

    def describe(self) -> str:
        if self.numeric:
            return f"an integer from {self.low} (worst) to {self.high} (best)"
        return "one of: " + ", ".join(f'"{label}"' for label in self.labels) + " (best first)"

    def read(self, value: Any) -> int | str | None:
        """``value`` on this scale (labels case-insensitive), else ``None``."""
        if self.numeric:
            if isinstance(value, bool):
                return None
            try:
                number = int(str(value).strip())
            except ValueError:
                return None
            return number if self.low <= number <= self.high else None  # type: ignore[operator]
        by_lower = {label.lower(): label for label in self.labels}
        return by_lower.get(str(value).strip().lower())

    def score(self, value: int | str) -> float:
        """A number for means and correlations: the integer itself, or a label's rank
        from 1 (last label) to n (first label, the best)."""
        if self.numeric:
            return float(value)
        return float(len(self.labels) - self.labels.index(str(value)))

    def json_schema(self) -> dict[str, Any]:
        if self.numeric:
            return {"type": "integer", "minimum": self.low, "maximum": self.high}
        return {"type": "string", "enum": list(self.labels)}


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_ -]*$")
    level: Level = "turn"
    description: str = Field(min_length=1)
    scale: Scale
    examples: list[str] = Field(default_factory=list)
    needs: list[Need] = Field(default_factory=list)
    match: TrajectoryMatch | None = None  # tool calls compared with reference calls, no model (trajectory.py)
    kind: Literal["reply", "trajectory"] = "reply"  # trajectory: the LLM judge reads the tool calls' template

    @model_validator(mode="before")
    @classmethod
    def _match_defaults(cls, value: Any) -> Any:
        """A ``match:`` criterion needs no description nor scale: it says what it compares, on [0, 1]."""
        if isinstance(value, dict) and isinstance(value.get("match"), dict):
            try:
                described = TrajectoryMatch.model_validate(value["match"]).describe()
            except ValidationError:
                described = "tool calls"  # the field's own validation names the bad key
            value = {"description": described, "scale": [0, 1], **value}
        return value

    @field_validator("scale", mode="before")
    @classmethod
    def _scale(cls, value: Any) -> Any:
        if isinstance(value, Scale):
            return value
        if not isinstance(value, list) or len(value) < 2:
            raise ValueError("a scale is [low, high] (integers) or a list of at least two labels, e.g. [yes, no]")
        if len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            if value[0] >= value[1]:
                raise ValueError(f"an integer range goes from low to high, got {value}")
            return Scale(low=value[0], high=value[1])
        # YAML reads yes/no as booleans: take them back as the words written
        labels = [("yes" if v else "no") if isinstance(v, bool) else str(v) for v in value]
        if len({label.lower() for label in labels}) != len(labels) or not all(label.strip() for label in labels):
            raise ValueError(f"labels must be distinct and non-empty, got {labels}")
        return Scale(labels=tuple(labels))


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = ""
    criteria: list[Criterion] = Field(min_length=1)

    def at(self, level: Level) -> list[Criterion]:
        return [c for c in self.criteria if c.level == level]

    def get(self, name: str) -> Criterion:
        return next(c for c in self.criteria if c.name == name)


def parse_rubric(data: Any, source: str) -> Rubric:
    """A rubric from parsed YAML; errors name ``source``, the criterion and the field."""
    if not isinstance(data, dict) or "criteria" not in data:
        raise ConfigError(f"rubric {source}: expected a mapping with a 'criteria' list")
    extra = sorted(set(data) - {"criteria"})
    if extra:
        raise ConfigError(f"rubric {source}: unknown top-level field '{extra[0]}' (only 'criteria')")
    raw = data["criteria"]
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"rubric {source}, field 'criteria': a non-empty list of criteria")
    criteria = []
    for index, entry in enumerate(raw):
        name = entry.get("name") if isinstance(entry, dict) else None
        which = f"criterion {index}" + (f" ({name!r})" if isinstance(name, str) else "")
        try:
            criteria.append(Criterion.model_validate(entry))
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "criterion"
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"rubric {source}, {which}, field '{field}': {message}") from None
    names = [c.name for c in criteria]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"rubric {source}, criterion {name!r}, field 'name': used twice")
    return Rubric(source=source, criteria=criteria)


def load_rubric(ref: str) -> Rubric:
    """A built-in rubric by name (``dialogue``) or a YAML file by path."""
    import yaml

    if ref in BUILT_IN:
        text = resources.files("dialeval.protocols.dialogue").joinpath("prompts", "rubrics", f"{ref}.json").read_text(encoding="utf-8")
        source = f"built-in rubric {ref!r}"
    else:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise ConfigError(f"rubric {ref!r} is neither a built-in rubric ({', '.join(BUILT_IN)}) nor a file")
        text, source = path.read_text(encoding="utf-8"), str(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"rubric {source}: not valid YAML: {err}") from None
    return parse_rubric(data, source)
