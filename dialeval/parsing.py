"""Tolerant-but-honest parsing of model answers into pydantic objects.

Judges answer in many shapes: bare JSON, JSON inside prose or code fences, Python dict
strings, or a closing ``So rating=2``. We accept all of those, never execute the text
(``json`` and ``ast.literal_eval`` only), and raise :class:`ParseFailure` with a reason
instead of guessing a value.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|python|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_KEY_VALUE = re.compile(r"""(?P<key>[A-Za-z_][\w\- ]{0,40}?)\s*(?:=|:)\s*(?P<value>"[^"\n]*"|'[^'\n]*'|[^\n,;]+)""")


class ParseFailure(ValueError):
    """The answer holds no value that fits the schema; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` span in ``text``, in order (strings are respected)."""
    spans: list[str] = []
    depth = 0
    start = -1
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'" and depth > 0:
            # an apostrophe inside prose-like values must not open a string forever
            if ch == "'" and i > 0 and text[i - 1].isalnum():
                continue
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def _load_mapping(candidate: str) -> dict[str, Any] | None:
    """Read a JSON or Python-literal mapping; ``None`` when it is neither."""
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            value = json.loads(attempt)
        except ValueError:
            try:
                value = ast.literal_eval(attempt)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
        if isinstance(value, dict):
            return value
    return None


def _normalise_keys(data: dict[str, Any], schema: type[BaseModel]) -> dict[str, Any]:
    """Match keys to field names case- and separator-insensitively (``Rating`` -> ``rating``)."""
    wanted = {_canon(name): name for name in schema.model_fields}
    for name, field in schema.model_fields.items():
        if field.alias:
            wanted[_canon(field.alias)] = name
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[wanted.get(_canon(str(key)), key)] = value
    return out


def _canon(key: str) -> str:
    return re.sub(r"[\s_\-]", "", key).lower()


def _key_values(text: str, schema: type[BaseModel]) -> dict[str, Any]:
    """Collect ``key=value`` / ``key: value`` pairs for schema fields; the last one wins."""
    fields = {_canon(n): n for n in schema.model_fields}
    found: dict[str, Any] = {}
    for match in _KEY_VALUE.finditer(text):
        key = _canon(match.group("key").split()[-1]) if match.group("key").split() else ""
        if key not in fields:
            continue
        raw = match.group("value").strip().rstrip(".").strip()
        if raw[:1] in "\"'" and raw[-1:] == raw[:1] and len(raw) >= 2:
            raw = raw[1:-1]
        found[fields[key]] = raw
    return found


def _validate(data: dict[str, Any], schema: type[T]) -> T:
    try:
        return schema.model_validate(_normalise_keys(data, schema))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise ParseFailure(f"field '{where}': {first['msg']}") from None


def parse_answer(text: str, schema: type[T]) -> T:
    """Turn a model answer into ``schema`` or raise :class:`ParseFailure`.

    Order: fenced blocks, then every ``{...}`` span (last first, since models tend to
    restate their final answer at the end), then ``key=value`` endings. A text field the
    answer does not fill in a key=value ending (such as a rationale) takes the prose that
    precedes the first key.
    """
    if not text or not text.strip():
        raise ParseFailure("empty answer")
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    candidates += list(reversed(_balanced_objects(text)))
    last_error: ParseFailure | None = None
    for candidate in candidates:
        mapping = _load_mapping(candidate.strip())
        if mapping is None:
            continue
        try:
            return _validate(mapping, schema)
        except ParseFailure as failure:
            last_error = failure
    pairs = _key_values(text, schema)
    if pairs:
        missing_text = [
            n
            for n, f in schema.model_fields.items()
            if n not in pairs and f.annotation is str and f.is_required()
        ]
        if len(missing_text) == 1:
            first_key = min(
                (m.start() for m in _KEY_VALUE.finditer(text) if _canon(m.group("key").split()[-1]) in {_canon(k) for k in pairs}),
                default=len(text),
            )
            pairs[missing_text[0]] = text[:first_key].strip()
        try:
            return _validate(pairs, schema)
        except ParseFailure as failure:
            last_error = failure
    if last_error is not None:
        raise last_error
    raise ParseFailure("no JSON object or key=value pair for the expected fields")


def schema_hint(schema: type[BaseModel]) -> str:
    """A compact description of the expected JSON, for corrective retry messages."""
    props = schema.model_json_schema().get("properties", {})
    parts = []
    for name, spec in props.items():
        kind = spec.get("type") or ("one of " + "/".join(map(str, spec["enum"])) if "enum" in spec else "value")
        parts.append(f'"{name}": <{kind}>')
    return "{" + ", ".join(parts) + "}"
