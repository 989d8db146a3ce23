"""Rubrics: the user's criteria in YAML, or a built-in rubric by name.

A criterion has a name, a level (``turn``: every assistant turn; ``conversation``;
``summary``), a description, a scale (``[yes, no]``, an integer range ``[1, 5]`` or any
list of labels), optional examples, and what it needs (``grounding``, ``reference``).
Problems are reported with the rubric file, the criterion and the field.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dialeval.config import did_you_mean, unknown_key
from dialeval.errors import ConfigError

Level = Literal["turn", "conversation", "summary"]
Need = Literal["grounding", "reference"]
BUILT_IN = ("dialogue",)
MAX_CRITERIA = 200  # each criterion is a judge call per unit: more is a pasted list, not a rubric


class TrajectoryMatch(BaseModel):
    """``match:`` of a rubric criterion: how made and expected calls are compared."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["strict", "unordered", "subset", "superset"] = "strict"
    arguments: Literal["exact", "ignore"] = "exact"
    ignore_keys: list[str] = Field(default_factory=list)
    tolerance: float = Field(default=0.0, ge=0)

    def describe(self) -> str:
        args = "names only" if self.arguments == "ignore" else "arguments exact"
        if self.arguments == "exact" and self.ignore_keys:
            args += " except " + ", ".join(self.ignore_keys)
        if self.arguments == "exact" and self.tolerance:
            args += f", numbers within {self.tolerance:g}"
        return f"tool calls compared with the reference calls ({self.mode}, {args})"


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
            return self._in_range(value, int)
        if isinstance(value, bool):  # JSON's true/false for a yes/no scale, as YAML reads the rubric
            value = "yes" if value else "no"
        by_lower = {label.lower(): label for label in self.labels}
        return by_lower.get(str(value).strip().lower())

    def _in_range(self, value: Any, kind: type[int] | type[float]) -> Any:
        """``value`` read as ``kind`` when it lies on this range (booleans are no numbers here)."""
        if isinstance(value, bool):
            return None
        try:
            number = kind(str(value).strip())
        except ValueError:
            return None
        return number if self.low <= number <= self.high else None  # type: ignore[operator]

    def read_label(self, value: Any) -> float | None:
        """A human label as a number: on a range any number in it (``2.5``: an averaged
        label), else a label's rank (:meth:`score`); ``None`` when off the scale."""
        if self.numeric:
            return self._in_range(value, float)
        label = self.read(value)
        return None if label is None else self.score(label)

    def describe_labels(self) -> str:
        """What :meth:`read_label` accepts, for messages."""
        if self.numeric:
            return f"a number from {self.low} to {self.high} (averaged labels such as 2.5 are fine)"
        return self.describe()

    def label_of(self, score: float) -> str | None:
        """The label a rank stands for (``3.0`` -> ``"yes"``), ``None`` on a range or between ranks."""
        if self.numeric or not float(score).is_integer() or not 1 <= score <= len(self.labels):
            return None
        return self.labels[len(self.labels) - int(score)]

    @property
    def bounds(self) -> tuple[float, float]:
        """The lowest and highest score (ranks for labels), for plots that span the scale."""
        if self.numeric:
            return float(self.low), float(self.high)  # type: ignore[arg-type]
        return 1.0, float(len(self.labels))

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
        if isinstance(value, dict) and set(value) == {"low", "high", "labels"}:  # a Scale as dumped (read back from a checkpoint)
            value = list(value["labels"]) if value["low"] is None else [value["low"], value["high"]]
        if not isinstance(value, list) or len(value) < 2:
            raise ValueError("a scale is [low, high] (integers) or a list of at least two labels, e.g. [yes, no]")
        numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(value) == 2 and len(numbers) == 2 and not all(float(v).is_integer() for v in numbers):
            raise ValueError(f"an integer range needs whole-number bounds, got {value}: use [1, 5] "
                             "(averaged human labels such as 2.5 are still read on it)")
        if len(value) == 2 and len(numbers) == 2:
            value = [int(v) for v in value]
            if value[0] >= value[1]:
                raise ValueError(f"an integer range goes from low to high, got {value}")
            return Scale(low=value[0], high=value[1])
        if any(isinstance(v, float) for v in value):
            raise ValueError(f"labels are words (or whole numbers): {value} mixes in a fraction; "
                             "an integer range is written [low, high]")
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

    def get(self, name: str, level: Level | None = None) -> Criterion:
        return next(c for c in self.criteria if c.name == name and level in (None, c.level))


def dimension(name: str, level: str, shared: bool) -> str:
    """A criterion's name in tables and compare: ``overall (conversation)`` where a
    turn-level criterion is also called ``overall`` (names are unique per level)."""
    return f"{name} ({level})" if shared and level != "turn" else name


def parse_rubric(data: Any, source: str) -> Rubric:
    """A rubric from parsed YAML; errors name ``source``, the criterion and the field."""
    if not isinstance(data, dict) or "criteria" not in data:
        hint = next((did_you_mean(str(k), ["criteria"]) for k in data), "") if isinstance(data, dict) else ""
        raise ConfigError(f"rubric {source}: expected a mapping with a 'criteria' list{hint}")
    extra = sorted(set(data) - {"criteria"})
    if extra:
        raise ConfigError(f"rubric {source}: unknown top-level field '{extra[0]}' (only 'criteria')"
                          + did_you_mean(extra[0], ["criteria"]))
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
            errors = err.errors()
            first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])  # a typo explains the rest
            field = ".".join(str(p) for p in first["loc"]) or "criterion"
            if first["type"] == "extra_forbidden":
                message = unknown_key(field, list(Criterion.model_fields))
            else:
                message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"rubric {source}, {which}, field '{field}': {message}") from None
    _check_names(criteria, source)
    return Rubric(source=source, criteria=criteria)


def _check_names(criteria: list[Criterion], source: str) -> None:
    """A name is unique per unit kind (a turn-level and a conversation-level ``overall``
    may both exist); names that differ only by case or spaces, or thousands of criteria,
    are refused: each is a judge call per unit, and compare would mix them up."""
    if len(criteria) > MAX_CRITERIA:
        raise ConfigError(f"rubric {source}: {len(criteria)} criteria; at most {MAX_CRITERIA} "
                          "(each one is a judge call per unit: split the rubric, or pick some with option 'criteria')")
    seen: dict[tuple[bool, str], str] = {}
    for c in criteria:
        key = (c.level == "turn", "".join(c.name.lower().split()).replace("_", "").replace("-", ""))
        if key in seen:
            first = seen[key]
            which = "used twice" if first == c.name else f"differs from {first!r} only by case or spacing"
            scope = "turn-level" if key[0] else "conversation- and summary-level"
            raise ConfigError(f"rubric {source}, criterion {c.name!r}, field 'name': {which} among the {scope} criteria")
        seen[key] = c.name


def built_in_text(name: str) -> str:
    """The packaged text of a built-in rubric (``conversation/rubrics/<name>.json``)."""
    return resources.files("dialeval.conversation").joinpath("rubrics", f"{name}.json").read_text(encoding="utf-8")


def conversation_rubric(options: Any, metadata: dict[str, Any]) -> Rubric:
    """The rubric a conversation is judged on: the run's ``rubric`` option when given, else the
    conversation's own ``metadata.rubric`` (a :class:`Rubric` handed in, as the simulation hands
    each scenario's; a mapping with ``criteria``; or a path, as its written files name it), else
    the default."""
    own = metadata.get("rubric")
    if "rubric" not in options.model_fields_set:
        if isinstance(own, Rubric):  # one read back from a LangGraph checkpoint holds its criteria as dicts
            return own if all(isinstance(c, Criterion) for c in own.criteria) else Rubric.model_validate(dict(own))
        if isinstance(own, dict):
            return parse_rubric(own, "metadata.rubric")
        if isinstance(own, str) and own:
            return load_rubric(own)
    return load_rubric(str(options.rubric))


def load_rubric(ref: str) -> Rubric:
    """A built-in rubric by name (``dialogue``) or a YAML file by path.

    Every item's nodes call it; the file is read each time, but the same text is parsed
    once (YAML and validation were 2-4 ms per call). Nobody changes a rubric once read."""
    if ref in BUILT_IN:
        text = built_in_text(ref)
        source = f"built-in rubric {ref!r}"
    else:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise ConfigError(f"rubric {ref!r} is neither a built-in rubric ({', '.join(BUILT_IN)}) nor a file")
        text, source = path.read_text(encoding="utf-8"), str(path)
    return _parsed(text, source)


@functools.lru_cache(maxsize=64)
def _parsed(text: str, source: str) -> Rubric:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"rubric {source}: not valid YAML: {err}") from None
    return parse_rubric(data, source)
