"""Tolerant-but-honest parsing of model answers into pydantic objects.

Judges answer in many shapes: bare JSON, JSON inside prose or code fences, Python dict
strings, or a closing ``So rating=2``. We accept all of those, never execute the text
(``json`` and ``ast.literal_eval`` only), and raise :class:`ParseFailure` with a reason
instead of guessing a value.

One verdict rule for every benchmark (see :func:`parse_answer`): an answer holds exactly
one verdict. Two objects that disagree (a judge's verdict and a ``{"score": 5}`` it
quotes from the material, before or after) make the answer unparsed, because neither
position tells which is the judge's own. Numbers are read as
pydantic reads an ``int`` field (:func:`read_integer`): ``4``, ``4.0``, ``"4"``; never a
boolean, a fraction or digits other than ASCII (full-width ``４``).
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

T = TypeVar("T", bound=BaseModel)

MAX_ANSWER_CHARS = 64 * 1024  # longer answers are not parsed (and are stored cut)
MAX_DEPTH = 64  # deeper brackets are not a verdict; they are never handed to json/ast

_FENCE = re.compile(r"```(?:json|python|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_SEPARATORS = re.compile(r"[\s_\-]")
_KEY_VALUE = re.compile(r"""(?P<key>[A-Za-z_][\w\- ]{0,40}?)\s*(?:=|:)\s*(?P<value>"[^"\n]*"|'[^'\n]*'|[^\n,;]+)""")


class ParseFailure(ValueError):
    """The answer holds no value that fits the schema; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _balanced_objects(text: str) -> list[tuple[int, str]]:
    """Every top-level ``{...}`` span in ``text`` with its end offset, in order (strings
    are respected); spans nested deeper than :data:`MAX_DEPTH` are left out."""
    spans: list[tuple[int, str]] = []
    depth = 0
    deepest = 0
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
        elif ch in "{[":
            if depth == 0:
                if ch == "[":
                    continue
                start = i
                deepest = 0
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]" and depth > 0:
            depth -= 1
            if depth == 0 and deepest <= MAX_DEPTH:
                spans.append((i + 1, text[start : i + 1]))
    return spans


def _load_mapping(candidate: str) -> dict[str, Any] | None:
    """Read a JSON or Python-literal mapping; ``None`` when it is neither."""
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            value = json.loads(attempt)
        except (ValueError, RecursionError):
            try:
                value = ast.literal_eval(attempt)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
        if isinstance(value, dict):
            return value
    return None


def _normalise_keys(data: dict[str, Any], schema: type[BaseModel]) -> dict[str, Any]:
    """Match keys to field names case- and separator-insensitively (``Rating`` -> ``rating``)."""
    wanted = _field_names(schema)
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[wanted.get(_canon(str(key)), key)] = value
    return out


@lru_cache(maxsize=512)
def _field_names(schema: type[BaseModel]) -> dict[str, str]:
    """Canonical key -> field name (aliases included), once per schema."""
    wanted = {_canon(name): name for name in schema.model_fields}
    for name, field in schema.model_fields.items():
        if field.alias:
            wanted[_canon(field.alias)] = name
    return wanted


@lru_cache(maxsize=4096)
def _canon(key: str) -> str:
    return _SEPARATORS.sub("", key).lower()


_INTEGER: TypeAdapter[int] = TypeAdapter(int)


def read_integer(value: Any) -> int | None:
    """``value`` as an integer under the rule every benchmark shares, else ``None``.

    It is pydantic's reading of an ``int`` field (so schema fields and hand-read scores
    agree): ``7``, ``7.0``, ``"7"``, ``"7.0"`` count; a boolean, ``7.5``, a word or
    digits outside ASCII (``"７"``, ``"٧"``) do not.
    """
    if isinstance(value, bool) or (isinstance(value, str) and not value.isascii()):
        return None
    try:
        return _INTEGER.validate_python(value)
    except ValidationError:
        return None


def _key_values(text: str, schema: type[BaseModel]) -> dict[str, Any]:
    """Collect ``key=value`` / ``key: value`` pairs for schema fields. A verdict field given
    two different values that both fit is a :class:`ParseFailure` (the one verdict rule);
    otherwise a fitting value beats prose that merely starts with the key, and free text
    (a rationale) keeps its last value."""
    fields = {_canon(n): n for n in schema.model_fields}
    found: dict[str, list[str]] = {}
    position = 0
    while match := _KEY_VALUE.search(text, position):
        key = _canon(match.group("key").split()[-1]) if match.group("key").split() else ""
        if key not in fields:  # "it wrote: score=5" still holds a pair after the colon
            position = match.start("value")
            continue
        position = match.end()
        raw = match.group("value").strip().rstrip(".").strip()
        if raw[:1] in "\"'" and raw[-1:] == raw[:1] and len(raw) >= 2:
            raw = raw[1:-1]
        found.setdefault(fields[key], []).append(raw)
    chosen: dict[str, Any] = {}
    for name, raws in found.items():
        field = schema.model_fields[name]
        if field.annotation is str:
            chosen[name] = raws[-1]
            continue
        fitting = list(dict.fromkeys(r for r in raws if _fits(schema, name, r)))
        if len(fitting) > 1:
            raise ParseFailure(f"field '{name}' is given {len(fitting)} different values ({', '.join(fitting)}); give one verdict")
        chosen[name] = fitting[0] if fitting else raws[-1]
    return chosen


def _fits(schema: type[BaseModel], name: str, raw: str) -> bool:
    """Whether ``raw`` alone is a valid value of field ``name``."""
    try:
        _field_adapter(schema, name).validate_python(raw)
    except ValidationError:
        return False
    return True


@lru_cache(maxsize=256)
def _field_adapter(schema: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """The validator of one field, built once per schema and field: building it costs
    more than a whole judge call's other parsing (``So rating=2`` endings read it each time)."""
    field = schema.model_fields[name]
    return TypeAdapter(Annotated[field.annotation, field])  # type: ignore[arg-type]


def _booleans_as_numbers(data: Any, annotation: Any, where: str) -> str | None:
    """Where ``data`` puts a JSON boolean in a numeric field of ``annotation``, if anywhere.

    Pydantic reads ``true`` as 1 in an ``int`` field; a judge that answers ``"score":
    true`` gave no score, so every schema gets this check without declaring it.
    """
    import types
    import typing

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _booleans_as_numbers(data, args[0], where)
    if origin in (typing.Union, types.UnionType):
        if isinstance(data, bool) and bool not in args and any(a in (int, float) for a in args):
            return where
        options = [a for a in args if a is not type(None)]
        return _booleans_as_numbers(data, options[0], where) if len(options) == 1 else None
    if annotation in (int, float):
        return where if isinstance(data, bool) else None
    if origin in (list, tuple, set, frozenset) and isinstance(data, list) and args:
        for index, element in enumerate(data):
            found = _booleans_as_numbers(element, args[0], f"{where}.{index}")
            if found:
                return found
        return None
    if origin is dict and isinstance(data, dict) and len(args) == 2:
        for key, element in data.items():
            found = _booleans_as_numbers(element, args[1], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(data, dict):
        data = _normalise_keys(data, annotation)
        for name, field in annotation.model_fields.items():
            if name in data:
                found = _booleans_as_numbers(data[name], field.annotation, f"{where}.{name}" if where else name)
                if found:
                    return found
    return None


def _validate(data: dict[str, Any], schema: type[T]) -> T:
    boolean = _booleans_as_numbers(data, schema, "")
    if boolean:
        raise ParseFailure(f"field '{boolean}': a boolean is not a number")
    try:
        return schema.model_validate(_normalise_keys(data, schema))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise ParseFailure(f"field '{where}': {first['msg']}") from None


def _candidates(text: str) -> list[tuple[int, str]]:
    """Fenced blocks and top-level ``{...}`` spans, each with its end offset."""
    found = [(m.end(), m.group(1)) for m in _FENCE.finditer(text)]
    found += _balanced_objects(text)
    return sorted(found, key=lambda c: c[0])


def _answers_schema(mapping: dict[str, Any], schema: type[BaseModel]) -> bool:
    if not schema.model_fields:  # free-form objects (a note): any mapping is an answer
        return True
    return bool(_normalise_keys(mapping, schema).keys() & schema.model_fields.keys())


def _text_fields(schema: type[BaseModel]) -> set[str]:
    """Free-text fields (a rationale): two readings may word them differently."""
    return {n for n, f in schema.model_fields.items() if f.annotation is str}


def _verdict_of(value: BaseModel) -> str:
    """What two readings must share to be the same verdict: every field but free text."""
    return json.dumps(value.model_dump(exclude=_text_fields(value.__class__)), sort_keys=True, default=str)


def _agrees(mapping: dict[str, Any], verdict: BaseModel) -> bool:
    """Whether an object that does not fit (say, a restated bare score) says what ``verdict`` says."""
    dumped = verdict.model_dump()
    text = _text_fields(verdict.__class__)
    return all(
        str(dumped[k]) == str(v) for k, v in mapping.items() if k in verdict.__class__.model_fields and k not in text
    )


def _one_verdict(mappings: list[dict[str, Any]], schema: type[T]) -> tuple[T | None, ParseFailure | None]:
    """(the single verdict among ``mappings`` or ``None``, why an attempt did not fit).

    Every mapping that names a field of the schema is an attempt at the verdict; so is
    one that fits without naming one where the schema has a required field (MMDU's bare
    score dictionary) or where no mapping names a field. Attempts that fit must be one
    verdict, and one that does not fit must say the same; anything else is a
    :class:`ParseFailure`.
    """
    strict = any(f.is_required() for f in schema.model_fields.values())
    naming = any(_answers_schema(m, schema) for m in mappings)
    verdicts: dict[str, T] = {}
    misfits: list[tuple[dict[str, Any], ParseFailure]] = []
    for mapping in mappings:
        names = _answers_schema(mapping, schema)
        try:
            value = _validate(mapping, schema)
        except ParseFailure as failure:
            if names:
                misfits.append((_normalise_keys(mapping, schema), failure))
            continue
        if names or strict or not naming:
            verdicts.setdefault(_verdict_of(value), value)
    if len(verdicts) > 1:
        shown = "; ".join(list(verdicts)[:3])
        raise ParseFailure(f"{len(verdicts)} different verdicts in one answer ({shown}); give exactly one")
    verdict = next(iter(verdicts.values()), None)
    if verdict is None:
        return None, misfits[0][1] if misfits else None
    for mapping, misfit in misfits:
        if not _agrees(mapping, verdict):
            raise ParseFailure(f"two different verdicts in one answer ({_verdict_of(verdict)}, and one where {misfit.reason}); give exactly one")
    return verdict, None


def parse_answer(text: str, schema: type[T]) -> T:
    """Turn a model answer into ``schema`` or raise :class:`ParseFailure`.

    The one verdict rule: every JSON or Python-literal object in the answer (fenced or
    inline) that names a field of the schema is an attempt at the verdict, and the
    answer must hold exactly one verdict (repeats count once; free-text fields such as a
    rationale may differ). Two different verdicts are unparsed whatever their order, so
    a score quoted from the material never replaces the judge's own, before or after
    it, and a draft never stands in for a final answer that does not fit. Without any
    such object, ``key=value`` endings are read under the same rule. A text field the answer does not fill in a key=value ending (such as a
    rationale) takes the prose that precedes the first key. Answers longer than
    :data:`MAX_ANSWER_CHARS` are not read at all.
    """
    if not text or not text.strip():
        raise ParseFailure("empty answer")
    if len(text) > MAX_ANSWER_CHARS:
        raise ParseFailure(f"answer too long to read ({len(text)} characters; limit {MAX_ANSWER_CHARS})")
    mappings = [m for _, c in _candidates(text) if (m := _load_mapping(c.strip())) is not None]
    found, last_error = _one_verdict(mappings, schema)
    if found is not None:
        return found
    if last_error is not None:
        raise last_error
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
