"""Why a figure of ``dialeval compare`` (or a report's agreement table) could not be computed, and the footnotes that say so.

Why: ``n/a`` alone reads like a bug or a missing value; where the data cannot give a figure
(exact agreement of averaged human labels, a correlation of constant scores) the table
marks the cell and a footnote under it says why and, where there is one, what gives it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

HUMAN = "human"  # the label of the human-labels column (compare --human)
CORRELATIONS = ("pearson", "spearman", "kendall_tau_b")


def not_computed(entry: dict[str, Any], human_rule: str | None = None) -> dict[str, str]:
    """figure -> why it is ``None`` in one comparison ``entry`` (its ``pairs`` of scores);
    ``human_rule``: how ``compare --human`` combined the annotators (a human side)."""
    pairs = entry.get("pairs") or []
    if not pairs:
        return {}
    sides = {entry["a"]: [p[1] for p in pairs], entry["b"]: [p[2] for p in pairs]}
    out: dict[str, str] = {}
    if entry.get("exact_agreement") is None:
        fractional = [who for who, values in sides.items() if not all(float(v).is_integer() for v in values)]
        whole = ", ".join(fractional) + " has scores that are not whole numbers, so no two scores can be counted equal or one point apart"
        if HUMAN in fractional and human_rule == "mean":
            whole += " (the human labels are the mean of the annotators: option human_rule=majority or median gives whole labels)"
        out["exact_agreement"] = out["adjacent_agreement"] = whole
    why = undefined(sides, 2)
    if why is not None:
        out.update({name: why for name in CORRELATIONS if entry.get(name) is None})
    if entry.get("krippendorff_alpha") is None:
        out["krippendorff_alpha"] = (why if why is not None and len(pairs) < 2 else
                                     "every score of both sides is the same: alpha is undefined (no disagreement to expect)")
    return out


def undefined(sides: Mapping[str, Sequence[float]], least: int) -> str | None:
    """Why a correlation of the ``sides`` (name -> scores of the same units) is undefined:
    fewer than ``least`` units, or a side whose scores are all alike; ``None`` if it is not."""
    n = min((len(values) for values in sides.values()), default=0)
    if n < least:
        return f"{n} shared unit{'s' if n != 1 else ''}: a correlation needs at least {least}"
    constant = [who for who, values in sides.items() if len(set(values)) < 2]
    if constant:
        return " and ".join(constant) + " gives every shared unit the same score: a correlation is undefined"
    return None


class Footnotes:
    """Numbered reasons, one per distinct text, shown once under the table."""

    def __init__(self) -> None:
        self.reasons: dict[str, int] = {}

    def mark(self, reason: str) -> str:
        return f"n/a [{self.reasons.setdefault(reason, len(self.reasons) + 1)}]"

    def lines(self) -> list[str]:
        return ["", *(f"[{n}] {reason}." for reason, n in self.reasons.items())] if self.reasons else []
