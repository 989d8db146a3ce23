"""Random answers valid under a JSON schema (the subset pydantic and the agents write), for
property tests: whatever a model that follows an agent's schema may say, its parser must take.

Draws favour the edges (bounds, empty and longest lists, each enum value, omitted optional
fields) where a checker stricter than its schema shows first.
"""

from __future__ import annotations

import random
import re
import string
from typing import Any

WORDS = ["yes", "no", "a", "the order", "1", "x" * 30, "Ünïcode ✓", "0", "-", "None"]


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = {**root.get("$defs", {}).get(name, {}), **{k: v for k, v in schema.items() if k != "$ref"}}
    if "allOf" in schema and len(schema["allOf"]) == 1:
        schema = {**_resolve(schema["allOf"][0], root), **{k: v for k, v in schema.items() if k != "allOf"}}
    return schema


def _string(schema: dict[str, Any], rng: random.Random) -> str:
    low, high = schema.get("minLength", 0), schema.get("maxLength", 60)
    pattern = schema.get("pattern")
    for _ in range(200):
        if rng.random() < 0.5:
            text = rng.choice(WORDS)
        else:
            text = "".join(rng.choice(string.ascii_letters + " .,!?0123456789") for _ in range(rng.randint(0, 40)))
        text = text[:high]
        if len(text) < low:
            text += "a" * (low - len(text))
        if pattern is None or re.search(pattern, text):
            return text
    raise ValueError(f"no draw found for pattern {pattern!r}")


def _number(schema: dict[str, Any], rng: random.Random, integer: bool) -> int | float:
    low = schema.get("minimum", schema["exclusiveMinimum"] + (1 if integer else 1e-6) if "exclusiveMinimum" in schema else -1000)
    high = schema.get("maximum", schema["exclusiveMaximum"] - (1 if integer else 1e-6) if "exclusiveMaximum" in schema else 1000)
    if integer:
        return rng.choice([int(low), int(high), rng.randint(int(low), int(high))])
    return rng.choice([float(low), float(high), rng.uniform(low, high)])


def draw(schema: dict[str, Any], rng: random.Random, root: dict[str, Any] | None = None) -> Any:
    """One value valid under ``schema``."""
    root = root or schema
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return draw(rng.choice(schema[key]), rng, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "object" or (kind is None and "properties" in schema):
        out: dict[str, Any] = {}
        required = set(schema.get("required", []))
        for name, sub in schema.get("properties", {}).items():
            if name in required or rng.random() < 0.5:
                out[name] = draw(sub, rng, root)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and rng.random() < 0.5:
            out[_string({"maxLength": 12, "minLength": 1}, rng)] = draw(extra, rng, root)
        return out
    if kind == "array":
        low, high = schema.get("minItems", 0), schema.get("maxItems", low + 4 if (low := schema.get("minItems", 0)) else 4)
        prefix = schema.get("prefixItems", [])
        n = rng.choice([low, high, rng.randint(low, high)])
        items = [draw(prefix[i], rng, root) if i < len(prefix) else draw(schema.get("items", {}), rng, root) for i in range(n)]
        if schema.get("uniqueItems"):
            items = list({repr(v): v for v in items}.values())
        return items
    if kind == "string":
        return _string(schema, rng)
    if kind == "integer":
        return _number(schema, rng, True)
    if kind == "number":
        return _number(schema, rng, False)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return rng.choice(["text", 3, None, True])  # no type: any JSON value
