"""Dry runs' stand-in answers: the smallest schema-valid value of any output schema."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


def placeholder_for(schema: type[BaseModel]) -> BaseModel:
    """A schema-valid stand-in answer for dry runs: smallest values, empty lists."""
    values: dict[str, Any] = {}
    for name, f in schema.model_fields.items():
        if not f.is_required():
            continue
        values[name] = _placeholder_value(f.annotation, f.metadata)
    return schema.model_validate(values)


def _placeholder_value(annotation: Any, metadata: list[Any]) -> Any:
    import typing

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return args[0]
    if origin in (list, tuple, set):
        return []
    if origin is dict:
        return {}
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return _placeholder_value(next(a for a in args if a is not type(None)), metadata)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return placeholder_for(annotation)
    if annotation is bool:
        return False
    if annotation in (int, float):
        low = next((getattr(m, "ge", None) or getattr(m, "gt", None) for m in metadata if hasattr(m, "ge") or hasattr(m, "gt")), 0)
        return annotation(low or 0)
    if annotation is str:
        return "dry-run"
    return None
