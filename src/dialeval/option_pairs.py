"""The ``--option KEY=VALUE`` pairs every command takes, read once the same way."""

from __future__ import annotations

import json


def option_pairs(pairs: list[str]) -> dict[str, object]:
    """``--option KEY=VALUE`` pairs as a dict, each value read as JSON when it is JSON (else the text)."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            from dialeval.errors import ConfigError

            raise ConfigError(f"--option {pair!r}: expected KEY=VALUE (a JSON value, e.g. --option {pair}=2)")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out
