"""One chat completion through the OpenAI SDK's client with only the work the answer needs.

``chat.completions.create`` walks the request body against its typed parameters and
builds typed objects from the answer, which LangChain then dumps back into a dict; with
a fast server these steps cost more CPU than the HTTP request. :func:`send_body` sends a
body that is already plain JSON as it is and returns the answer as the dict LangChain
would have dumped, so the caller (``backends/openai.py``'s direct path) gets the same
message. Retries, time-outs, the HTTP client's hooks (429s reach the adaptive limit),
auth headers and error types stay the SDK's own: the request goes through its ``post``.
"""

from __future__ import annotations

import functools
import json
import typing
from typing import Any

# What ``chat.completions.create`` adds to the HTTP call: bearer auth only (not the admin key).
_CREATE_OPTIONS: dict[str, Any] = {"security": {"bearer_auth": True}}


async def send_body(client: Any, body: dict[str, Any]) -> dict[str, Any] | str:
    """The answer to ``client.chat.completions.create(**body)``, as ``ChatCompletion.model_dump()``
    would give it (a non-JSON answer, e.g. an HTML page, as its text, as the SDK's parse gives it).

    For a body of dicts, lists, strings and numbers, ``create``'s transform returns it
    unchanged (``tests/test_openai_direct.py`` checks this for the bodies dialeval sends),
    so ``post`` (the SDK's documented call for a body sent as it is) puts the same bytes
    on the wire.
    """
    from dialeval.models.backends.http import sdk_http

    response = await client.post("/chat/completions", body=body, cast_to=sdk_http().Response, options=_CREATE_OPTIONS)
    try:
        answer = json.loads(response.content)
    except ValueError:
        return response.text
    if not isinstance(answer, dict):
        return response.text
    return _dumped(answer, _completion_type())


@functools.lru_cache(maxsize=1)
def _completion_type() -> type:
    from openai.types.chat import ChatCompletion

    return ChatCompletion


def _dumped(value: Any, annotation: Any) -> Any:
    """``value`` (JSON of ``annotation``) with every field a pydantic dump would add: the
    model's missing fields as ``None``, also in nested models and lists of them; extra
    keys kept (the SDK keeps them too)."""
    fields = _model_fields(annotation)
    if fields is not None:
        if not isinstance(value, dict):
            return value
        out = dict(value)
        for name, inner in fields:
            if name not in out:
                out[name] = None
            elif out[name] is not None and inner is not None:
                out[name] = _dumped(out[name], inner)
        return out
    if isinstance(value, list):
        item = _list_item(annotation)
        return [_dumped(v, item) for v in value] if item is not None else value
    return value


@functools.lru_cache(maxsize=None)
def _model_fields(annotation: Any) -> tuple[tuple[str, Any], ...] | None:
    """``(field, nested annotation worth descending into or None)`` of a pydantic model, else None."""
    from pydantic import BaseModel

    model = _unwrapped(annotation)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    out = []
    for name, info in model.model_fields.items():
        declared: Any = info.annotation
        inner = _unwrapped(declared)
        nested = _model_fields(inner) is not None or _list_item(inner) is not None
        out.append((name, inner if nested else None))  # a dump uses field names, not aliases
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _list_item(annotation: Any) -> Any:
    """The model a ``List[Model]`` holds (one the dump must fill in), else None."""
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation) or (None,)
        item = _unwrapped(item)
        return item if _model_fields(item) is not None else None
    return None


@functools.lru_cache(maxsize=None)
def _unwrapped(annotation: Any) -> Any:
    """``Optional[X]`` -> ``X``; a union of several models stays as it is (not descended)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        return args[0] if len(args) == 1 else annotation
    if origin is typing.Annotated:
        return _unwrapped(args[0])
    return annotation
