"""Answer schemas narrowed for one call, so that a model that follows the schema says only
what the call's checker accepts (see tests/test_agent_schemas.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dialeval.agents.base import schema_with


def numbered(schema: type[BaseModel], field: str, key: str, n: int) -> dict[str, Any]:
    """``schema``'s JSON schema with list ``field`` holding exactly ``n`` items whose ``key``
    is 1..n in order: what a checker of "one verdict per fact, numbered" accepts."""
    out = schema_with(schema)
    ref = out["properties"][field]["items"]["$ref"].rsplit("/", 1)[-1]
    item = out["$defs"][ref]
    items = [{**item, "properties": {**item["properties"], key: {"const": i}}} for i in range(1, n + 1)]
    out["properties"][field].update({"prefixItems": items, "items": False, "minItems": n, "maxItems": n})
    return out
