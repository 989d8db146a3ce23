"""Validation errors as one line each, naming the field; for an unknown key, the valid keys
and the closest one (a typo shows its fix). Used by the run config, benchmark options,
rubrics, scenarios and gate rules alike."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from dialeval.judge_spec import Cascade, Ensemble


def _model_at(model: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that holds the field at ``path`` (dict keys and list indexes skipped)."""
    current: Any = model
    for part in path:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = _inner_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: Any) -> Any:
    """``ModelSettings`` out of ``ModelSettings | None`` or ``dict[str, ModelSettings]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def did_you_mean(word: str, valid: Iterable[str]) -> str:
    """`` (did you mean 'judge'?)`` for the closest valid name, or ``""``: a typo shows its fix."""
    import difflib

    close = difflib.get_close_matches(word, list(valid), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unknown_key(key: str, valid: list[str]) -> str:
    """``unknown key; valid: a, b, c (did you mean 'b'?)``."""
    if not valid:
        return "unknown key; none is accepted here"
    return f"unknown key; valid: {', '.join(valid)}" + did_you_mean(key, valid)


def field_message(model: type[BaseModel], e: Any) -> str:
    """pydantic's message, or for an unknown key the valid keys and the closest one."""
    loc, tagged = _untagged(e["loc"])
    if e["type"] == "extra_forbidden" and tagged is not None and len(loc) == 3:  # models.<role>.<key> of an ensemble/cascade
        return unknown_key(str(loc[-1]), list(tagged.model_fields))
    e = {**e, "loc": loc}
    if e["type"] == "extra_forbidden" and e["loc"]:
        holder = _model_at(model, tuple(p for p in e["loc"][:-1] if not isinstance(p, int)))
        if holder is None and len(e["loc"]) >= 2:  # a dict of models: models.<role>.<key>
            holder = _model_at(model, tuple(e["loc"][:-2]))
        if holder is not None:
            return unknown_key(str(e["loc"][-1]), list(holder.model_fields))
    return str(e["msg"]).removeprefix("Value error, ")


def _untagged(loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], type[BaseModel] | None]:
    """``loc`` without the union tag pydantic puts after ``models.<role>`` (``model``,
    ``ensemble``, ``cascade``), and the class an ensemble's or cascade's tag names."""
    if len(loc) >= 3 and loc[0] == "models" and loc[2] in ("model", "ensemble", "cascade"):
        tagged: dict[str, type[BaseModel]] = {"ensemble": Ensemble, "cascade": Cascade}
        return loc[:2] + loc[3:], tagged.get(str(loc[2]))
    return tuple(loc), None


def describe_error(err: ValidationError, model: type[BaseModel] = BaseModel) -> str:
    """Every error of ``err`` on one line, each naming its field (unknown keys: the valid ones)."""
    lines = []
    for e in err.errors():
        where = ".".join(str(p) for p in _untagged(e["loc"])[0]) or "(top level)"
        lines.append(f"field '{where}': {field_message(model, e)}")
    return "; ".join(lines)
