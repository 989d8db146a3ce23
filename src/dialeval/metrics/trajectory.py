"""Tool-call trajectories compared with reference calls, without a model.

Modes (as agentevals names them): ``strict`` the same calls in the same order;
``unordered`` the same calls in any order; ``subset`` every call made is one of the
reference calls (nothing extra); ``superset`` every reference call was made (extras
allowed). Calls pair one to one (a reference call is used once), found as a maximum
matching (scipy's assignment solver). Arguments compare exactly, with keys to ignore
(at any depth) and numbers within an absolute tolerance, or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

import numpy as np

from dialeval.jsonsafe import parsed

Mode = Literal["strict", "unordered", "subset", "superset"]
ArgumentsRule = Literal["exact", "ignore"]


@dataclass(frozen=True)
class Call:
    """A tool call as compared: its name and its arguments (parsed JSON, or text)."""

    name: str
    arguments: Any = field(default_factory=dict)


@dataclass(frozen=True)
class Rule:
    """How two calls' arguments are compared."""

    arguments: ArgumentsRule = "exact"
    ignore_keys: frozenset[str] = frozenset()
    tolerance: float = 0.0  # numbers equal when |a - b| <= tolerance


@dataclass(frozen=True)
class Match:
    """The outcome: matched or not, the (made, expected) index pairs, what was missing or extra."""

    matched: bool
    pairs: list[tuple[int, int]]
    missing: list[int]  # reference calls no made call matched
    extra: list[int]  # made calls that matched no reference call

    def explain(self, made: Sequence[Call], expected: Sequence[Call], mode: Mode) -> str:
        """One sentence a person reads beside the verdict."""
        said = f"{len(self.pairs)} of {len(expected)} expected calls matched ({mode})"
        if self.missing:
            said += "; missing: " + ", ".join(expected[i].name for i in self.missing)
        if self.extra:
            said += "; not expected: " + ", ".join(made[i].name for i in self.extra)
        if mode == "strict" and not self.matched and not self.missing and not self.extra:
            said += "; the order differs"
        return said


def values_equal(a: Any, b: Any, rule: Rule) -> bool:
    """JSON values equal under ``rule``: dict keys in ``ignore_keys`` skipped, numbers within tolerance."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= rule.tolerance
    if isinstance(a, dict) and isinstance(b, dict):
        keys_a = {k for k in a if k not in rule.ignore_keys}
        keys_b = {k for k in b if k not in rule.ignore_keys}
        return keys_a == keys_b and all(values_equal(a[k], b[k], rule) for k in keys_a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_equal(x, y, rule) for x, y in zip(a, b))
    return bool(a == b)


def calls_equal(made: Call, expected: Call, rule: Rule) -> bool:
    if made.name != expected.name:
        return False
    return rule.arguments == "ignore" or values_equal(parsed(made.arguments), parsed(expected.arguments), rule)


def match(made: Sequence[Call], expected: Sequence[Call], mode: Mode, rule: Rule = Rule()) -> Match:
    """Compare the calls made with the expected ones under ``mode`` and ``rule``."""
    if mode == "strict":
        pairs = [(i, i) for i in range(min(len(made), len(expected))) if calls_equal(made[i], expected[i], rule)]
        same = len(made) == len(expected) and len(pairs) == len(made)
        if not same:  # say what is missing and extra as the unordered pairing sees it
            loose = match(made, expected, "unordered", rule)
            return Match(False, loose.pairs, loose.missing, loose.extra)
        return Match(True, pairs, [], [])
    pairs = []
    if made and expected:
        equal = np.array([[calls_equal(m, e, rule) for e in expected] for m in made], dtype=float)
        from scipy.optimize import linear_sum_assignment  # lazy: scipy takes half a second to import

        rows, cols = linear_sum_assignment(equal, maximize=True)
        pairs = sorted((int(r), int(c)) for r, c in zip(rows, cols) if equal[r, c])
    missing = sorted(set(range(len(expected))) - {c for _, c in pairs})
    extra = sorted(set(range(len(made))) - {r for r, _ in pairs})
    matched = {"unordered": not missing and not extra, "subset": not extra, "superset": not missing}[mode]
    return Match(matched, pairs, missing, extra)
